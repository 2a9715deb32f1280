"""State changes of an order: paid, pending, expired, canceled, reactivated, extended,
approved, denied, new secrets. An order that left the pending/paid states gave its quota back,
so bringing it back (paid, reactivated, extended after expiry) takes quota again."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections import Counter
from decimal import Decimal

from sqlalchemy import inspect
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.base import NO_VALUE

from admit.db import utcnow
from admit.kit.http.errors import APIError, FieldErrors
from admit.models import Event, Order, OrderFee, OrderPayment
from admit.orders import codes, hooks
from admit.orders.schemas import CancelIn, ExtendIn
from admit.quotas.availability import NoQuota, QuotaExceeded, reserve
from admit.seating import claim as seating
from admit.tickets.secrets import generator as secret_generator
from admit.vouchers import usage as voucher_usage

ZERO = Decimal("0.00")


def bad(detail: str) -> APIError:
    return APIError(400, detail)


async def take_quota_again(session: AsyncSession, order: Order, force: bool = False) -> None:
    """Reserves the order's live positions (it currently counts for no quota)."""
    keys = [(p.item_id, p.variation_id, p.subevent_id) for p in order.positions if not p.canceled]
    await voucher_usage.reclaim(session, order, force)  # vouchers are locked before quotas
    try:
        await reserve(session, order.event_id, Counter(keys), ignore_quota=force)
    except QuotaExceeded as exc:
        raise bad(
            f'There is not enough quota available on quota "{exc.quota.name}" to perform the '
            "operation."
        ) from None
    except NoQuota:
        raise bad("One of the products in this order is not assigned to a quota.") from None
    # Its seats too, even with force: they may have been sold again meanwhile (400 then).
    await seating.reclaim(session, order.positions, utcnow())


# Refunds that take money back from the order: done, under way, or carried out elsewhere.
HELD_REFUNDS = frozenset({"created", "transit", "external", "done"})


def net_paid(order: Order) -> Decimal:
    """What the order holds: confirmed payments (and those since refunded) less the refunds
    that are done or under way. Refunds are read only when loaded (every order route loads
    them); without them, only confirmed payments count, as before refunds existed."""
    refunds = inspect(order).attrs.refunds.loaded_value
    if refunds is NO_VALUE:
        return sum((p.amount for p in order.payments if p.state == "confirmed"), ZERO)
    paid = sum((p.amount for p in order.payments if p.state in ("confirmed", "refunded")), ZERO)
    return paid - sum((r.amount for r in refunds if r.state in HELD_REFUNDS), ZERO)


def _confirm_payment(session: AsyncSession, order: Order, now: dt.datetime) -> None:
    """Books the money as the reference's ``mark_paid`` does: an open (created or pending)
    ``manual`` payment of exactly what is still owed is confirmed; otherwise every open
    payment is canceled (the buyer's bank transfer, card or gift card payment will not be
    what paid this order) and a confirmed ``manual`` payment of what is owed is added. So
    ``payment_provider`` shows ``manual`` after it. A gift card is debited only by its own
    confirmation, so canceling its open payment takes nothing from the card."""
    owed = max(order.total - net_paid(order), ZERO)
    open_payments = [p for p in order.payments if p.state in ("created", "pending")]
    match = next((p for p in open_payments if p.provider == "manual" and p.amount == owed), None)
    if match is not None:
        match.state = "confirmed"
        match.payment_date = now
        return
    for payment in open_payments:
        payment.state = "canceled"
    local_id = max((p.local_id for p in order.payments), default=0) + 1
    payment = OrderPayment(
        order_id=order.id,
        local_id=local_id,
        state="confirmed",
        amount=owed,
        provider="manual",
        created=now,
        payment_date=now,
        info={},
    )
    session.add(payment)
    order.payments.append(payment)


async def mark_paid(session: AsyncSession, order: Order, force: bool = False) -> None:
    """Only a pending or expired order can be paid, as in the reference: a canceled one must
    be reactivated first, so its quota, seats and vouchers go through that one path."""
    if order.status == "p":
        raise bad("The order cannot be marked as paid, because it is already paid.")
    if order.status == "c":
        raise bad(
            "The order cannot be marked as paid, because it is canceled. Only pending or "
            "expired orders can be marked as paid."
        )
    if order.require_approval:
        raise bad("This order is not yet approved and can not be marked as paid.")
    if order.status == "e":
        await take_quota_again(session, order, force)
    now = utcnow()
    _confirm_payment(session, order, now)
    order.status = "p"
    await hooks.run(hooks.order_paid_hooks, session, order, order.positions)


