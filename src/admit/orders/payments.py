"""Order payments: recorded through the API, confirmed, canceled; gift cards as a means of
payment.

Money rules, in one place so every path agrees:

- an order holds :func:`~admit.orders.actions.net_paid` (confirmed payments less refunds that
  are done or under way); it becomes paid once that covers its total — a pending order at
  once, an expired one only if its quota (and seats, vouchers) can be taken again, as
  ``mark_paid`` does; a canceled order stays canceled and its money stays refundable;
- a payment added through the API may not exceed what the order still owes (money that
  really arrived twice is recorded by confirming the payment that was waiting for it);
- a gift card pays by being debited in the same transaction, through one guarded
  ``UPDATE … RETURNING`` (as ``giftcards.service.transact``), so concurrent debits never take
  a card below zero; the transaction row names the order and the payment.

Every function here acts on an order the caller loaded with its row lock (``load_order(…,
lock=True)``), so two requests on one order run one after the other.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.giftcards import service as cards
from admit.kit.http.errors import APIError, FieldErrors, not_found
from admit.kit.resources.filtering import parse_pk
from admit.models import Event, GiftCard, Order, OrderPayment, OrderRefund, Organizer
from admit.orders import actions, hooks
from admit.orders.money_schemas import PaymentIn

GIFTCARD = "giftcard"
OPEN = ("created", "pending")
ZERO = Decimal("0.00")

NOT_APPROVED = "This order is not yet approved and can not be marked as paid."
CARD_UNKNOWN = "This gift card does not exist or is not accepted by this organizer."


def bad(detail: str) -> APIError:
    return APIError(400, detail)


def find(rows: list[Any], raw_local_id: str) -> Any:
    """The payment (or refund) with the order-local id in the URL; 404 when there is none."""
    local_id = parse_pk(raw_local_id)
    found = next((r for r in rows if r.local_id == local_id), None)
    if found is None:
        raise not_found()
    return found


def next_local_id(rows: list[Any]) -> int:
    return max((r.local_id for r in rows), default=0) + 1


def owed(order: Order) -> Decimal:
    """What the order still expects (negative when it holds more than its total)."""
    return order.total - actions.net_paid(order)


async def settle(session: AsyncSession, order: Order, *, force: bool = False) -> None:
    """Marks a pending or expired order paid once its money covers the total. An expired
    order gave its quota back and takes it again here (400 when it is gone, unless
    ``force``)."""
    if order.status not in ("n", "e") or owed(order) > 0:
        return
    if order.status == "e":
        await actions.take_quota_again(session, order, force)
    order.status = "p"
    order.cancellation_date = None
    await hooks.run(hooks.order_paid_hooks, session, order, order.positions)


async def confirm(
    session: AsyncSession, organizer_id: int, order: Order, payment: OrderPayment, force: bool
) -> None:
    """``…/payments/{id}/confirm/``: the money arrived (a gift card is debited now)."""
    if payment.state not in OPEN:
        raise bad("Only payments in state created or pending can be confirmed.")
    if order.require_approval and order.status == "n":
        raise bad(NOT_APPROVED)
    payment.state = "confirmed"
    payment.payment_date = utcnow()
    # Quota first (an expired order), then the card: the row locks of one request are
    # always taken in this order.
    await settle(session, order, force=force)
    if payment.provider == GIFTCARD:
        await debit(session, organizer_id, order, payment)


def cancel(payment: OrderPayment) -> None:
    """``…/payments/{id}/cancel/``: the expected money will not come."""
    if payment.state not in OPEN:
        raise bad("Only payments in state created or pending can be canceled.")
    payment.state = "canceled"


async def create(
    session: AsyncSession, event: Event, order: Order, data: PaymentIn
) -> OrderPayment:
    """``POST …/payments/``: a payment recorded by hand, validated against what the order
    still owes. Confirmed at once, it settles the order; a gift card is debited then."""
    if order.status == "c":
        raise bad("Payments cannot be added to a canceled order.")
    if data.state in ("created", "pending", "confirmed"):
        _check_amount(order, data.amount)
    elif data.amount > order.total:
        raise FieldErrors.single("amount", "The amount cannot be higher than the order total.")
    if data.state == "confirmed" and order.require_approval and order.status == "n":
        raise bad(NOT_APPROVED)
    info = dict(data.info)
    if data.provider == GIFTCARD:
        if data.state not in ("created", "pending", "confirmed"):
            raise FieldErrors.single(
                "state", "A gift card payment can only be created, pending or confirmed."
            )
        info["gift_card"] = await _usable_card(session, event, order, data.info)
    now = utcnow()
    settled = data.state in ("confirmed", "refunded")
    payment = OrderPayment(
        order_id=order.id,
        local_id=next_local_id(order.payments),
        state=data.state,
        amount=data.amount,
        provider=data.provider,
        created=now,
        payment_date=_utc(data.payment_date or (now if settled else None)),
        info=info,
    )
    session.add(payment)
    order.payments.append(payment)
    await session.flush()  # the payment's id, for a gift card transaction or a refund
    if data.state == "refunded":
        _record_refund_of(session, order, payment)
    if data.state == "confirmed":
        await settle(session, order, force=data.force)
        if payment.provider == GIFTCARD:
            await debit(session, event.organizer_id, order, payment)
    return payment


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    return value.astimezone(dt.UTC) if value is not None else None


def _check_amount(order: Order, amount: Decimal) -> None:
    open_amount = owed(order)
    if open_amount <= 0:
        raise FieldErrors.single("amount", "This order is already paid in full.")
    if amount > open_amount:
        raise FieldErrors.single(
            "amount", f"The amount exceeds what this order still owes ({open_amount:.2f})."
        )


def _record_refund_of(session: AsyncSession, order: Order, payment: OrderPayment) -> None:
    """A payment recorded as ``refunded`` came back already: its refund is recorded with it,
    so the order's money (payments less refunds) stays right."""
    refund = OrderRefund(
        order_id=order.id,
        local_id=max((r.local_id for r in order.refunds), default=0) + 1,
        state="done",
        source="external",
        amount=payment.amount,
        payment_id=payment.id,
        provider=payment.provider,
        comment="Recorded as refunded with the payment.",
        created=payment.created,
        execution_date=payment.payment_date,
        info={},
    )
    session.add(refund)
    order.refunds.append(refund)


