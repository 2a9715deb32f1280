"""Order refunds: money going back to the buyer.

A refund that is ``created``, in ``transit``, ``external`` (carried out elsewhere, to be
processed) or ``done`` holds its amount back from the order at once (see
:data:`~admit.orders.actions.HELD_REFUNDS`): so no two refunds can together return more than
a payment brought in, or more than the order holds, even when they are requested at the same
moment (the order's row lock serialises them). ``failed`` and ``canceled`` refunds hold nothing.

Admit talks to no payment processor but its own gift cards: a refund of a gift card payment
issued by an administrator credits the card when it becomes ``done`` (at once through the
payment's ``refund`` action); a refund for any other provider is recorded as ``created`` and
marked ``done`` by whoever sent the money. When a refund leaves a paid order short of its
total, the order returns to pending — or is canceled, when the caller asks for it.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.giftcards import service as cards
from admit.kit.http.errors import FieldErrors
from admit.models import Event, GiftCard, Order, OrderPayment, OrderRefund
from admit.notifications.notify import notify_each
from admit.orders import actions, payments
from admit.orders.create import PAYMENT_TERM_DAYS
from admit.orders.money_schemas import PaymentRefundIn, RefundIn
from admit.orders.payments import GIFTCARD, ZERO, bad
from admit.orders.schemas import CancelIn

# Notification types (the spec's refund types; ``requested`` is for refunds a buyer asks
# for in a shop, which Admit does not have).
CREATED = "service.event.order.refund.created"
CREATED_EXTERNALLY = "service.event.order.refund.created.externally"
DONE = "service.event.order.refund.done"
CANCELED = "service.event.order.refund.canceled"
FAILED = "service.event.order.refund.failed"
ORDER_CANCELED = "service.event.order.canceled"


def payment_refundable(order: Order, payment: OrderPayment) -> Decimal:
    """What may still go back for ``payment``: its amount less its held refunds, and never
    more than the order holds (an order canceled with a fee keeps the fee)."""
    if payment.state not in ("confirmed", "refunded"):
        return ZERO
    held = sum(
        (
            r.amount
            for r in order.refunds
            if r.payment_id == payment.id and r.state in actions.HELD_REFUNDS
        ),
        ZERO,
    )
    return max(min(payment.amount - held, actions.net_paid(order)), ZERO)


def order_refundable(order: Order) -> Decimal:
    return max(actions.net_paid(order), ZERO)


def _new(order: Order, **fields: object) -> OrderRefund:
    refund = OrderRefund(
        order_id=order.id,
        local_id=payments.next_local_id(order.refunds),
        created=utcnow(),
        **fields,
    )
    order.refunds.append(refund)
    return refund


def _payment_of(order: Order, refund: OrderRefund) -> OrderPayment | None:
    return next((p for p in order.payments if p.id == refund.payment_id), None)


async def _complete(
    session: AsyncSession, organizer_id: int, order: Order, refund: OrderRefund
) -> None:
    """The refund is carried out: an administrator's gift card refund credits its card."""
    payment = _payment_of(order, refund)
    if refund.provider == GIFTCARD and refund.source == "admin" and payment is not None:
        card = await payments.credit(session, organizer_id, order, payment, refund.amount)
        refund.info = {**(refund.info or {}), "gift_card": card}
    _finish(order, refund)


def _finish(order: Order, refund: OrderRefund) -> None:
    """Marks the refund done; a payment whose done refunds cover it becomes ``refunded``."""
    refund.state = "done"
    refund.execution_date = refund.execution_date or utcnow()
    payment = _payment_of(order, refund)
    if payment is None:
        return
    returned = sum(
        (r.amount for r in order.refunds if r.payment_id == payment.id and r.state == "done"),
        ZERO,
    )
    if returned >= payment.amount:
        payment.state = "refunded"


def _after_refund(
    session: AsyncSession, order: Order, mark_canceled: bool, pending: bool
) -> list[str]:
    """A paid (or payable) order that no longer holds its total: canceled when asked, else
    back to pending when ``pending`` (the payment's refund action, or ``mark_pending``)."""
    if actions.net_paid(order) >= order.total:
        return []
    if mark_canceled and order.status in ("n", "p", "e"):
        actions.mark_canceled(session, order, CancelIn())
        return [ORDER_CANCELED]
    if pending and order.status == "p":
        order.status = "n"
        # A payment term from now, as a new order gets: it owes money again.
        order.expires = max(order.expires, utcnow() + dt.timedelta(days=PAYMENT_TERM_DAYS))
    return []


def _amount(order: Order, payment: OrderPayment, asked: Decimal | None) -> Decimal:
    """What a refund of ``payment`` returns: the amount asked, or all that is refundable."""
    if payment.state != "confirmed":
        raise bad("Only confirmed payments can be refunded.")
    refundable = payment_refundable(order, payment)
    if refundable <= 0:
        raise bad("Nothing is left to refund on this payment.")
    amount = asked if asked is not None else refundable
    if amount > refundable:
        raise FieldErrors.single(
            "amount", f"Invalid refund amount, only {refundable:.2f} are available to refund."
        )
    return amount


def _of_payment(session: AsyncSession, order: Order, payment: OrderPayment, amount: Decimal,
                provider: str, info: dict[str, object]) -> OrderRefund:  # fmt: skip
    """A new refund of ``payment`` by an administrator (``created``; the caller completes it)."""
    refund = _new(order, state="created", source="admin", amount=amount, payment_id=payment.id,
                  provider=provider, info=info)  # fmt: skip
    session.add(refund)
    return refund