def mark_pending(order: Order) -> None:
    if order.status != "p":
        raise bad("The order cannot be marked as unpaid, because it is not paid.")
    order.status = "n"


def mark_expired(order: Order) -> None:
    if order.status != "n":
        raise bad("The order cannot be marked as expired, because it is not pending.")
    order.status = "e"


def mark_canceled(session: AsyncSession, order: Order, data: CancelIn) -> None:
    if order.status not in ("n", "p", "e"):
        raise bad("The order cannot be canceled, because it already is.")
    now = utcnow()
    fee = data.cancellation_fee
    if fee:
        if order.status == "e":
            raise bad("A cancellation fee can only be kept for a pending or paid order.")
        if fee > order.total:
            raise FieldErrors.single(
                "cancellation_fee",
                "The cancellation fee cannot be higher than the total amount of this order.",
            )
        # The positions go (and free their quota); the order lives on with the fee only.
        for position in order.positions:
            position.canceled = True
        for old in order.fees:
            old.canceled = True
        new_fee = OrderFee(order_id=order.id, fee_type="cancellation", value=fee, canceled=False)
        session.add(new_fee)
        order.total = fee
        order.last_modified = now
        hooks.canceled(session, order)
        return
    order.status = "c"
    order.cancellation_date = now
    hooks.canceled(session, order)
    for payment in order.payments:  # money still expected will not come for a canceled order
        if payment.state in ("created", "pending"):
            payment.state = "canceled"


async def reactivate(session: AsyncSession, order: Order) -> None:
    if order.status != "c":
        raise bad("The order cannot be reactivated, because it is not canceled.")
    await take_quota_again(session, order)
    paid = order.total == 0 or net_paid(order) >= order.total
    order.status = "p" if paid and not order.require_approval else "n"
    order.cancellation_date = None


def parse_expiry(raw: str, event: Event) -> dt.datetime:
    """A date means the end of that day in the event's time zone; a datetime is taken as is."""
    try:
        if len(raw) == 10:
            day = dt.date.fromisoformat(raw)
            tz = zoneinfo.ZoneInfo(event.timezone or "UTC")
            value = dt.datetime.combine(day, dt.time(23, 59, 59), tzinfo=tz)
        else:
            value = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
            if value.tzinfo is None:
                value = value.replace(tzinfo=dt.UTC)
    except ValueError:
        raise FieldErrors.single(
            "expires", "Date has wrong format. Use one of these formats instead: YYYY-MM-DD."
        ) from None
    return value.astimezone(dt.UTC)


async def extend(session: AsyncSession, order: Order, event: Event, data: ExtendIn) -> None:
    if order.status not in ("n", "e"):
        raise bad("The order cannot be extended, because it is neither pending nor expired.")
    expires = parse_expiry(data.expires, event)
    if expires <= utcnow():
        raise FieldErrors.single("expires", "The new expiry date needs to be in the future.")
    if order.status == "e":
        await take_quota_again(session, order, data.force)
        order.status = "n"
    order.expires = expires


async def approve(session: AsyncSession, order: Order) -> None:
    if order.status != "n" or not order.require_approval:
        raise bad("This order is not pending approval.")
    order.require_approval = False
    await hooks.run(hooks.order_approved_hooks, session, order, order.positions)
    if order.total == 0:
        _confirm_payment(session, order, utcnow())
        order.status = "p"
        await hooks.run(hooks.order_paid_hooks, session, order, order.positions)


def deny(order: Order) -> None:
    if order.status != "n" or not order.require_approval:
        raise bad("This order is not pending approval.")
    order.status = "c"
    order.cancellation_date = utcnow()


async def regenerate_secrets(session: AsyncSession, order: Order) -> None:
    """New secrets for every ticket (signed ones for a signed event); the old ones are
    revoked by the flush hook of ``checkin/revocation.py``."""
    order.secret = codes.order_secret()
    event = await session.get(Event, order.event_id)
    assert event is not None
    await secret_generator.prepare(session, event)
    signed = secret_generator.issuer(event)
    if signed is not None:
        fresh = [secret_generator.for_position(signed, p) for p in order.positions]
    else:
        fresh = await codes.new_ticket_secrets(session, order.event_id, len(order.positions))
    for position, secret in zip(order.positions, fresh, strict=True):
        position.secret = secret
        position.web_secret = codes.web_secret()
    order.last_modified = utcnow()
