"""Gift cards bought as products: items with ``issue_giftcard`` issue a card once paid.

:func:`issue_for_paid_order` is the hook the order code calls when an order becomes paid
(mark_paid, or creation with status paid), inside the same database transaction. It is
idempotent: a position that already issued its card issues no second one, so calling it again
after a reactivation or a repeated payment is harmless.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.giftcards.service import CREATED, new_secret, record
from admit.models import Event, GiftCard, Item, Order, OrderPosition
from admit.notifications.notify import notify_each
from admit.orders import hooks


async def issue_for_paid_order(session: AsyncSession, order: Order) -> list[GiftCard]:
    """One card per live position of a gift-card product, worth what was paid for it."""
    rows = (
        await session.execute(
            select(OrderPosition.id, OrderPosition.price)
            .join(Item, Item.id == OrderPosition.item_id)
            .where(
                OrderPosition.order_id == order.id,
                OrderPosition.canceled.is_(False),
                Item.issue_giftcard.is_(True),
                ~exists().where(GiftCard.issued_in_id == OrderPosition.id),
            )
            .order_by(OrderPosition.positionid)
        )
    ).all()
    if not rows:
        return []
    organizer_id, currency = (
        await session.execute(
            select(Event.organizer_id, Event.currency).where(Event.id == order.event_id)
        )
    ).one()
    issued = []
    for position_id, price in rows:
        card = GiftCard(
            issuer_id=organizer_id,
            secret=await new_secret(session, organizer_id),
            currency=currency,
            testmode=order.testmode,
            value=price,
            issued_in_id=position_id,
        )
        session.add(card)
        await session.flush()
        record(session, card.id, price, organizer_id, order_id=order.id)
        issued.append(card)
    await session.flush()
    await notify_each(
        session, CREATED, [{"giftcard": c.id} for c in issued], organizer_id=organizer_id
    )
    return issued


async def _on_paid(session: AsyncSession, order: Order, _positions: object) -> None:
    await issue_for_paid_order(session, order)


def _idle(_event: Event, items: Sequence[Item], _order: object) -> bool:
    return not any(item.issue_giftcard for item in items)


hooks.register(hooks.order_paid_hooks, _on_paid, idle=_idle)
