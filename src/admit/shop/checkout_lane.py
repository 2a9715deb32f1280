"""The headless checkout in the fast lane (PostgreSQL): a cart of plain tickets paid by bank
transfer turned into an order in one batched database call, past the framework.

At an on-sale nearly every checkout is the same: one or a few tickets, no voucher, add-ons,
bundles, dates or questions, bank transfer. The general path (``checkout.py``) spends some
forty statements on it, each an ORM round trip while the cart's rows stay locked. Here the
shop's rules run on the worker's kept copy of the catalog (``orders/catalog.py``, plus what the
shop reads of it, :class:`_Extras`), the order is checked, priced and built by the order lane's
own functions, and it is written by the order lane's call (``orders/lane_sql.py``), which
locks the cart's rows, takes their units over, writes the order and the buyer's mail and
moves the sales ledger, for every checkout that queued meanwhile at once.

The lane only ever takes a checkout that the general path would accept; anything else (a
problem of any kind, an invoice address, answers, another payment method, a free order, an
``Idempotency-Key``, a cart that changed or runs out, a fee configured for bank transfer) goes
to the general path before anything is written, and gets its answer and message there.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from email.utils import make_msgid
from typing import Any

from pydantic import ValidationError
from starlette.responses import Response

from admit.jobs.queue import hand_over, new_job_values
from admit.kit.http.context import public_base_url
from admit.kit.http.errors import FieldErrors
from admit.kit.http.responses import JSONResponse
from admit.kit.lanes.fastlane import LaneRequest
from admit.kit.resources.i18n import localized
from admit.mail.outbox import message_id_domain
from admit.mail.tasks import SEND_KIND
from admit.models import Event, Job, Order, OrderPayment, OutgoingMail
from admit.orders import codes, create, hooks, lane, order_fields, validity
from admit.orders.catalog import Catalog, cache
from admit.orders.drafts import check_positions
from admit.orders.pricing import needs_discounts, price_order
from admit.orders.rows import build, complete
from admit.orders.schemas import EMAIL_RE, OrderIn, PositionIn
from admit.payments import fees, providers
from admit.quotas.availability import quota_busy
from admit.shop import address, catalog, lane_shared, mails, orders
from admit.shop.cart import valid_cart_id
from admit.shop.checkout import order_url
from admit.shop.schemas import CheckoutIn
from admit.shop.settings import TERMS_URL, setting
from admit.tickets.secrets import generator as secret_generator

PROVIDER = "banktransfer"
_FIELDS = frozenset(CheckoutIn.model_fields)
_ORDER_COLUMNS = frozenset(Order.__table__.columns.keys())  # type: ignore[attr-defined]
_PAYMENT_COLUMNS = frozenset(OrderPayment.__table__.columns.keys())  # type: ignore[attr-defined]


def _plain(raw: dict[str, Any]) -> CheckoutIn | None:
    """The body when it is the lane's case (else None: the general path)."""
    if not raw.keys() <= _FIELDS or raw.get("invoice_address") or raw.get("payment_data"):
        return None
    if raw.get("payment_provider") != PROVIDER:
        return None
    positions = raw.get("positions") or []
    if not isinstance(positions, list) or any(
        not isinstance(p, dict) or p.get("answers") or p.get("used_membership") for p in positions
    ):
        return None
    try:
        data = CheckoutIn.model_validate(raw)
    except ValidationError:
        return None
    if not valid_cart_id(data.cart_id) or not EMAIL_RE.match(data.email.strip()):
        return None
    if data.email_repeat is not None and data.email_repeat.strip().lower() != (
        data.email.strip().lower()
    ):
        return None
    return data


async def checkout(request: LaneRequest) -> Response | None:
    """The lane handler of ``POST …/public/…/checkout/``; None for what it leaves."""
    raw = request.json_object()
    if request.header(b"authorization") is not None:
        return None  # a logged-in customer: the order is linked to them (the general path)
    data = _plain(raw) if raw is not None else None
    if data is None:
        return None
    return await lane_shared.serve(request, lambda shop: _checkout(shop, data), data.cart_id)


