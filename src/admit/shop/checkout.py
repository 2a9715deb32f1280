"""Turning a cart into an order: everything the shop promises to check, then the order
service's own creation, then the payment provider.

Why a layer of its own: order creation through the API trusts its caller (sale windows,
min/max per order, required questions are the integrator's business, as with the reference).
A buyer is not trusted, so this module checks those first and then hands the order to
``orders.create.create_order`` (vouchers, quota, prices, taxes: one implementation). The
chosen payment method's fee (``payments/fees.py``) is computed there from the priced total and
written as one of the order's fees, so the total, the payment and the invoice include it.

The cart's positions hold quota; the order must take it over without ever counting both.
The cart's rows are first locked and marked expired inside this transaction (a second
checkout of the same cart waits and then finds it empty). Expired cart rows count neither
against the quota nor as voucher usages, so the order's own quota check sees exactly the
units the cart held; other transactions still see the rows unexpired until this one commits,
and by then the order's positions count instead. When the rows still hold their units (not
run out, and not about to), the order takes them over without the quota lock
(``create.Held``): every sale of an on-sale would otherwise queue behind each checkout's
dozens of statements. The rows are deleted after the order is written; they leave the sales
ledger, with the order's units, in one upsert right before the commit (``ledger.defer``).

On PostgreSQL the headless API's plain case (a cart of plain tickets, bank transfer, no
answers or invoice address) takes the fast lane (``checkout_lane.py``) instead, which holds
to every rule here and leaves everything else to this module.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.carts import service as carts
from admit.catalog.questions.answers import AnswerIn
from admit.catalog.taxes.rules import Buyer
from admit.kit.http.errors import FieldErrors, validation_error
from admit.kit.resources.i18n import localized
from admit.models import CartPosition, Event, Order, Question, Voucher, question_items
from admit.notifications.notify import notify_all
from admit.orders.create import Held, create_order
from admit.orders.pricing import load_tax_rules
from admit.orders.rows import PAID, PAYMENT_CONFIRMED
from admit.orders.schemas import EMAIL_RE, OrderIn, PositionIn
from admit.orders.serialize import ORDER_LOAD
from admit.payments import fees, providers
from admit.quotas import ledger
from admit.shop import addons, address, catalog, dates, dependencies, mails, orders
from admit.shop.cart import valid_cart_id
from admit.shop.cart_rows import cart_items
from admit.shop.file_answers import FileAnswer, attach
from admit.shop.settings import TERMS_URL, setting

TAKEN_OVER = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)  # "expired": the order takes the units
EMPTY = "Your cart is empty: its reservation may have run out, or it was checked out already."
REQUIRED = "This field is required."
PRICES_CHANGED = (
    "The prices changed (for your invoice address, or since the page was loaded): "
    "please check the new total and place the order again."
)


@dataclass
class PositionDetails:
    """What the buyer says about one cart position (by its id)."""

    id: int
    attendee_name: str | None = None
    attendee_email: str | None = None
    answers: list[AnswerIn] | None = None
    # answers to file questions (the pages only: the headless API takes no files)
    files: list[FileAnswer] = field(default_factory=list)
    # the logged-in customer's membership this ticket is sold against
    used_membership: int | None = None


@dataclass
class CheckoutData:
    cart_id: str
    email: str
    payment_provider: str | None
    positions: list[PositionDetails]
    email_repeat: str | None = None
    locale: str = "en"
    accept_terms: bool = False
    payment_data: dict[str, Any] | None = None
    invoice_address: dict[str, Any] | None = None
    # the total the buyer was shown (the pages): the order is refused when it differs
    expected_total: Decimal | None = None
    # the identifier of the logged-in customer (``customers/sign_in.py``): the order is
    # theirs, and its positions may use their memberships
    customer: str | None = None


@dataclass
class Placed:
    order: Order
    paid: bool
    redirect_url: str | None
    view: orders.OrderView  # what the order page shows, as the mail was written from it


def order_url(base: str, organizer: str, event: str, order: Order) -> str:
    return f"{base.rstrip('/')}/{organizer}/{event}/order/{order.code}/{order.secret}/"


async def _take_cart(
    session: AsyncSession, event: Event, cart_id: str
) -> tuple[list[CartPosition], dt.datetime | None]:
    """Locks the cart's rows and marks them taken over (see the module's docstring); with
    the earliest time they held their units until."""
    held = (
        await session.execute(
            select(CartPosition.id, CartPosition.expires)
            .where(CartPosition.event_id == event.id, CartPosition.cart_id == cart_id)
            .with_for_update()
        )
    ).all()
    if not held:
        return [], None
    ids = [row[0] for row in held]
    await session.execute(
        update(CartPosition)
        .where(CartPosition.id.in_(ids))
        .values(expires=TAKEN_OVER)
        .execution_options(synchronize_session=False)
    )
    rows = await session.scalars(
        select(CartPosition)
        .where(CartPosition.id.in_(ids))
        .order_by(CartPosition.addon_to_id.is_not(None), CartPosition.id)
        .execution_options(populate_existing=True)
    )
    return list(rows), min(_aware(row[1]) for row in held)


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)  # SQLite


def _held(rows: list[CartPosition], until: dt.datetime | None, now: dt.datetime) -> Held | None:
    """The units the cart's rows still hold (None when one ran out: its unit went back)."""
    if until is None or until <= now:
        return None
    return Held(dict(Counter((r.item_id, r.variation_id, r.subevent_id) for r in rows)), until)


