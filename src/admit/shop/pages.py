"""The shop's pages: the product list with the voucher field and the cart, the checkout form,
and (``order_pages.py``) the order page.

Server-rendered and readable without JavaScript; every form carries the session's CSRF token;
every refusal is shown as sentences on the same page with the buyer's input kept. The pages
call the services the headless API calls (``catalog``, ``cart``, ``checkout``): one
implementation of every rule. A refused checkout raises :class:`Refused` with the page to
show, so the request's transaction is rolled back like any failed API call.
"""

from __future__ import annotations

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
from admit.shop import cart as carts
from admit.shop import catalog, checkout, dates, questions, waiting
from admit.shop.render import base_context
from admit.shop.render import page as render_page
from admit.shop.settings import CHECKOUT_TEXT, TERMS_URL
from admit.web.forms import every, first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
S = "/{organizer}/{event}"


class Refused(Exception):
    """A form refused: the page to show; the transaction is rolled back."""

    def __init__(self, response: Response) -> None:
        super().__init__("refused")
        self.response = response


async def refused_page(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refused)
    return exc.response


def sentences(errors: Any, where: str = "") -> list[str]:
    """Every message of a FieldErrors body, each a sentence naming its field."""
    labels = {
        "non_field_errors": "",
        "email": "E-mail",
        "email_repeat": "E-mail (again)",
        "accept_terms": "Terms",
        "payment_provider": "Payment",
        "gift_card": "Gift card",
        "voucher": "Voucher",
        "attendee_name": "Name",
        "attendee_email": "E-mail",
        "answers": "",
        "item": "",
        "cart_id": "",
        "price": "Price",
        "subevent": "Date",
    }
    found: list[str] = []
    if isinstance(errors, dict):
        for key, inner in errors.items():
            if key == "positions" and isinstance(inner, list):
                for index, sub in enumerate(inner):
                    found += sentences(sub, f"Ticket {index + 1}")
                continue
            label = labels.get(key, key.replace("_", " ").capitalize())
            prefix = " – ".join(x for x in (where, label) if x)
            found += sentences(inner, prefix)
    elif isinstance(errors, list):
        for inner in errors:
            found += sentences(inner, where)
    elif errors:
        found.append(f"{where}: {errors}" if where else str(errors))
    return found


async def _event(session: Any, organizer: str, event: str) -> Event | None:
    return await catalog.load_event(session, organizer, event)


async def posted(
    request: Request, session: Any, organizer: str, event: str
) -> tuple[Page, Event, list[tuple[str, str]]] | Response:
    """A shop form's post, opened as every form handler opens it: the page session, the event
    (404 page when unknown) and the form's fields with the CSRF check passed (403 page when
    not); an answer is returned as it is."""
    web = await Page.load(request, session)
    found = await _event(session, organizer, event)
    if found is None:
        return web.not_found()
    pairs, refused = await web.post()
    return refused if refused else (web, found, pairs)


def _cart_key(event: Event) -> str:
    return f"cart{event.id}"


async def _front(
    web: Page,
    event: Event,
    organizer: str,
    *,
    status: int = 200,
    errors: list[str] | None = None,
    voucher_code: str = "",
    kept: dict[str, str] | None = None,
    subevent_id: int | None = None,
) -> Response:
    now = utcnow()
    cart_id = web.web.get(_cart_key(event))
    cart = (
        await carts.view(web.session, event, cart_id, now) if carts.valid_cart_id(cart_id) else None
    )
    closed = catalog.closed_reason(event, now)
    date = await dates.load(web.session, event, subevent_id, now)
    if event.has_subevents and date is None:
        if subevent_id is not None:
            return web.not_found()
        return render_page(
            web,
            "dates.html",
            status,
            home=True,
            **base_context(event, organizer),
            dates=await dates.upcoming(web.session, event, now),
            closed=closed,
            frontpage_text=localized(value(event, "frontpage_text"), "en"),
            errors=list(errors or []),
            cart=cart,
            now=now,
        )
    closed = closed or (dates.refusal(date, now) if date is not None else None)
    voucher, problem = await catalog.find_voucher(web.session, event, voucher_code, now)
    errors = list(errors or [])
    if problem and not errors:
        errors.append(f"Voucher: {problem}")
    items = await catalog.products(
        web.session, event, None if problem else voucher, now, subevent=date
    )
    return render_page(
        web,
        "front.html",
        status,
        home=date is None,
        **base_context(event, organizer),
        products=items,
        closed=closed,
        frontpage_text=localized(
            (date.frontpage_text if date else None) or value(event, "frontpage_text"), "en"
        ),
        voucher=voucher_code,
        date=date,
        date_label=dates.label(date) if date else "",
        here=f"/{organizer}/{event.slug}/{date.id}/" if date else f"/{organizer}/{event.slug}/",
        waiting_list=waiting.enabled(event) and date is None,
        errors=errors,
        kept=kept or {},
        cart=cart,
        now=now,
    )


