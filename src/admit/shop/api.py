"""The headless checkout: the shop's flow as JSON under
``/api/v1/public/organizers/{organizer}/events/{event}/``, for integrators who build their own
storefront. No token: the cart id, and then the order's secret, are the buyer's credentials;
every route is rate limited per client address (``limits.py``).

The routes are thin: the catalog, the cart, the checkout and the order view are the services
the shop's pages call too (``catalog.py``, ``cart.py``, ``checkout.py``, ``orders.py``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from admit.db import utcnow
from admit.events.settings import value
from admit.kit.http.body import read_object
from admit.kit.http.context import Session, public_base_url
from admit.kit.http.errors import FieldErrors, not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import API_PREFIX
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import validate_input
from admit.kit.resources.filtering import INT_MAX
from admit.kit.resources.i18n import localized
from admit.models import Event
from admit.payments import providers
from admit.shop import addons, address, catalog, checkout, dates, file_answers, orders, waiting
from admit.shop import cart as carts
from admit.shop import openapi as _openapi  # noqa: F401  (the answers' shapes)
from admit.shop.customer_api import logged_in
from admit.shop.limits import PublicAccess
from admit.shop.schemas import AddonsIn, CartIn, CheckoutIn, WaitingIn
from admit.shop.settings import TERMS_URL

P = "/public/organizers/{organizer}/events/{event}"
router = APIRouter(
    prefix=API_PREFIX, tags=["public checkout"], dependencies=[Depends(PublicAccess())]
)


async def shop_event(session: Any, organizer: str, event: str) -> Event:
    found = await catalog.load_event(session, organizer, event)
    if found is None:
        raise not_found()
    return found


def event_info(event: Event, now: Any) -> dict[str, Any]:
    """What a storefront needs to know about the event and its checkout."""
    return {
        "name": localized(event.name, "en"),
        "organizer": event.organizer_name,  # type: ignore[attr-defined]
        "currency": event.currency,
        "date_from": event.date_from.isoformat(),
        "location": localized(event.location, "en"),
        "shop_open": catalog.closed_reason(event, now) is None,
        "closed_reason": catalog.closed_reason(event, now),
        "payment_providers": [
            {"identifier": p.identifier, "label": p.label, "input_field": p.input_field}
            for p in providers.PROVIDERS.values()
            if p.enabled(event)
        ],
        "attendee_names_asked": value(event, "attendee_names_asked"),
        "attendee_names_required": value(event, "attendee_names_required"),
        "attendee_emails_asked": value(event, "attendee_emails_asked"),
        "attendee_emails_required": value(event, "attendee_emails_required"),
        "terms_url": value(event, TERMS_URL),
        "contact_mail": value(event, "contact_mail"),
        "frontpage_text": localized(value(event, "frontpage_text"), "en"),
        "has_subevents": event.has_subevents,
        "invoice_address": address.asked(event),
    }


@router.get(f"{P}/", name="public-event", summary="The event and how its checkout works")
async def event_detail(organizer: str, event: str, session: Session) -> Response:
    """The event's name, date and currency, whether its shop sells now (and why not), the
    payment methods offered and what the checkout asks (attendee names and e-mails, terms)."""
    found = await shop_event(session, organizer, event)
    return JSONResponse(event_info(found, utcnow()))


@router.get(f"{P}/dates/", name="public-dates", summary="The dates of an event series")
async def dates_list(organizer: str, event: str, session: Session) -> Response:
    """For an event series (``has_subevents``): the upcoming dates a buyer may pick, soonest
    first, each with its availability; an empty list for a single event."""
    found = await shop_event(session, organizer, event)
    found_dates = await dates.upcoming(session, found, utcnow()) if found.has_subevents else []
    return JSONResponse({"dates": [d.as_dict() for d in found_dates]})


@router.get(f"{P}/catalog/", name="public-catalog", summary="Products with prices and availability")
async def catalog_list(
    organizer: str,
    event: str,
    session: Session,
    voucher: str | None = None,
    subevent: str | None = None,
) -> Response:
    """The products a buyer may see, with prices, the tax note and availability (available,
    sold out, reserved, not yet or no longer on sale). ``voucher`` shows the prices with that
    voucher and the products it unlocks. For an event series ``subevent`` (a date's id from
    ``dates/``) is required: the date's prices, products and quotas."""
    found = await shop_event(session, organizer, event)
    now = utcnow()
    date = None
    if found.has_subevents:
        if not subevent:
            raise FieldErrors.single("subevent", dates.PICK)
        date = await dates.load(session, found, dates.parse_id(subevent), now)
        if date is None:
            raise FieldErrors.single("subevent", dates.UNKNOWN)
    elif subevent:
        raise FieldErrors.single("subevent", "This event has no dates to choose from.")
    code, problem = await catalog.find_voucher(session, found, voucher, now)
    if problem:
        raise FieldErrors.single("voucher", problem)
    items = await catalog.products(session, found, code, now, subevent=date)
    return JSONResponse({"products": [p.as_dict() for p in items]})


