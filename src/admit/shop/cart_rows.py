"""What the shop's cart steps read of a cart: its positions, and the products they name with
what the steps look at (variations, add-on categories, bundles), loaded at once."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.models import CartPosition, Event, Item


async def cart_positions(session: AsyncSession, event: Event, cart_id: str) -> list[CartPosition]:
    """The cart's positions (expired ones included), oldest first."""
    return list(
        await session.scalars(
            select(CartPosition)
            .where(CartPosition.event_id == event.id, CartPosition.cart_id == cart_id)
            .order_by(CartPosition.id)
        )
    )


async def cart_items(session: AsyncSession, event: Event, ids: set[int]) -> dict[int, Item]:
    """The event's products of ``ids`` by id."""
    if not ids:
        return {}
    rows = await session.scalars(
        select(Item)
        .where(Item.event_id == event.id, Item.id.in_(ids))
        .options(
            selectinload(Item.variations), selectinload(Item.addons), selectinload(Item.bundles)
        )
    )
    return {i.id: i for i in rows}