@router.get(f"{S}/")
async def front(organizer: str, event: str, request: Request, session: Session) -> Response:
    web = await Page.load(request, session)
    found = await _event(session, organizer, event)
    if found is None:
        return web.not_found()
    return await _front(
        web, found, organizer, voucher_code=request.query_params.get("voucher", "")[:255]
    )


@router.get(f"{S}/{{subevent:int}}/")
async def front_date(
    organizer: str, event: str, subevent: int, request: Request, session: Session
) -> Response:
    """One date of a series: its products and prices."""
    web = await Page.load(request, session)
    found = await _event(session, organizer, event)
    if found is None or not found.has_subevents:
        return web.not_found()
    return await _front(
        web,
        found,
        organizer,
        voucher_code=request.query_params.get("voucher", "")[:255],
        subevent_id=subevent,
    )


def _wants(pairs: list[tuple[str, str]]) -> tuple[list[carts.Want], list[str]]:
    wants, problems = [], []
    for name, raw in pairs:
        if not name.startswith("qty_") or not raw.strip():
            continue
        key = name[4:]
        parts = key.split("-")
        try:
            count = int(raw)
            item, variation = int(parts[0]), (int(parts[1]) if len(parts) > 1 else None)
        except ValueError:
            problems.append("Quantities must be whole numbers.")
            continue
        if count < 0 or count > carts.MAX_ADD:
            problems.append(f"Choose a quantity between 0 and {carts.MAX_ADD}.")
            continue
        price = None
        raw_price = first(pairs, f"price_{key}").strip().replace(",", ".")
        if raw_price:
            from decimal import Decimal, InvalidOperation

            try:
                price = Decimal(raw_price).quantize(Decimal("0.01"))
            except InvalidOperation:
                problems.append("Enter the price as a number, e.g. 12.50.")
                continue
        wants.append(carts.Want(item, variation, count, price))
    return wants, problems


@router.post(f"{S}/cart/add")
async def cart_add(organizer: str, event: str, request: Request, session: Session) -> Response:
    opened = await posted(request, session, organizer, event)
    if isinstance(opened, Response):
        return opened
    web, found, pairs = opened
    voucher = first(pairs, "voucher").strip()[:255]
    kept = {k: v for k, v in pairs if k.startswith(("qty_", "price_"))}
    wants, problems = _wants(pairs)
    raw_date = first(pairs, "subevent").strip()
    subevent_id = int(raw_date) if raw_date.isdigit() and len(raw_date) < 10 else None
    if not problems and not any(w.count for w in wants):
        problems.append("Choose how many tickets you want first.")
    try:
        if problems:
            raise FieldErrors.general(problems[0])
        cart_id = await carts.add(
            session, found, web.web.get(_cart_key(found)), wants, voucher, utcnow(), subevent_id
        )
    except FieldErrors as exc:
        await session.rollback()  # the page shows the cart as it was before this request
        found = await _event(session, organizer, event) or found
        response = await _front(
            web,
            found,
            organizer,
            status=400,
            errors=sentences(exc.errors),
            voucher_code=voucher,
            kept=kept,
            subevent_id=subevent_id if found.has_subevents else None,
        )
        raise Refused(response) from None
    web.web.set(_cart_key(found), cart_id)
    web.web.flash("Added to your cart. Your tickets are reserved for 30 minutes.")
    where = f"{subevent_id}/" if found.has_subevents and subevent_id else ""
    return web.redirect(f"/{organizer}/{event}/{where}#cart")


