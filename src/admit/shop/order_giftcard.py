"""Paying a pending order with a gift card afterwards, from its order page.

The card is looked up and row-locked (after the order's own lock, the order every payment
path takes them in), so payments of one card queue and each sees what the others left: a
card shared by several orders at once is taken down to zero and never below. The payment is
the API's (``orders.payments.create``, confirmed): its guarded debit, the paid hooks (the
buyer's "paid" mail, invoices) and the same notifications as a payment confirmed through the
API. A card that covers less than what is owed pays what it holds; the rest stays pending.
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.events.settings import value
from admit.giftcards import service as cards
from admit.kit.http.errors import FieldErrors
from admit.models import Event, GiftCard, Order
from admit.notifications.notify import notify_all
from admit.orders import payments as order_payments
from admit.orders.money_schemas import PaymentIn
from admit.orders.rows import PAID, PAYMENT_CONFIRMED
from admit.payments.settings import GIFTCARD_ENABLED
from admit.vouchers import usage as voucher_usage

FIELD = "gift_card"
NO_CREDIT = "This gift card has no credit left."
NOT_WAITING = "This order is not waiting for a payment."
NOT_ACCEPTED = "Gift cards are not accepted for this event."


def offered(event: Event, order: Order) -> bool:
    """Whether the order page offers paying with a gift card."""
    return (
        order.status == "n"
        and not order.require_approval
        and bool(value(event, GIFTCARD_ENABLED))
        and order_payments.owed(order) > 0
    )


def _refuse(message: str) -> FieldErrors:
    return FieldErrors.single(FIELD, message)


async def _locked_card(session: AsyncSession, event: Event, code: str) -> GiftCard | None:
    # Secrets are unique per issuer only: the organizer's own card wins over an accepted one.
    return (
        await session.scalars(
            select(GiftCard)
            .where(
                cards.visible(event.organizer_id, True),
                func.lower(GiftCard.secret) == code.lower(),
            )
            .order_by(GiftCard.issuer_id != event.organizer_id, GiftCard.id)
            .limit(1)
            .with_for_update(of=GiftCard)
            .execution_options(populate_existing=True)
        )
    ).first()


async def pay(session: AsyncSession, event: Event, order: Order, code: str) -> Decimal:
    """Pays the (locked) pending order from the card ``code`` as far as its credit goes;
    returns the amount taken. Raises FieldErrors at ``gift_card`` with a sentence."""
    code = code.strip()
    if order.status != "n" or order_payments.owed(order) <= 0:
        raise _refuse(NOT_WAITING)
    if order.require_approval:
        raise _refuse("This order is not yet approved: it cannot be paid yet.")
    if not value(event, GIFTCARD_ENABLED):
        raise _refuse(NOT_ACCEPTED)
    if not code or len(code) > 190 or "\x00" in code:
        raise _refuse("Enter the code of your gift card.")
    card = await _locked_card(session, event, code)
    if card is None:
        raise _refuse(order_payments.CARD_UNKNOWN)
    if card.expires is not None and card.expires < utcnow():
        raise _refuse("This gift card has expired.")
    if card.currency != event.currency:
        raise _refuse(
            f"This gift card is in {card.currency}, but this order is paid in {event.currency}."
        )
    if card.value <= 0:
        raise _refuse(NO_CREDIT)
    amount = min(card.value, order_payments.owed(order))
    entry = PaymentIn(
        state="confirmed", amount=amount, provider="giftcard", info={"gift_card": card.id}
    )
    try:
        await order_payments.create(session, event, order, entry)
    except FieldErrors as exc:
        raise FieldErrors(
            {FIELD: [m for ms in dict(exc.errors).values() for m in ms]}, status=exc.status
        ) from None
    _rest_pending(order)
    order.last_modified = utcnow()
    await session.flush()
    actions = [PAYMENT_CONFIRMED]
    if order.status == "p":
        await voucher_usage.sync_order(session, order)
        actions.append(PAID)
    await notify_all(
        session, actions, organizer_id=event.organizer_id, event_id=event.id, code=order.code
    )
    return amount


def _rest_pending(order: Order) -> None:
    """The order's open payment (bank transfer, from the checkout) now expects the rest; a
    paid order expects nothing more."""
    rest = order_payments.owed(order)
    for payment in order.payments:
        if payment.state not in ("created", "pending") or payment.provider == "giftcard":
            continue
        if rest > 0:
            payment.amount = rest
        else:
            order_payments.cancel(payment)
