"""Test data for the catalog item tests, written straight to the database."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import insert, select

from admit.models import Event, Item, ItemCategory, ItemVariation, TaxRule
from tests.factories import Factory, World, auth

BASE = "/api/v1/organizers/acme/events/summit"
OTHER = "/api/v1/organizers/rival/events/expo"


def url(path: str) -> str:
    return f"{BASE}/{path}"


def assert_errors(response: httpx.Response, *fields: str) -> dict[str, Any]:
    """A DRF-shaped 400 naming ``fields``."""
    assert response.status_code == 400, response.text
    body = response.json()
    assert isinstance(body, dict) and body, body
    for field in fields:
        assert field in body, body
    return body


async def tax_rule(factory: Factory, event: Event, rate: str, default: bool = False) -> TaxRule:
    async with factory.sessionmaker() as session:
        rule = TaxRule(event_id=event.id, name={"en": f"VAT {rate}"}, rate=Decimal(rate))
        rule.default = default
        session.add(rule)
        await session.commit()
        return rule


async def category(factory: Factory, event: Event, **kw: Any) -> ItemCategory:
    kw.setdefault("name", {"en": "Cat"})
    async with factory.sessionmaker() as session:
        obj = ItemCategory(event_id=event.id, **kw)
        session.add(obj)
        await session.commit()
        return obj


async def item(factory: Factory, event: Event, variations: int = 0, **kw: Any) -> Item:
    kw.setdefault("name", {"en": "Thing"})
    async with factory.sessionmaker() as session:
        obj = Item(event_id=event.id, **kw)
        session.add(obj)
        await session.flush()
        for n in range(variations):
            session.add(ItemVariation(item_id=obj.id, value={"en": f"V{n}"}, position=n))
        await session.commit()
        return obj


async def variation_ids(factory: Factory, item_id: int) -> list[int]:
    async with factory.sessionmaker() as session:
        query = select(ItemVariation.id).where(ItemVariation.item_id == item_id)
        return list((await session.execute(query.order_by(ItemVariation.id))).scalars())


async def bulk_items(factory: Factory, event: Event, count: int, variations: int) -> None:
    """``count`` items with ``variations`` variations each, inserted in two statements."""
    async with factory.sessionmaker() as session:
        rows = [
            {"event_id": event.id, "name": {"en": f"Item {n}"}, "position": n} for n in range(count)
        ]
        ids = list((await session.execute(insert(Item).returning(Item.id), rows)).scalars())
        await session.execute(
            insert(ItemVariation),
            [
                {"item_id": item_id, "value": {"en": f"V{v}"}, "position": v}
                for item_id in ids
                for v in range(variations)
            ],
        )
        await session.commit()


async def post(client: httpx.AsyncClient, world: World, path: str, body: dict) -> dict:
    if path == "items/":  # required; the tests here are about other fields
        body = {"default_price": "0.00", **body}
    response = await client.post(url(path), json=body, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    return response.json()