async def _checkout(shop: lane_shared.Shop, data: CheckoutIn) -> Response | None:
    event, now = shop.event, shop.now
    provider = providers.get(PROVIDER)
    if (
        provider is None
        or not provider.enabled(event)
        or fees.configured(event, PROVIDER)  # the general path writes the method's fee
        or (setting(event, TERMS_URL) and not data.accept_terms)
    ):
        return None
    try:  # an address required but not given: the route names it
        if address.check(event, data.invoice_address) is not None:
            return None
    except FieldErrors:
        return None
    base = public_base_url(shop.http)  # a Host links may not be built from: 400 before writing
    pool = await shop.pool()
    rows = shop.cart  # read with the event (``lane_shared.serve``)
    if not rows or any(
        r["voucher_id"] or r["addon_to_id"] or r["is_bundled"] or r["seat_id"] or r["subevent_id"]
        for r in rows
    ):
        return None
    # A cart running out soon goes the general path (which locks the quota, or refuses).
    if min(r["expires"] for r in rows) <= now + max(create.HELD_MARGIN, create.COMMIT_MARGIN):
        return None
    order_in = _order_in(event, shop.copy, shop.extras, data, rows, now)
    if order_in is None:
        return None
    dbs = (shop.http.app.state.db, pool)
    return await _place(event, shop.copy, data, order_in, rows, now, base, dbs)


def _order_in(
    event: Event,
    copy: Catalog,
    extras: lane_shared.Extras,
    data: CheckoutIn,
    rows: list[Any],
    now: dt.datetime,
) -> OrderIn | None:
    """The order of the cart when every rule of the shop's checkout holds (``checkout._check``
    for a cart of plain products), else None."""
    names = setting(event, "attendee_names_asked") and setting(event, "attendee_names_required")
    emails = setting(event, "attendee_emails_asked") and setting(event, "attendee_emails_required")
    details = {d.id: d for d in data.positions}
    counts = Counter(r["item_id"] for r in rows)
    positions = []
    for row in rows:
        item = copy.items.get(row["item_id"])
        if item is None or extras.plain(item.id) is None:
            return None
        variation = next((v for v in item.variations if v.id == row["variation_id"]), None)
        if catalog.window_refusal(item, now, None, variation):
            return None
        if (item.min_per_order and counts[item.id] < item.min_per_order) or (
            item.max_per_order and counts[item.id] > item.max_per_order
        ):
            return None
        mine = details.get(row["id"])
        name = ((mine.attendee_name if mine else None) or "").strip() or None
        email = ((mine.attendee_email if mine else None) or "").strip() or None
        if (names and not name) or (emails and not email) or (email and not EMAIL_RE.match(email)):
            return None
        price = None if not item.free_price else row["price"]
        positions.append(
            {
                "item": item.id,
                "variation": row["variation_id"],
                "price": price,
                "attendee_name": name,
                "attendee_email": email,
            }
        )
    try:
        return OrderIn(
            email=data.email.strip(),
            locale=data.locale,
            sales_channel=catalog.CHANNEL,
            payment_provider=PROVIDER,
            positions=[PositionIn(**p) for p in positions],
        )
    except ValidationError:
        return None


