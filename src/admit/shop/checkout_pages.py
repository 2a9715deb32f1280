"""The checkout form: each position's questions and attendee details, the buyer's e-mail, the
invoice address (with "update prices": the cart priced for that address, reverse charge
shown before the binding order), the terms and the payment method.

The form is a client of ``checkout.checkout`` like the headless API; a refusal shows every
problem as sentences with the buyer's input kept, and rolls the request's transaction back.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from admit.db import utcnow
from admit.events.settings import value
from admit.kit.http.context import Session, public_base_url
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.i18n import localized
from admit.models import Event
from admit.payments import providers
from admit.shop import (
    address,
    checkout,
    checkout_accounts,
    countries,
    file_answers,
    i18n,
    questions,
)
from admit.shop import cart as carts
from admit.shop.multipart import Multipart, posted_form
from admit.shop.pages import Refused, _cart_key, _event, sentences
from admit.shop.render import base_context, language
from admit.shop.render import page as render_page
from admit.shop.settings import CHECKOUT_TEXT, TERMS_URL
from admit.web.forms import Pairs, every, first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
S = "/{organizer}/{event}"


async def _checkout_page(
    web: Page,
    event: Event,
    organizer: str,
    *,
    status: int = 200,
    errors: list[str] | None = None,
    kept: dict[str, Any] | None = None,
    field_errors: dict[str, str] | None = None,
    kept_files: dict[str, str] | None = None,
) -> Response:
    now = utcnow()
    kept = kept or {}
    typed = address.from_form([(k, v[0]) for k, v in kept.items() if v])
    buyer = address.buyer_of(event, typed)
    cart_id = web.web.get(_cart_key(event))
    cart = (
        await carts.view(web.session, event, cart_id, now, buyer=buyer)
        if carts.valid_cart_id(cart_id)
        else None
    )
    if cart is None or not cart.lines:
        web.web.flash("Your cart is empty: choose your tickets first.")
        return web.redirect(f"/{organizer}/{event.slug}/")
    asked = await questions.load(web.session, event)
    per_item = {
        line.position.id: [
            questions.describe(q, items) for q, items in asked if line.item.id in items
        ]
        for line in cart.lines
    }
    for line in cart.lines:
        mine = [q for q, items in asked if line.item.id in items]
        links = questions.dependency_fields(mine, f"q_{line.position.id}_")
        for described in per_item[line.position.id]:
            described["depends"] = links.get(described["id"])
    lang = language(web, event)
    account = await checkout_accounts.state(web, event, organizer, cart, lang)
    if account.customer is not None and not kept.get("email"):
        kept = {**kept, "email": [account.customer.email], "email_repeat": [account.customer.email]}
    methods = [p for p in providers.offered(event, cart.total)] if cart.total > 0 else []
    # the method the form shows checked (the buyer's, else the first): its fee is in the total
    wanted = (kept.get("payment") or [""])[0]
    chosen = wanted if any(m.identifier == wanted for m in methods) else None
    chosen = chosen or (methods[0].identifier if methods else None)
    return render_page(
        web,
        "checkout.html",
        status,
        **base_context(event, organizer),
        cart=cart,
        now=now,
        questions=per_item,
        methods=methods,
        chosen=chosen,
        names_asked=value(event, "attendee_names_asked"),
        names_required=value(event, "attendee_names_required"),
        emails_asked=value(event, "attendee_emails_asked"),
        emails_required=value(event, "attendee_emails_required"),
        terms_url=value(event, TERMS_URL),
        checkout_text=localized(value(event, CHECKOUT_TEXT), "en"),
        invoice=address.asked(event),
        countries=countries.choices(),
        errors=errors or [],
        kept=kept,
        field_errors=field_errors or {},
        kept_files=kept_files or {},
        accept=file_answers.ACCEPT,
        has_files=any(q["type"] == "F" for asked in per_item.values() for q in asked),
        account=account,
    )


@router.get(f"{S}/checkout/")
async def checkout_form(organizer: str, event: str, request: Request, session: Session) -> Response:
    web = await Page.load(request, session)
    found = await _event(session, organizer, event)
    if found is None:
        return web.not_found()
    return await _checkout_page(web, found, organizer)


def _details(
    pairs: list[tuple[str, str]],
    cart: carts.Cart,
    asked: dict[int, list[dict[str, Any]]],
    files: dict[int, list[file_answers.FileAnswer]],
    memberships: dict[int, int],
) -> list[checkout.PositionDetails]:
    from admit.catalog.questions.answers import AnswerIn

    found = []
    for line in cart.lines:
        pid = line.position.id
        answers = []
        for q in asked.get(pid, []):
            field = f"q_{pid}_{q['id']}"
            if q["type"] == "F":
                continue
            if q["type"] in ("C", "M"):
                chosen = [int(v) for v in every(pairs, field) if v.isdigit()]
                if chosen:
                    answers.append(AnswerIn(question=q["id"], options=chosen))
            elif q["type"] == "B":
                answers.append(
                    AnswerIn(question=q["id"], answer="True" if first(pairs, field) else "False")
                )
            elif first(pairs, field).strip():
                answers.append(
                    AnswerIn(question=q["id"], answer=first(pairs, field).strip()[:5000])
                )
        found.append(
            checkout.PositionDetails(
                pid,
                first(pairs, f"name_{pid}").strip()[:255] or None,
                first(pairs, f"email_{pid}").strip()[:254] or None,
                answers,
                files.get(pid, []),
                used_membership=memberships.get(pid),
            )
        )
    return found


def _money(raw: str) -> Decimal | None:
    try:
        return Decimal(raw.strip()).quantize(Decimal("0.01")) if raw.strip() else None
    except (InvalidOperation, ValueError):
        return None


@router.post(f"{S}/checkout/")
async def checkout_submit(
    organizer: str, event: str, request: Request, session: Session
) -> Response:
    opened = await _posted(request, session, organizer, event)
    if isinstance(opened, Response):
        return opened
    web, found, pairs, form = opened
    try:
        return await _submit(request, session, organizer, event, web, found, pairs, form)
    finally:
        form.close()


async def _posted(
    request: Request, session: Session, organizer: str, event: str
) -> tuple[Page, Event, Pairs, Multipart] | Response:
    """The checkout's post: an urlencoded form, or a multipart one (with files)."""
    web = await Page.load(request, session)
    found = await _event(session, organizer, event)
    if found is None:
        return web.not_found()
    got = await posted_form(web, request)
    return got if isinstance(got, Response) else (web, found, *got)