@router.get(f"{P}/questions/", name="public-questions", summary="Questions asked at checkout")
async def questions_list(organizer: str, event: str, session: Session) -> Response:
    """The questions a buyer answers at checkout, each with the products it is asked for,
    its type, options and whether it is required. A question with `dependency_question` is
    asked (and required) only when that question is answered with one of
    `dependency_values` (a boolean's `True`/`False`, a choice's option identifiers); an answer
    to it is dropped otherwise. A file question (type `F`) is answered with the id of a file
    sent to `POST …/upload/` first."""
    found = await shop_event(session, organizer, event)
    from admit.shop.questions import asked

    return JSONResponse({"questions": await asked(session, found)})


@router.post(
    f"{P}/carts/", name="public-cart-add", openapi_extra=json_body(CartIn), status_code=201
)
async def cart_add(organizer: str, event: str, request: Request, session: Session) -> Response:
    """Reserves the products (quota is held for 30 minutes) and answers the cart with its
    computed prices; 400 names what cannot be had (sold out, voucher used up, sale over)."""
    found = await shop_event(session, organizer, event)
    data: CartIn = validate_input(CartIn, await read_object(request))  # type: ignore[assignment]
    now = utcnow()
    wants = [carts.Want(w.item, w.variation, w.count, w.price) for w in data.products]
    cart_id = await carts.add(session, found, data.cart_id, wants, data.voucher, now, data.subevent)
    body = (await carts.view(session, found, cart_id, now)).as_dict(now)
    return JSONResponse(body, status_code=201)