@router.post(f"{S}/cart/remove")
async def cart_remove(organizer: str, event: str, request: Request, session: Session) -> Response:
    opened = await posted(request, session, organizer, event)
    if isinstance(opened, Response):
        return opened
    web, found, pairs = opened
    cart_id = web.web.get(_cart_key(found))
    try:
        position = int(first(pairs, "position"))
        if not carts.valid_cart_id(cart_id):
            raise FieldErrors.single("position", "Your cart is empty.")
        await carts.remove(session, found, cart_id, position)
    except (ValueError, FieldErrors):
        web.web.flash("That product was no longer in your cart.")
    else:
        web.web.flash("Removed from your cart.")
    return web.redirect(f"/{organizer}/{event}/#cart")


async def _checkout_page(
    web: Page,
    event: Event,
    organizer: str,
    *,
    status: int = 200,
    errors: list[str] | None = None,
    kept: dict[str, Any] | None = None,
) -> Response:
    now = utcnow()
    cart_id = web.web.get(_cart_key(event))
    cart = (
        await carts.view(web.session, event, cart_id, now) if carts.valid_cart_id(cart_id) else None
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
    methods = [p for p in providers.offered(event, cart.total)] if cart.total > 0 else []
    return render_page(
        web,
        "checkout.html",
        status,
        **base_context(event, organizer),
        cart=cart,
        now=now,
        questions=per_item,
        methods=methods,
        names_asked=value(event, "attendee_names_asked"),
        names_required=value(event, "attendee_names_required"),
        emails_asked=value(event, "attendee_emails_asked"),
        emails_required=value(event, "attendee_emails_required"),
        terms_url=value(event, TERMS_URL),
        checkout_text=localized(value(event, CHECKOUT_TEXT), "en"),
        errors=errors or [],
        kept=kept or {},
    )


@router.get(f"{S}/checkout/")
async def checkout_form(organizer: str, event: str, request: Request, session: Session) -> Response:
    web = await Page.load(request, session)
    found = await _event(session, organizer, event)
    if found is None:
        return web.not_found()
    return await _checkout_page(web, found, organizer)


def _details(
    pairs: list[tuple[str, str]], cart: carts.Cart, asked: dict[int, list[dict[str, Any]]]
) -> list[checkout.PositionDetails]:
    from admit.catalog.questions.answers import AnswerIn

    found = []
    for line in cart.lines:
        pid = line.position.id
        answers = []
        for q in asked.get(pid, []):
            field = f"q_{pid}_{q['id']}"
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
            )
        )
    return found


@router.post(f"{S}/checkout/")
async def checkout_submit(
    organizer: str, event: str, request: Request, session: Session
) -> Response:
    opened = await posted(request, session, organizer, event)
    if isinstance(opened, Response):
        return opened
    web, found, pairs = opened
    now = utcnow()
    cart_id = web.web.get(_cart_key(found)) or ""
    cart = await carts.view(session, found, cart_id, now) if carts.valid_cart_id(cart_id) else None
    kept: dict[str, Any] = {}
    for name, raw in pairs:
        if name != "csrf_token":
            kept.setdefault(name, []).append(raw)
    try:
        if cart is None or not cart.lines:
            raise FieldErrors.single("cart_id", checkout.EMPTY)
        asked = await questions.load(session, found)
        per_item = {
            line.position.id: [
                questions.describe(q, items) for q, items in asked if line.item.id in items
            ]
            for line in cart.lines
        }
        method = first(pairs, "payment") or None
        data = checkout.CheckoutData(
            cart_id=cart_id,
            email=first(pairs, "email").strip()[:254],
            email_repeat=first(pairs, "email_repeat").strip()[:254],
            payment_provider=method,
            payment_data={"gift_card": first(pairs, "gift_card").strip()[:190]},
            accept_terms=bool(first(pairs, "accept_terms")),
            positions=_details(pairs, cart, per_item),
        )
        placed = await checkout.checkout(session, found, data, now, public_base_url(request))
    except FieldErrors as exc:
        await session.rollback()  # the cart as it was: the refused checkout took nothing
        found = await _event(session, organizer, event) or found
        response = await _checkout_page(
            web, found, organizer, status=400, errors=sentences(exc.errors), kept=kept
        )
        raise Refused(response) from None
    web.web.set(_cart_key(found), None)
    if placed.redirect_url:
        return web.redirect(placed.redirect_url)
    order = placed.order
    web.web.flash(
        "Thank you! Your order has been placed."
        if not placed.paid
        else "Thank you! Your order is complete."
    )
    return web.redirect(f"/{organizer}/{event}/order/{order.code}/{order.secret}/")