async def _place(
    event: Event,
    copy: Catalog,
    data: CheckoutIn,
    order_in: OrderIn,
    rows: list[Any],
    now: dt.datetime,
    base: str,
    dbs: tuple[Any, Any],
) -> Response | None:
    """Checks, prices and builds the order as the order lane does, writes it with the cart's
    units and the mail in the batched call, and answers as the general path."""
    order_event = copy.event
    try:
        order_fields.check_create(order_in)
        drafts = check_positions(order_event, order_in.positions, copy.refs())
    except FieldErrors:
        return None
    if not lane._takes(order_event, drafts) or not secret_generator.ready(order_event):
        return None
    lines = [d.line for d in drafts]
    discounts = copy.discounts if needs_discounts(lines) else []  # type: ignore[arg-type]
    try:
        priced = price_order(order_event, order_in, lines, copy.rules, discounts, now)  # type: ignore[arg-type]
    except FieldErrors:
        return None
    new = build(
        order_event,
        order_in,
        drafts,
        priced,
        windows=validity.windows(order_event, drafts, now),
        memberships={},
        uses=[None] * len(drafts),
        customer_id=None,
        testmode=order_event.testmode,
        now=now,
    )
    provider = providers.get(PROVIDER)
    assert provider is not None
    total = new.order["total"]
    if total == 0 or provider.refusal(event, total) is not None:
        return None  # the free provider, or a refusal: the general path
    guards = hooks.guards_for(order_event, [ln.item for ln in lines], new.order)  # type: ignore[union-attr]
    if guards is None:
        return None
    code = codes.random_strings(codes.CODE_ALPHABET, codes.CODE_LENGTH, 1)[0]
    order = _transient(new, code)
    link = order_url(base, event.organizer_slug, event.slug, order)  # type: ignore[attr-defined]
    view_positions = _positions(copy, new, order_in.locale)
    instructions = provider.instructions(event, order)
    mail = _mail(event, order, link, instructions, view_positions)
    extra: dict[str, Any] = {"cart": {"id": data.cart_id, "ids": [r["id"] for r in rows]}}
    if mail is not None:
        extra.update(mail)
    pending = lane.PendingOrder(new, order_in, copy, guards, codes=[code], extra=extra)
    db, pool = dbs  # the application's database (its job broker) and the native pool
    kind, result = await lane.submit(pool, order_event, pending)
    if kind == "stale":
        cache.forget(event.id, copy.stamp)
        return None
    if kind == "busy":
        raise quota_busy()
    if kind != "done":
        return None  # the cart changed, a code was taken, ...: the general path
    done = lane.written(new, result[0])
    if result[0]["r_job_id"] is not None:
        await hand_over(db, [result[0]["r_job_id"]], soon=True)
    for shown, position_id in zip(view_positions, done.position_ids, strict=True):
        shown["id"] = position_id
    view = orders.OrderView(
        order,
        orders.STATUS[order.status],
        view_positions,
        instructions,
        orders.may_cancel(event, order),
        orders.tickets_allowed(event, order),
    )
    body = view.as_dict(link)
    body["redirect_url"] = None
    return JSONResponse(body, status_code=201)


def _transient(new: Any, code: str) -> Order:
    """The order as an unsaved ORM object, for the rules and texts that read one."""
    order = Order(**{k: v for k, v in new.order.items() if k in _ORDER_COLUMNS})
    order.code = code
    payment = {k: v for k, v in new.payment.items() if k in _PAYMENT_COLUMNS}
    order.payments = [OrderPayment(**payment)]
    return order


def _positions(copy: Catalog, new: Any, locale: str) -> list[dict[str, Any]]:
    """The order page's positions (``orders.view``), their ids filled in once written."""
    shown = []
    for p in sorted(new.positions, key=lambda p: p.positionid):
        item_id, variation_id, _ = p.key
        item = copy.items[item_id]
        name = localized(item.name, locale)
        variation = next((v for v in item.variations if v.id == variation_id), None)
        if variation is not None:
            name = f"{name} – {localized(variation.value, locale)}"
        shown.append(
            {
                "id": None,
                "positionid": p.positionid,
                "name": name,
                "price": f"{p.row['price']:.2f}",
                "subevent": None,
                "date": None,
                "attendee_name": p.row.get("attendee_name_cached"),
                "canceled": False,
                "answers": [],
            }
        )
    return shown


def _mail(
    event: Event, order: Order, link: str, instructions: Any, shown: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The outbox row and its delivery job (``shop/mails.py``'s mail; the job is handed to
    the broker once the call returns)."""
    lines = [orders.line_text(p, event.currency) for p in shown]
    context = mails.context(event, order, link, instructions, lines)
    if context is None:
        return None
    subject, text, html = mails.render(context)
    mail = complete(
        OutgoingMail.__table__,  # type: ignore[arg-type]
        {
            "to": [order.email],
            "cc": [],
            "bcc": [],
            "subject": subject,
            "body": text,
            "html": html,
            "attachments": [],
            "organizer_id": event.organizer_id,
            "event_id": event.id,
            "status": "queued",
            "attempts": 0,
            "message_id": make_msgid(domain=message_id_domain()),
        },
    )
    job = new_job_values(SEND_KIND, {}, organizer_id=event.organizer_id, event_id=event.id)
    return {"mail": mail, "job": complete(Job.__table__, job)}  # type: ignore[arg-type]
