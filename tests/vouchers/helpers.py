"""Test data for the voucher and waiting list tests, written straight to the database."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import select

from admit.db import utcnow
from admit.models import Event, Item, ItemVariation, Quota, SubEvent, Voucher
from admit.quotas import availability
from tests.carts.helpers import quota  # noqa: F401  (the same helper, shared)
from tests.factories import Factory, World

BASE = "/api/v1/organizers/acme/events/summit"
VOUCHERS = f"{BASE}/vouchers/"
ORDERS = f"{BASE}/orders/"
CARTS = f"{BASE}/cartpositions/"
QUOTAS = f"{BASE}/quotas/"
ENTRIES = f"{BASE}/waitinglistentries/"
SETTINGS = f"{BASE}/waitinglist_settings/"


async def item(factory: Factory, event: Event, name: str = "Ticket", **kw: Any) -> Item:
    kw.setdefault("default_price", Decimal("20.00"))
    return await factory._add(Item(event_id=event.id, name={"en": name}, **kw))  # type: ignore[return-value]


async def variation(factory: Factory, item_: Item, value: str = "Red", **kw: Any) -> ItemVariation:
    return await factory._add(ItemVariation(item_id=item_.id, value={"en": value}, **kw))  # type: ignore[return-value]


async def subevent(factory: Factory, event: Event, name: str = "Date") -> SubEvent:
    sub = SubEvent(
        event_id=event.id,
        name={"en": name},
        date_from=dt.datetime(2030, 6, 1, tzinfo=dt.UTC),
        active=True,
    )
    return await factory._add(sub)  # type: ignore[return-value]


async def voucher(factory: Factory, event: Event, code: str = "SECRET1", **kw: Any) -> Voucher:
    kw.setdefault("created", utcnow())
    kw.setdefault("max_usages", 1)
    kw.setdefault("redeemed", 0)
    kw.setdefault("budget_used", Decimal("0.00"))
    return await factory._add(Voucher(event_id=event.id, code=code, **kw))  # type: ignore[return-value]


async def fetch(factory: Factory, voucher_id: int) -> Voucher:
    async with factory.sessionmaker() as session:
        found = await session.scalar(select(Voucher).where(Voucher.id == voucher_id))
        assert found is not None
        return found


async def available(factory: Factory, quota_: Quota) -> availability.Availability:
    async with factory.sessionmaker() as session:
        fresh = await session.get(Quota, quota_.id)
        assert fresh is not None
        return (await availability.count(session, [fresh]))[quota_.id]


def order_body(item_id: int, n: int = 1, voucher: str | None = None, **kw: Any) -> dict:
    position: dict[str, Any] = {"item": item_id}
    if voucher is not None:
        position["voucher"] = voucher
    return {"email": "fan@example.org", "positions": [dict(position) for _ in range(n)], **kw}


def url_of(world: World, suffix: str) -> str:
    return f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/{suffix}"
