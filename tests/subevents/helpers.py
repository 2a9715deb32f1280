"""Test data for dates and meta properties, written straight to the database."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from admit.models import (
    Event,
    EventMetaProperty,
    Item,
    ItemVariation,
    Organizer,
    SubEvent,
    SubEventItem,
    SubEventItemVariation,
)
from tests.factories import Factory


async def meta_property(
    factory: Factory, organizer: Organizer, name: str, **kw: Any
) -> EventMetaProperty:
    prop = EventMetaProperty(organizer_id=organizer.id, name=name, **kw)
    return await factory._add(prop)  # type: ignore[return-value]


async def series(factory: Factory, organizer: Organizer, slug: str, **kw: Any) -> Event:
    return await factory.event(organizer, slug, has_subevents=True, **kw)


async def item(factory: Factory, event: Event, name: str = "Ticket", **kw: Any) -> Item:
    kw.setdefault("default_price", Decimal("23.00"))
    return await factory._add(Item(event_id=event.id, name={"en": name}, **kw))  # type: ignore[return-value]


async def variation(factory: Factory, item_: Item, value: str = "Red") -> ItemVariation:
    return await factory._add(ItemVariation(item_id=item_.id, value={"en": value}))  # type: ignore[return-value]


async def subevent(
    factory: Factory,
    event: Event,
    name: str = "Date",
    *,
    items: list[Item] = (),  # type: ignore[assignment]
    variations: list[ItemVariation] = (),  # type: ignore[assignment]
    **kw: Any,
) -> SubEvent:
    kw.setdefault("date_from", dt.datetime(2030, 6, 1, 10, tzinfo=dt.UTC))
    async with factory.sessionmaker() as session:
        sub = SubEvent(event_id=event.id, name={"en": name}, **kw)
        session.add(sub)
        await session.flush()
        for it in items:
            session.add(SubEventItem(subevent_id=sub.id, item_id=it.id, price=Decimal("9.50")))
        for var in variations:
            session.add(SubEventItemVariation(subevent_id=sub.id, variation_id=var.id, price=None))
        await session.commit()
        return sub