async def required_questions(
    session: AsyncSession, event: Event, item_ids: set[int]
) -> dict[int, list[Question]]:
    """The questions a buyer must answer, per item (asked in the shop, not at check-in)."""
    rows = await session.execute(
        select(question_items.c.item_id, Question)
        .join(Question, Question.id == question_items.c.question_id)
        .where(
            Question.event_id == event.id,
            question_items.c.item_id.in_(item_ids),
            Question.hidden.is_(False),
            Question.ask_during_checkin.is_(False),
        )
        .options(selectinload(Question.options))
        .order_by(Question.position, Question.id)
    )
    found: dict[int, list[Question]] = {}
    for item_id, question in rows.all():
        found.setdefault(item_id, []).append(question)
    return found


def _answered(answer: AnswerIn) -> bool:
    return bool(answer.options) or bool((answer.answer or "").strip())


async def _check(
    session: AsyncSession,
    event: Event,
    data: CheckoutData,
    rows: list[CartPosition],
    now: dt.datetime,
    errors: dict[str, Any],
    buyer: Buyer | None = None,
) -> list[PositionIn]:
    """The shop's rules on the whole checkout (``errors``: those found already); the order's
    positions when they hold."""
    if not data.email or not EMAIL_RE.match(data.email):
        errors["email"] = ["Enter a valid email address."]
    elif data.email_repeat is not None and data.email_repeat.strip().lower() != data.email.lower():
        errors["email_repeat"] = ["The two e-mail addresses differ."]
    if setting(event, TERMS_URL) and not data.accept_terms:
        errors["accept_terms"] = ["Please accept the terms of sale."]
    items = {i.id: i for i in await _load_items(session, event, {r.item_id for r in rows})}
    questions = await required_questions(session, event, set(items))
    vouchers = await _voucher_codes(session, {r.voucher_id for r in rows if r.voucher_id})
    details = {d.id: d for d in data.positions}
    names_required = setting(event, "attendee_names_asked") and setting(
        event, "attendee_names_required"
    )
    emails_required = setting(event, "attendee_emails_asked") and setting(
        event, "attendee_emails_required"
    )
    subevents = await dates.load_many(
        session, event, {r.subevent_id for r in rows if r.subevent_id}
    )
    counts = Counter(r.item_id for r in rows)
    rules = await load_tax_rules(session, event.id)
    position_errors: list[dict[str, Any]] = []
    positions: list[PositionIn] = []
    parent_ids = {r.id: i + 1 for i, r in enumerate(rows)}
    for row in rows:
        err: dict[str, Any] = {}
        item = items[row.item_id]
        name = localized(item.name, data.locale)
        subevent = subevents.get(row.subevent_id or 0)
        variation = next((v for v in item.variations if v.id == row.variation_id), None)
        refusal = catalog.window_refusal(item, now, subevent, variation)
        if subevent is not None:
            refusal = dates.refusal(subevent, now) or refusal
        if refusal:
            err["item"] = [f"{name}: {refusal}"]
        if item.min_per_order and counts[item.id] < item.min_per_order:
            err["item"] = [f"{name}: buy at least {item.min_per_order} in one order."]
        if item.max_per_order and counts[item.id] > item.max_per_order:
            err["item"] = [f"{name}: you cannot buy more than {item.max_per_order} in one order."]
        if row.addon_to_id is None and item.addons:
            children = [items[r.item_id] for r in rows if r.addon_to_id == row.id]
            children = [
                c
                for c, r in zip(children, [r for r in rows if r.addon_to_id == row.id], strict=True)
                if not r.is_bundled
            ]
            if problems := addons.count_problems(item, children):
                err["addons"] = [f"{name}: {p}" for p in problems]
        mine = details.get(row.id) or PositionDetails(row.id)
        # an add-on or bundled product that admits nobody has no attendee of its own
        attendee = item.admission or row.addon_to_id is None
        if attendee and names_required and not (mine.attendee_name or "").strip():
            err["attendee_name"] = [REQUIRED]
        if attendee and emails_required and not (mine.attendee_email or "").strip():
            err["attendee_email"] = [REQUIRED]
        asked = questions.get(item.id, [])
        visible = dependencies.shown(asked, mine.answers or [])
        hidden = {q.id for q in asked} - visible
        answers = [a for a in (mine.answers or []) if _answered(a) and a.question not in hidden]
        if any(f.question_id not in {q.id for q in asked} for f in mine.files):
            err["answers"] = ["This question is not asked for the specified product."]
        mine.files = [f for f in mine.files if f.question_id in visible]
        given = {a.question for a in answers} | {f.question_id for f in mine.files}
        missing = [q for q in asked if q.required and q.id in visible and q.id not in given]
        if missing:
            err["answers"] = err.get("answers", []) + [
                f'Please upload a file for "{localized(q.question, data.locale)}".'
                if q.type == "F"
                else f'Please answer "{localized(q.question, data.locale)}".'
                for q in missing
            ]
        email = (mine.attendee_email or "").strip() or None
        if email and not EMAIL_RE.match(email):
            err["attendee_email"] = ["Enter a valid email address."]
        try:
            positions.append(
                PositionIn(
                    item=item.id,
                    variation=row.variation_id,
                    subevent=row.subevent_id,
                    price=addons.given_price(row, item, rules, buyer),
                    addon_to=parent_ids.get(row.addon_to_id) if row.addon_to_id else None,
                    voucher=vouchers.get(row.voucher_id or 0),
                    attendee_name=(mine.attendee_name or "").strip() or None,
                    attendee_email=email if "attendee_email" not in err else None,
                    answers=answers,
                    used_membership=mine.used_membership,
                )
            )
        except ValidationError as exc:
            err.update(validation_error(exc).errors)
        position_errors.append(err)
    if any(position_errors):
        errors["positions"] = position_errors
    if errors:
        raise FieldErrors(errors)
    return positions