# -- gift cards -------------------------------------------------------------------------------


async def _usable_card(
    session: AsyncSession, event: Event, order: Order, info: dict[str, Any]
) -> dict[str, Any]:
    """The card named in ``info`` (``gift_card``: its id, or ``gift_card_secret``), if this
    event may take it: the organizer's own or an accepted issuer's, not expired, in the
    event's currency, and a test card exactly for a test order. Returns what the payment
    records of it."""
    ref = info.get("gift_card")
    if isinstance(ref, dict):  # the ``details`` of an earlier payment sent back
        ref = ref.get("id")
    secret = info.get("gift_card_secret")
    query = (
        select(GiftCard, Organizer.slug)
        .join(Organizer, Organizer.id == GiftCard.issuer_id)
        .where(cards.visible(event.organizer_id, True))
    )
    if isinstance(ref, int) and not isinstance(ref, bool):
        if not 0 < ref < 2**31:
            raise FieldErrors.single("info", CARD_UNKNOWN)
        query = query.where(GiftCard.id == ref)
    elif isinstance(secret, str) and secret.strip() and "\x00" not in secret:
        query = query.where(func.lower(GiftCard.secret) == func.lower(secret.strip()))
    else:
        raise FieldErrors.single(
            "info",
            "A gift card payment names its card: info.gift_card (its id) or info.gift_card_secret.",
        )
    # Secrets are unique per issuer only: the organizer's own card wins over an accepted one.
    row = (
        await session.execute(
            query.order_by(GiftCard.issuer_id != event.organizer_id, GiftCard.id).limit(1)
        )
    ).first()
    if row is None:
        raise FieldErrors.single("info", CARD_UNKNOWN)
    card, issuer_slug = row
    if card.expires is not None and card.expires < utcnow():
        raise FieldErrors.single("info", "This gift card has expired.")
    if card.currency != event.currency:
        raise FieldErrors.single("info", "This gift card is in a different currency.")
    if card.testmode != order.testmode:
        raise FieldErrors.single(
            "info",
            "Only test gift cards can pay test orders."
            if order.testmode
            else "A test gift card can only pay test orders.",
        )
    return {"id": card.id, "secret": card.secret, "organizer": issuer_slug}