async def _files(
    request: Request,
    web: Page,
    event: Event,
    form: Multipart,
    pairs: Pairs,
    per_item: dict[int, list[dict[str, Any]]],
) -> tuple[dict[int, list[file_answers.FileAnswer]], dict[str, str], dict[str, str]]:
    """The answers to file questions by position, the refusals by field and the names of
    the files kept. Files taken are committed at once, so a refused checkout keeps them."""
    store = request.app.state.background.store
    quota = request.app.state.settings.upload_quota_bytes * file_answers.QUOTA_FACTOR
    found: dict[int, list[file_answers.FileAnswer]] = {}
    refused: dict[str, str] = {}
    names: dict[str, str] = {}
    stored = False
    for pid, asked in per_item.items():
        for q in asked:
            if q["type"] != "F":
                continue
            field = f"q_{pid}_{q['id']}"
            upload = None
            incoming = form.files.get(field)
            if incoming is not None:
                try:
                    upload = await file_answers.store_incoming(
                        web.session, store, event, incoming, quota
                    )
                    stored = True
                except file_answers.FileRefused as exc:
                    refused[field] = str(exc)
            if upload is None:
                upload = await file_answers.kept_upload(
                    web.session, event, first(pairs, f"{field}_kept")
                )
            if upload is not None:
                found.setdefault(pid, []).append(file_answers.FileAnswer(q["id"], upload))
                names[field] = upload.filename
    if stored:
        await web.session.commit()
    return found, refused, names


