"""Test data for the quota tests (catalog, quotas, orders, carts), written straight to the DB."""

from __future__ import annotations

import datetime as dt
import itertools
import secrets
from decimal import Decimal
from typing import Any

import httpx

from admit.db import utcnow
from admit.models import (
    CartPosition,
    Event,
    Item,
    ItemVariation,
    Order,
    OrderPosition,
    Quota,
    SubEvent,
)
from admit.quotas import ledger
from tests.factories import Factory

BASE = "/api/v1/organizers/acme/events/summit"
QUOTAS = f"{BASE}/quotas/"

_codes = itertools.count(1)

# (item, variation or None, subevent or None)
Product = tuple[Item, ItemVariation | None, SubEvent | None]


def assert_errors(response: httpx.Response, *fields: str) -> dict[str, Any]:
    """A DRF-shaped 400 naming exactly ``fields``."""
    assert response.status_code == 400, response.text
    body = response.json()
    assert set(body) == set(fields), body
    for value in body.values():
        assert isinstance(value, list) and value, body
    return body


async def item(factory: Factory, event: Event, name: str = "Ticket", **kw: Any) -> Item:
    kw.setdefault("default_price", Decimal("23.00"))
    return await factory._add(Item(event_id=event.id, name={"en": name}, **kw))  # type: ignore[return-value]


async def variation(factory: Factory, item_: Item, value: str = "Red", **kw: Any) -> ItemVariation:
    return await factory._add(ItemVariation(item_id=item_.id, value={"en": value}, **kw))  # type: ignore[return-value]


async def subevent(factory: Factory, event: Event, name: str = "Date", **kw: Any) -> SubEvent:
    kw.setdefault("date_from", dt.datetime(2030, 6, 1, 10, tzinfo=dt.UTC))
    kw.setdefault("active", True)
    return await factory._add(SubEvent(event_id=event.id, name={"en": name}, **kw))  # type: ignore[return-value]


async def quota(
    factory: Factory,
    event: Event,
    size: int | None = 10,
    *,
    items: list[Item] = (),  # type: ignore[assignment]
    variations: list[ItemVariation] = (),  # type: ignore[assignment]
    subevent: SubEvent | None = None,
    **kw: Any,
) -> Quota:
    return await factory.quota(
        event, size, items=items, variations=variations, subevent=subevent, **kw
    )


def position_values(order: Order, n: int, product: Product, **kw: Any) -> OrderPosition:
    it, var, sub = product
    return OrderPosition(
        order_id=order.id,
        event_id=order.event_id,
        positionid=n,
        item_id=it.id,
        variation_id=var.id if var else None,
        subevent_id=sub.id if sub else None,
        price=Decimal("10.00"),
        secret=secrets.token_hex(16),
        web_secret=secrets.token_hex(16),
        pseudonymization_id=secrets.token_hex(5).upper(),
        **kw,
    )


async def order(
    factory: Factory,
    event: Event,
    status: str,
    products: list[Product],
    *,
    canceled: list[bool] | None = None,
) -> Order:
    """An order in ``status`` (n, p, e, c) with one position per product."""
    async with factory.sessionmaker() as session:
        obj = Order(
            event_id=event.id,
            code=f"C{next(_codes):05d}",
            status=status,
            secret=secrets.token_hex(16),
            expires=utcnow() + dt.timedelta(days=1),
        )
        session.add(obj)
        await session.flush()
        for n, product in enumerate(products, start=1):
            flag = bool(canceled and canceled[n - 1])
            session.add(position_values(obj, n, product, canceled=flag))
        await session.flush()
        await ledger.rebuild(session)  # written behind the API's back
        await session.commit()
        return obj


def cart_position(event_id: int, product: Product, expires: dt.datetime) -> CartPosition:
    it, var, sub = product
    return CartPosition(
        event_id=event_id,
        cart_id=f"{secrets.token_hex(8)}@api",
        expires=expires,
        item_id=it.id,
        variation_id=var.id if var else None,
        subevent_id=sub.id if sub else None,
        price=Decimal("10.00"),
    )


async def carts(
    factory: Factory, event: Event, product: Product, n: int = 1, *, minutes: int = 30
) -> None:
    """``n`` cart positions expiring in ``minutes`` (negative: already expired)."""
    expires = utcnow() + dt.timedelta(minutes=minutes)
    async with factory.sessionmaker() as session:
        session.add_all([cart_position(event.id, product, expires) for _ in range(n)])
        await session.flush()
        await ledger.rebuild(session)
        await session.commit()
