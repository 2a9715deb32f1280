"""What an order change does to money and to order identity: splitting positions off into a
new order, and the order's state once its total changed.

Split (as the reference does): the new order is a copy of the original's contact and settings
with a new code and secret and the moved positions (their ids, secrets and check-ins stay).
A paid original hands the moved value over as an offsetting pair — a done refund on the
original and a confirmed payment on the new order — so both stay paid; a pending original
leaves the new order pending with an open payment for its total.

After a change, a paid order that now holds less than its total goes back to pending (the
buyer owes the difference), and a pending order whose total is covered (or free) becomes paid.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Event, Order, OrderPayment, OrderPosition, OrderRefund
from admit.orders import codes
from admit.orders.create import default_expires
from admit.quotas import ledger

ZERO = Decimal("0.00")
OFFSETTING = "offsetting"
PAID = "service.event.order.paid"
PAYMENT_CONFIRMED = "service.event.order.payment.confirmed"
# Payments that brought money in, refunds that take it (or will take it) back out.
PAID_STATES = ("confirmed", "refunded")
REFUND_STATES = ("created", "transit", "external", "done")
OPEN_STATES = ("created", "pending")


async def net_paid(session: AsyncSession, order_id: int) -> Decimal:
    """What the order holds now: payments received less refunds done or under way."""
    paid = await session.scalar(
        select(func.coalesce(func.sum(OrderPayment.amount), 0)).where(
            OrderPayment.order_id == order_id, OrderPayment.state.in_(PAID_STATES)
        )
    )
    back = await session.scalar(
        select(func.coalesce(func.sum(OrderRefund.amount), 0)).where(
            OrderRefund.order_id == order_id, OrderRefund.state.in_(REFUND_STATES)
        )
    )
    return Decimal(paid or 0) - Decimal(back or 0)


async def _next_local_id(session: AsyncSession, model: type, order_id: int) -> int:
    top = await session.scalar(
        select(func.coalesce(func.max(model.local_id), 0)).where(  # type: ignore[attr-defined]
            model.order_id == order_id  # type: ignore[attr-defined]
        )
    )
    return int(top or 0) + 1


async def split_off(
    session: AsyncSession, order: Order, moving: Sequence[OrderPosition], now: dt.datetime
) -> Order:
    """Moves ``moving`` (live positions of ``order``) into a new order and returns it."""
    total = sum((p.price for p in moving), ZERO)
    new = Order(
        event_id=order.event_id,
        code=await codes.new_order_code(session, order.event_id),
        status=order.status,
        testmode=order.testmode,
        secret=codes.order_secret(),
        email=order.email,
        phone=order.phone,
        locale=order.locale,
        datetime=now,
        expires=order.expires,
        total=total,
        sales_channel=order.sales_channel,
        comment=order.comment,
        checkin_attention=order.checkin_attention,
        checkin_text=order.checkin_text,
        require_approval=order.require_approval,
        valid_if_pending=order.valid_if_pending,
        invoice_address=order.invoice_address,
        meta_info={"split_from": order.code},
        customer_id=order.customer_id,
        last_modified=now,
    )
    session.add(new)
    await session.flush()
    # The positions count for the new order from now on; the original's tracking (taken
    # when it was locked) sees them leave, so the ledger nets to no change.
    await ledger.track_orders(session, [new.id], new=True)
    for position in moving:
        position.order_id = new.id
    provider = "free" if total == 0 else OFFSETTING if order.status == "p" else "manual"
    paid = order.status == "p"
    if paid or total > 0:  # a free pending one becomes paid in settle()
        session.add(
            OrderPayment(
                order_id=new.id,
                local_id=1,
                state="confirmed" if paid else "created",
                amount=total,
                provider=provider,
                created=now,
                payment_date=now if paid else None,
                info={"orders": [order.code]} if provider == OFFSETTING else {},
            )
        )
    if paid and total > 0:
        session.add(
            OrderRefund(
                order_id=order.id,
                local_id=await _next_local_id(session, OrderRefund, order.id),
                state="done",
                source="admin",
                amount=total,
                provider=OFFSETTING,
                created=now,
                execution_date=now,
                info={"orders": [new.code]},
            )
        )
    await session.flush()
    return new


async def settle(session: AsyncSession, event: Event, order: Order, now: dt.datetime) -> list[str]:
    """Sets the order's state for its new total and returns the notification types that
    records (``paid``, and ``payment.confirmed`` for the free payment of an order that
    became free). Open payments are kept in step with what is still owed."""
    await session.flush()
    held = await net_paid(session, order.id)
    owed = max(order.total - held, ZERO)
    open_payments = list(
        await session.scalars(
            select(OrderPayment)
            .where(OrderPayment.order_id == order.id, OrderPayment.state.in_(OPEN_STATES))
            .order_by(OrderPayment.local_id)
        )
    )
    if order.status == "p" and owed > 0:
        order.status = "n"
        if order.expires < now:
            order.expires = default_expires(event, now)
        return []
    if order.status == "n" and owed == 0 and not order.require_approval:
        order.status = "p"
        for payment in open_payments:  # nothing more will come
            payment.state = "canceled"
        if held == 0:
            session.add(
                OrderPayment(
                    order_id=order.id,
                    local_id=await _next_local_id(session, OrderPayment, order.id),
                    state="confirmed",
                    amount=ZERO,
                    provider="free",
                    created=now,
                    payment_date=now,
                    info={},
                )
            )
            return [PAYMENT_CONFIRMED, PAID]
        return [PAID]
    if order.status == "n" and open_payments:
        open_payments[-1].amount = owed
    return []