async def _load_items(session: AsyncSession, event: Event, ids: set[int]) -> list[Any]:
    return list((await cart_items(session, event, ids)).values())


async def _voucher_codes(session: AsyncSession, ids: set[int]) -> dict[int, str]:
    if not ids:
        return {}
    return dict(
        (await session.execute(select(Voucher.id, Voucher.code).where(Voucher.id.in_(ids)))).all()
    )


async def checkout(
    session: AsyncSession, event: Event, data: CheckoutData, now: dt.datetime, base_url: str
) -> Placed:
    """Validates, writes the order and starts its payment (flushed, not committed). Raises
    FieldErrors naming every problem; nothing stays changed then (the caller rolls back)."""
    if (reason := catalog.closed_reason(event, now)) is not None:
        raise FieldErrors.general(reason)
    if not valid_cart_id(data.cart_id):
        raise FieldErrors.single("cart_id", EMPTY)
    provider = providers.get(data.payment_provider) if data.payment_provider else None
    if data.payment_provider and (provider is None or not provider.enabled(event)):
        raise FieldErrors.single("payment_provider", "This payment method is not offered.")
    rows, until = await _take_cart(session, event, data.cart_id)
    if not rows:
        raise FieldErrors.single("cart_id", EMPTY)
    try:
        invoice_address = address.check(event, data.invoice_address)
        address_errors: dict[str, Any] = {}
    except FieldErrors as exc:
        invoice_address, address_errors = None, exc.errors
    buyer = Buyer.of(invoice_address)
    positions = await _check(session, event, data, rows, now, address_errors, buyer)
    try:
        order_in = OrderIn(
            email=data.email,
            locale=data.locale,
            sales_channel=catalog.CHANNEL,
            payment_provider=provider.identifier if provider else None,
            invoice_address=invoice_address,
            positions=positions,
            customer=data.customer,
        )
    except ValidationError as exc:
        raise validation_error(exc) from None
    fee = fees.fees_for(event, provider.identifier, provider.label) if provider else None
    placed = await create_order(session, event, order_in, held=_held(rows, until, now), fees=fee)
    details = {d.id: d for d in data.positions}
    for row, position_id in zip(rows, placed.written.position_ids, strict=False):
        if (mine := details.get(row.id)) is not None and mine.files:
            await attach(session, base_url, position_id, mine.files)
    total = placed.new.order["total"]
    # the page shows the goods' total beside each method's fee: compared without the fee
    goods = total - sum((f["value"] for f in placed.new.fees if f["fee_type"] == fees.FEE_TYPE), 0)
    if data.expected_total is not None and goods != data.expected_total:
        raise FieldErrors.single("total", PRICES_CHANGED)
    if total == 0:
        provider = providers.get("free")
    elif provider is None:
        raise FieldErrors.single("payment_provider", "Choose how you want to pay.")
    assert provider is not None
    if (refusal := provider.refusal(event, total)) is not None:
        raise FieldErrors.single("payment_provider", refusal)
    await carts.delete_taken_over(session, [row.id for row in rows])
    order = await _locked_order(session, placed.written.order_id)
    payment = next(p for p in order.payments if p.local_id == 1)
    if provider.identifier == "free":
        payment.provider = "free"
    status = order.status
    started = await provider.start(session, event, order, payment, data.payment_data or {})
    if order.status == "p" and status != "p":
        await notify_all(
            session,
            [PAYMENT_CONFIRMED, PAID],
            organizer_id=event.organizer_id,
            event_id=event.id,
            code=order.code,
        )
    await session.flush()
    link = order_url(base_url, event.organizer_slug, event.slug, order)  # type: ignore[attr-defined]
    view = await orders.view(session, event, order)
    lines = orders.mail_lines(view, event.currency)
    await mails.order_mail(session, event, order, link, view.instructions, lines)
    return Placed(order, order.status == "p", started.redirect_url, view)


async def _locked_order(session: AsyncSession, order_id: int) -> Order:
    order = (
        (
            await session.execute(
                select(Order)
                .where(Order.id == order_id)
                .options(*ORDER_LOAD)
                .with_for_update(of=Order)
                .execution_options(populate_existing=True)
            )
        )
        .scalars()
        .one()
    )
    await ledger.track_orders(session, [order.id])  # a payment may make it paid
    return order