def card_of(payment: OrderPayment) -> dict[str, Any] | None:
    """The card a gift card payment used (recorded when it was created), if any."""
    card = (payment.info or {}).get("gift_card")
    if payment.provider != GIFTCARD or not isinstance(card, dict):
        return None
    return card if isinstance(card.get("id"), int) else None


async def debit(
    session: AsyncSession, organizer_id: int, order: Order, payment: OrderPayment
) -> None:
    """Takes the payment's amount from its card: one guarded UPDATE decides (never below
    zero, still visible to the organizer, not expired), then the transaction row. 409 when
    the card's credit is short, 400 when the card can no longer be used."""
    card = card_of(payment)
    if card is None:
        raise FieldErrors.single("info", "This gift card payment does not name its card.")
    new_value = func.round(GiftCard.value - payment.amount, 2, type_=GiftCard.value.type)
    now = utcnow()
    guarded = (
        update(GiftCard)
        .where(
            GiftCard.id == card["id"],
            cards.visible(organizer_id, True),
            or_(GiftCard.expires.is_(None), GiftCard.expires >= now),
            new_value >= 0,
        )
        .values(value=new_value)
        .returning(GiftCard.id)
        .execution_options(synchronize_session=False)
    )
    if (await session.execute(guarded)).first() is None:
        usable = await session.scalar(
            select(GiftCard.id).where(
                GiftCard.id == card["id"],
                cards.visible(organizer_id, True),
                or_(GiftCard.expires.is_(None), GiftCard.expires >= now),
            )
        )
        if usable is None:
            raise FieldErrors.single("info", "This gift card can no longer be used here.")
        raise FieldErrors.single("amount", cards.INSUFFICIENT_CREDIT, status=409)
    cards.record(
        session,
        card["id"],
        -payment.amount,
        organizer_id,
        order_id=order.id,
        payment_id=payment.id,
        info={"order": order.code, "payment": payment.local_id},
    )


async def credit(
    session: AsyncSession, organizer_id: int, order: Order, payment: OrderPayment, amount: Decimal
) -> dict[str, Any]:
    """Gives ``amount`` back to the card the payment used (a refund), with its transaction
    row. The card is the one stored on the payment, so a later change of acceptances or its
    expiry does not keep money from going back where it came from."""
    card = card_of(payment)
    if card is None:
        raise bad("This gift card payment does not name its card: refund it by hand.")
    new_value = func.round(GiftCard.value + amount, 2, type_=GiftCard.value.type)
    guarded = (
        update(GiftCard)
        .where(GiftCard.id == card["id"], new_value <= cards.MAX_VALUE)
        .values(value=new_value)
        .returning(GiftCard.id)
        .execution_options(synchronize_session=False)
    )
    if (await session.execute(guarded)).first() is None:
        raise bad("The gift card of this payment cannot take the refund.")
    cards.record(
        session,
        card["id"],
        amount,
        organizer_id,
        order_id=order.id,
        payment_id=payment.id,
        info={"order": order.code, "refund_of_payment": payment.local_id},
    )
    return card
