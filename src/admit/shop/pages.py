"""The shop's pages: the product list with the voucher field and the cart, the checkout form,
and (``order_pages.py``) the order page.

Server-rendered and readable without JavaScript; every form carries the session's CSRF token;
every refusal is shown as sentences on the same page with the buyer's input kept. The pages
call the services the headless API calls (``catalog``, ``cart``, ``checkout``): one
implementation of every rule. A refused checkout raises :class:`Refused` with the page to
show, so the request's transaction is rolled back like any failed API call.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from admit.db import utcnow
from admit.events.settings import value
from admit.kit.http.context import Session
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.filtering import parse_int
from admit.kit.resources.i18n import localized
from admit.models import Event
from admit.shop import addons, catalog, dates, front_pages, i18n, waiting
from admit.shop import cart as carts
from admit.shop.render import base_context, language
from admit.shop.render import page as render_page
from admit.web.forms import first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
S = "/{organizer}/{event}"


class Refused(Exception):
    """The page to answer instead of the route's own (a refused form, a page that is not
    there, the login a page needs); the transaction is rolled back."""

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
        "invoice_address": "Invoice address",
        "vat_id": "VAT ID",
        "zipcode": "ZIP code",
        "total": "",
        "used_membership": "Membership",
        "customer": "Customer account",
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
    return front_pages.cart_key(event.id)


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
        home=True,
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
        waiting_list=waiting.enabled(event),
        errors=errors,
        kept=kept or {},
        cart=cart,
        now=now,
    )


async def _kept_or_rendered(
    request: Request, session: Any, organizer: str, event: str, subevent_id: int | None = None
) -> Response:
    """The front page (of a date): the kept one for a plain visitor when there is one
    (``front_pages``), else rendered, and kept when it is the one every plain visitor sees."""
    if (kept := front_pages.answer(request)) is not None:
        return kept
    started = front_pages.clock()
    web = await Page.load(request, session)
    found = await _event(session, organizer, event)
    if found is None or (subevent_id is not None and not found.has_subevents):
        front_pages.forget(web)  # gone (or offline): its kept page is too
        return web.not_found()
    plain = front_pages.plain(web, found)
    response = await _front(
        web,
        found,
        organizer,
        voucher_code=request.query_params.get("voucher", "")[:255],
        subevent_id=subevent_id,
    )
    if plain:
        front_pages.keep(web, found, response, started)
    return response


@router.get(f"{S}/")
async def front(organizer: str, event: str, request: Request, session: Session) -> Response:
    return await _kept_or_rendered(request, session, organizer, event)


@router.get(f"{S}/{{subevent:int}}/")
async def front_date(
    organizer: str, event: str, subevent: int, request: Request, session: Session
) -> Response:
    """One date of a series: its products and prices."""
    return await _kept_or_rendered(request, session, organizer, event, subevent)


def _wants(pairs: list[tuple[str, str]]) -> tuple[list[carts.Want], list[str]]:
    wants, problems = [], []
    for name, raw in pairs:
        if not name.startswith("qty_") or not raw.strip():
            continue
        key = name[4:]
        try:
            count = parse_int(raw)
            item, variation = carts.form_key(key)
        except ValueError:
            problems.append("Quantities must be whole numbers.")
            continue
        if count < 0 or count > carts.MAX_ADD:
            problems.append(f"Choose a quantity between 0 and {carts.MAX_ADD}.")
            continue
        price = None
        raw_price = first(pairs, f"price_{key}").strip().replace(",", ".")
        if raw_price:
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
    subevent_id = dates.parse_id(raw_date)
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
    _ = i18n.translator(language(web, found))
    web.web.flash(_("Added to your cart. Your tickets are reserved for 30 minutes."))
    offered = await addons.choices(session, found, cart_id, utcnow())
    if any(not any(o.chosen for o in c.offers) for c in offered):
        return web.redirect(f"/{organizer}/{event}/cart/addons/")
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