async def _submit(
    request: Request,
    session: Session,
    organizer: str,
    event: str,
    web: Page,
    found: Event,
    pairs: Pairs,
    form: Multipart,
) -> Response:
    now = utcnow()
    cart_id = web.web.get(_cart_key(found)) or ""
    cart = await carts.view(session, found, cart_id, now) if carts.valid_cart_id(cart_id) else None
    kept: dict[str, Any] = {}
    for name, raw in pairs:
        if name not in ("csrf_token", "step", "shown_total"):
            kept.setdefault(name, []).append(raw)
    files: dict[int, list[file_answers.FileAnswer]] = {}
    per_item: dict[int, list[dict[str, Any]]] = {}
    refused: dict[str, str] = {}
    names: dict[str, str] = {}
    if cart is not None and cart.lines:
        asked = await questions.load(session, found)
        per_item = {
            line.position.id: [
                questions.describe(q, items) for q, items in asked if line.item.id in items
            ]
            for line in cart.lines
        }
        files, refused, names = await _files(request, web, found, form, pairs, per_item)
        for pid, answers in files.items():
            for answer in answers:
                kept[f"q_{pid}_{answer.question_id}_kept"] = [f"file:{answer.upload.uuid}"]
    if first(pairs, "step") == "prices":  # "update prices": the form again, priced for the address
        return await _checkout_page(
            web, found, organizer, kept=kept, kept_files=names, field_errors=refused
        )
    try:
        if cart is None or not cart.lines:
            raise FieldErrors.single("cart_id", checkout.EMPTY)
        lang = language(web, found)
        account = await checkout_accounts.state(web, found, organizer, cart, lang)
        memberships, problems = checkout_accounts.chosen(
            account, cart, pairs, i18n.translator(lang)
        )
        if problems:
            raise FieldErrors({"non_field_errors": problems})
        if refused:
            raise FieldErrors(
                {
                    "non_field_errors": [
                        f"{q['question']}: {refused[field]}"
                        for pid, asked_here in per_item.items()
                        for q in asked_here
                        if (field := f"q_{pid}_{q['id']}") in refused
                    ]
                }
            )
        method = first(pairs, "payment") or None
        data = checkout.CheckoutData(
            cart_id=cart_id,
            email=first(pairs, "email").strip()[:254],
            email_repeat=first(pairs, "email_repeat").strip()[:254],
            payment_provider=method,
            payment_data={"gift_card": first(pairs, "gift_card").strip()[:190]},
            accept_terms=bool(first(pairs, "accept_terms")),
            positions=_details(pairs, cart, per_item, files, memberships),
            invoice_address=address.from_form(pairs),
            locale=lang,
            expected_total=_money(first(pairs, "shown_total")),
            customer=account.customer.identifier if account.customer else None,
        )
        placed = await checkout.checkout(session, found, data, now, public_base_url(request))
    except FieldErrors as exc:
        await session.rollback()  # the cart as it was: the refused checkout took nothing
        found = await _event(session, organizer, event) or found
        response = await _checkout_page(
            web,
            found,
            organizer,
            status=400,
            errors=sentences(exc.errors),
            kept=kept,
            field_errors=refused,
            kept_files=names,
        )
        raise Refused(response) from None
    web.web.set(_cart_key(found), None)
    if placed.redirect_url:
        return web.redirect(placed.redirect_url)
    order = placed.order
    _ = i18n.translator(language(web, found))
    web.web.flash(
        _("Thank you! Your order has been placed.")
        if not placed.paid
        else _("Thank you! Your order is complete.")
    )
    return web.redirect(f"/{organizer}/{event}/order/{order.code}/{order.secret}/")
