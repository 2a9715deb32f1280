"""Test data for discounts, written straight to the database."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from admit.models import Discount, Event, Item
from tests.factories import Factory


async def item(factory: Factory, event: Event, **kw: Any) -> Item:
    kw.setdefault("name", {"en": "Ticket"})
    kw.setdefault("default_price", Decimal("23.00"))
    async with factory.sessionmaker() as session:
        obj = Item(event_id=event.id, **kw)
        session.add(obj)
        await session.commit()
        return obj


async def discount(
    factory: Factory,
    event: Event,
    condition_items: list[Item] = (),  # type: ignore[assignment]
    benefit_items: list[Item] = (),  # type: ignore[assignment]
    **kw: Any,
) -> Discount:
    async with factory.sessionmaker() as session:
        obj = Discount(event_id=event.id, **kw)
        obj.condition_limit_products = [await session.merge(i) for i in condition_items]
        obj.benefit_limit_products = [await session.merge(i) for i in benefit_items]
        session.add(obj)
        await session.commit()
        return obj
