"""Test data for tax rules, written straight to the database."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from admit.models import Event, Item, TaxRule
from tests.factories import Factory


async def add(factory: Factory, obj: Any) -> Any:
    async with factory.sessionmaker() as session:
        session.add(obj)
        await session.commit()
        return obj


async def tax_rule(factory: Factory, event: Event, **kw: Any) -> TaxRule:
    kw.setdefault("name", {"en": "VAT"})
    kw.setdefault("rate", Decimal("19.00"))
    return await add(factory, TaxRule(event_id=event.id, **kw))


async def item(factory: Factory, event: Event, **kw: Any) -> Item:
    kw.setdefault("name", {"en": "Ticket"})
    kw.setdefault("default_price", Decimal("23.00"))
    return await add(factory, Item(event_id=event.id, **kw))