@router.get(f"{P}/carts/{{cart_id}}/", name="public-cart", summary="A cart with its prices")
async def cart_detail(
    organizer: str,
    event: str,
    cart_id: str,
    session: Session,
    country: Annotated[str | None, Query(max_length=2)] = None,
    is_business: bool = False,
    vat_id: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    """The cart's positions with the prices the checkout will charge, the total, what each
    payment method offered adds as its fee (``payment_fees``: fee and total per method) and how
    long the reservation lasts. With ``country`` (and ``is_business``, ``vat_id``) the prices are
    those for that invoice address: e.g. reverse charged for an EU business with a VAT ID
    from another member state (``reverse_charge`` true)."""
    found = await shop_event(session, organizer, event)
    now = utcnow()
    if not carts.valid_cart_id(cart_id):
        raise not_found()
    buyer = address.buyer(country, is_business, vat_id)
    return JSONResponse((await carts.view(session, found, cart_id, now, buyer=buyer)).as_dict(now))


@router.get(
    f"{P}/carts/{{cart_id}}/addons/",
    name="public-cart-addons",
    summary="The add-ons a cart's products offer",
)
async def cart_addons(organizer: str, event: str, cart_id: str, session: Session) -> Response:
    """Per position of the cart whose product has add-ons: each add-on category (min/max,
    whether its price is included) with its products, prices, availability and how many are
    chosen. Empty when nothing in the cart has add-ons."""
    found = await shop_event(session, organizer, event)
    if not carts.valid_cart_id(cart_id):
        raise not_found()
    offered = await addons.choices(session, found, cart_id, utcnow())
    return JSONResponse({"positions": [c.as_dict() for c in offered]})


@router.put(
    f"{P}/carts/{{cart_id}}/positions/{{position}}/addons/",
    name="public-cart-set-addons",
    summary="Choose a cart position's add-ons",
    openapi_extra=json_body(AddonsIn),
)
async def cart_set_addons(
    organizer: str, event: str, cart_id: str, position: int, request: Request, session: Session
) -> Response:
    """Sets the add-ons of one position (replacing those chosen before), checked against its
    product's add-on categories (min/max, one of each unless several are allowed) and held
    like the rest of the cart; answers the cart. The position gets a new id. 400 names what
    cannot be had; the cart is left as it was then."""
    found = await shop_event(session, organizer, event)
    if not carts.valid_cart_id(cart_id) or not 0 < position <= INT_MAX:
        raise not_found()
    data: AddonsIn = validate_input(AddonsIn, await read_object(request))  # type: ignore[assignment]
    now = utcnow()
    wants = [carts.Want(w.item, w.variation, w.count) for w in data.products]
    await addons.choose(session, found, cart_id, position, wants, now)
    return JSONResponse((await carts.view(session, found, cart_id, now)).as_dict(now))


@router.delete(
    f"{P}/carts/{{cart_id}}/positions/{{position}}/",
    name="public-cart-remove",
    summary="Remove a product from a cart",
)
async def cart_remove(
    organizer: str, event: str, cart_id: str, position: int, session: Session
) -> Response:
    """Takes one product out of the cart (its quota goes back at once)."""
    found = await shop_event(session, organizer, event)
    if not carts.valid_cart_id(cart_id) or not 0 < position <= INT_MAX:
        raise not_found()
    await carts.remove(session, found, cart_id, position)
    now = utcnow()
    return JSONResponse((await carts.view(session, found, cart_id, now)).as_dict(now))


@router.post(
    f"{P}/checkout/",
    name="public-checkout",
    summary="Turn a cart into an order",
    openapi_extra=json_body(CheckoutIn),
    status_code=201,
)
async def checkout_order(
    organizer: str, event: str, request: Request, session: Session
) -> Response:
    """Validates everything (shop open, sale windows, min/max per order, vouchers, required
    questions (those that depend on another's answer only when it matches) and names, terms,
    payment method), writes the order and starts its payment. The payment method's fee, if the
    organizer charges one, is in the order's ``total`` and listed in its ``fees`` (a gift card
    pays none). Answers the order with ``url``, its page; 400 names every problem, nothing is
    kept. A file question is answered with the
    id `POST …/upload/` gave (`"answer": "file:<id>"`). With a customer's login
    (`Authorization: Customer <token>` from `customer/login/`) the order is theirs, and a
    position may name one of their memberships as `used_membership` (required for a product
    that requires a membership)."""
    found = await shop_event(session, organizer, event)
    data: CheckoutIn = validate_input(CheckoutIn, await read_object(request))  # type: ignore[assignment]
    wanted = to_checkout(data)
    if (customer := await logged_in(request, session, found.organizer_id)) is not None:
        wanted.customer = customer.identifier
    answers, files = await file_answers.split_answers(
        session, found, [p.answers or [] for p in wanted.positions]
    )
    for position, rest, mine in zip(wanted.positions, answers, files, strict=True):
        position.answers, position.files = rest, mine
    placed = await checkout.checkout(session, found, wanted, utcnow(), public_base_url(request))
    url = checkout.order_url(public_base_url(request), organizer, event, placed.order)
    body = placed.view.as_dict(url)
    body["redirect_url"] = placed.redirect_url
    return JSONResponse(body, status_code=201)


def to_checkout(data: CheckoutIn) -> checkout.CheckoutData:
    return checkout.CheckoutData(
        cart_id=data.cart_id,
        email=data.email.strip(),
        email_repeat=data.email_repeat,
        payment_provider=data.payment_provider,
        payment_data=dict(data.payment_data),
        locale=data.locale,
        accept_terms=data.accept_terms,
        invoice_address=data.invoice_address,
        positions=[
            checkout.PositionDetails(
                p.id,
                p.attendee_name,
                p.attendee_email,
                p.answers,
                used_membership=p.used_membership,
            )
            for p in data.positions
        ],
    )


ORDER = f"{P}/orders/{{code}}/{{secret}}"


async def _order(
    session: Any, organizer: str, event: str, code: str, secret: str, lock: bool = False
) -> tuple[Event, Any]:
    found = await shop_event(session, organizer, event)
    order = await orders.find(session, found, code, secret, lock=lock)
    if order is None:
        raise not_found()
    return found, order


@router.get(f"{ORDER}/", name="public-order", summary="An order, by its code and secret")
async def order_detail(
    organizer: str, event: str, code: str, secret: str, request: Request, session: Session
) -> Response:
    """The order's status, positions, payment instructions and whether its tickets can be
    downloaded. A wrong secret answers 404, like a missing order."""
    found, order = await _order(session, organizer, event, code, secret)
    url = checkout.order_url(public_base_url(request), organizer, event, order)
    return JSONResponse((await orders.view(session, found, order)).as_dict(url))


@router.post(
    f"{ORDER}/cancel/", name="public-order-cancel", summary="Cancel an order (where allowed)"
)
async def order_cancel(
    organizer: str,
    event: str,
    code: str,
    secret: str,
    request: Request,
    session: Session,
) -> Response:
    """Cancels a pending order (or a free paid one) when the event lets buyers cancel
    (``cancel_allow_user``); 400 otherwise."""
    found, order = await _order(session, organizer, event, code, secret, lock=True)
    await orders.cancel(session, found, order)
    url = checkout.order_url(public_base_url(request), organizer, event, order)
    return JSONResponse((await orders.view(session, found, order)).as_dict(url))


_FILE_BODY = {
    "requestBody": {
        "required": True,
        "description": "The file itself, with its Content-Type and "
        'Content-Disposition: attachment; filename="..."',
        "content": {
            kind: {"schema": {"type": "string", "format": "binary"}}
            for kind in file_answers.ALLOWED_TYPES
        },
    }
}


@router.post(
    f"{P}/upload/",
    name="public-upload",
    summary="Upload a file to answer a file question",
    openapi_extra=_FILE_BODY,
    status_code=201,
)
async def upload_answer(organizer: str, event: str, request: Request, session: Session) -> Response:
    """Stores a file (PDF, PNG, JPEG or GIF, at most 10 MB; the body is the file, with its
    Content-Type and a Content-Disposition naming it) for the checkout to use as the answer
    to a file question: `{"question": <id>, "answer": "file:<id>"}`. Unused files expire after
    24 hours. 400 when the event asks no file question or the file is not what it claims."""
    found = await shop_event(session, organizer, event)
    quota = request.app.state.settings.upload_quota_bytes * file_answers.QUOTA_FACTOR
    store = request.app.state.background.store
    upload = await file_answers.receive(request, session, store, found, quota)
    return JSONResponse({"id": f"file:{upload.uuid}"}, status_code=201)


@router.post(
    f"{P}/waitinglist/",
    name="public-waitinglist",
    summary="Join a sold-out product's waiting list",
    openapi_extra=json_body(WaitingIn),
    status_code=201,
)
async def waiting_list(organizer: str, event: str, request: Request, session: Session) -> Response:
    """Puts an e-mail address on the waiting list of a product that is sold out (of a series:
    on the date ``subevent``; the event's
    ``waiting_list_enabled`` on, the product taking entries); a voucher is sent when a place
    frees up. 400 when the product is available or the address waits for it already."""
    found = await shop_event(session, organizer, event)
    data: WaitingIn = validate_input(WaitingIn, await read_object(request))  # type: ignore[assignment]
    entry = await waiting.join(
        session,
        found,
        data.item,
        data.variation,
        data.email,
        data.name,
        data.locale,
        subevent=data.subevent,
    )
    return JSONResponse({"id": entry.id, "email": entry.email}, status_code=201)