async def refund_to_new_card(
    session: AsyncSession,
    event: Event,
    order: Order,
    payment: OrderPayment,
    data: PaymentRefundIn,
) -> tuple[OrderRefund, list[str]]:
    """The back office's "refund to a new gift card": the money of (part of) a confirmed
    payment goes onto a new card of the organizer, in the event's currency and the order's
    mode, instead of back the way it came; the buyer spends it later. Done at once: the
    refund (provider ``giftcard``, ``info.gift_card`` naming the card) and the card's
    crediting transaction are written together. Returns the refund and the notification
    types of the order."""
    amount = _amount(order, payment, data.amount)
    organizer_id = event.organizer_id
    card = GiftCard(
        issuer_id=organizer_id,
        secret=await cards.new_secret(session, organizer_id),
        currency=event.currency,
        testmode=order.testmode,
        value=amount,
    )
    session.add(card)
    await session.flush()
    cards.record(session, card.id, amount, organizer_id, order_id=order.id, payment_id=payment.id,
                 info={"order": order.code, "refund_of_payment": payment.local_id})  # fmt: skip
    await notify_each(session, cards.CREATED, [{"giftcard": card.id}], organizer_id=organizer_id)
    card_info = {"gift_card": {"id": card.id, "secret": card.secret}}
    refund = _of_payment(session, order, payment, amount, GIFTCARD, card_info)
    _finish(order, refund)
    return refund, [CREATED, DONE, *_after_refund(session, order, data.mark_canceled, True)]


async def refund_payment(
    session: AsyncSession,
    organizer_id: int,
    order: Order,
    payment: OrderPayment,
    data: PaymentRefundIn,
) -> tuple[OrderRefund, list[str]]:
    """``…/payments/{id}/refund/``: a refund of (part of) a confirmed payment. A gift card
    payment goes back to its card at once (``done``); any other is ``created``, to be marked
    done when the money was sent. Returns the refund and the notification types."""
    amount = _amount(order, payment, data.amount)
    refund = _of_payment(session, order, payment, amount, payment.provider, {})
    notices = [CREATED]
    if payment.provider == GIFTCARD and payments.card_of(payment) is not None:
        await _complete(session, organizer_id, order, refund)
        notices.append(DONE)
    notices += _after_refund(session, order, data.mark_canceled, pending=True)
    return refund, notices


async def create(
    session: AsyncSession, organizer_id: int, order: Order, data: RefundIn
) -> tuple[OrderRefund, list[str]]:
    """``POST …/refunds/``: a refund recorded by hand, never more than is refundable."""
    payment = None
    if data.payment is not None:
        payment = next((p for p in order.payments if p.local_id == data.payment), None)
        if payment is None:
            raise FieldErrors.single(
                "payment", f'Invalid pk "{data.payment}" - object does not exist.'
            )
        if payment.state not in ("confirmed", "refunded"):
            raise FieldErrors.single("payment", "Only confirmed payments can be refunded.")
    if data.state in actions.HELD_REFUNDS:
        limit = payment_refundable(order, payment) if payment else order_refundable(order)
        if data.amount > limit:
            raise FieldErrors.single(
                "amount", f"Invalid refund amount, only {limit:.2f} are available to refund."
            )
    carries_card = data.provider == GIFTCARD and data.source == "admin"
    if carries_card and data.state in ("created", "transit", "done"):
        if payment is None or payments.card_of(payment) is None:
            raise FieldErrors.single(
                "payment", "A gift card refund names the gift card payment it returns."
            )
    refund = _new(
        order,
        state="created" if data.state == "done" else data.state,
        source=data.source,
        amount=data.amount,
        payment_id=payment.id if payment else None,
        provider=data.provider,
        comment=data.comment,
        execution_date=data.execution_date.astimezone(dt.UTC) if data.execution_date else None,
        info=dict(data.info),
    )
    session.add(refund)
    notices = [CREATED_EXTERNALLY if data.source == "external" else CREATED]
    if data.state == "done":
        await _complete(session, organizer_id, order, refund)
        notices.append(DONE)
    elif data.state in ("failed", "canceled"):
        notices.append(FAILED if data.state == "failed" else CANCELED)
    notices += _after_refund(session, order, data.mark_canceled, pending=data.mark_pending)
    return refund, notices


async def done(
    session: AsyncSession, organizer_id: int, order: Order, refund: OrderRefund
) -> list[str]:
    """``…/refunds/{id}/done/``: the money was sent (a gift card is credited now)."""
    if refund.state not in ("created", "transit"):
        raise bad("Only refunds in state created or transit can be marked as done.")
    await _complete(session, organizer_id, order, refund)
    return [DONE]


def process(
    session: AsyncSession, order: Order, refund: OrderRefund, mark_canceled: bool
) -> list[str]:
    """``…/refunds/{id}/process/``: an external refund (money returned outside Admit) is
    taken into account: done, and the order canceled or back to pending if it is short."""
    if refund.state != "external":
        raise bad("Only external refunds can be processed.")
    _finish(order, refund)
    return [DONE, *_after_refund(session, order, mark_canceled, pending=True)]


def cancel(refund: OrderRefund) -> list[str]:
    """``…/refunds/{id}/cancel/``: the refund will not happen; its amount is free again."""
    if refund.state not in ("created", "transit", "external"):
        raise bad("Only refunds in state created, transit or external can be canceled.")
    refund.state = "canceled"
    return [CANCELED]
