"""A card's transactions rendered from rows (``giftcards/render.py``) show each stored
transaction as the API always has: its value with two places, its time, the order (code and
event) it paid or refunded, its text and info, and the organizer that made it."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import select

from admit.models import GiftCardTransaction, Order
from tests.factories import Factory, World, auth
from tests.giftcards import helpers as gh
from tests.orders import helpers as oh


def _expected(t: GiftCardTransaction, orders: dict[int, str], slugs: dict[int, str]) -> Any:
    return {
        "id": t.id,
        "datetime": t.datetime.isoformat().replace("+00:00", "Z"),
        "value": f"{t.value:.2f}",
        "event": "summit" if t.order_id else None,
        "order": orders.get(t.order_id) if t.order_id else None,
        "text": t.text,
        "info": t.info,
        "acceptor": slugs.get(t.acceptor_id) if t.acceptor_id else None,
    }


async def test_transactions_render_every_field(
    client: httpx.AsyncClient, world: World, factory: Factory
) -> None:
    h = auth(world.admin)
    card = await gh.card(factory, world.org, "100.00")
    await gh.accept(factory, world.org, world.other)
    item = await oh.item(factory, world.event, "12.00")
    order = await client.post(oh.url(world), json=oh.body(item.id), headers=h)
    assert order.status_code == 201, order.text
    url = gh.cards_url(world.org, f"{card.id}/")
    r = await client.post(
        f"{url}transact/", json={"value": "-7.5", "text": "Café", "info": {"a": [1]}}, headers=h
    )
    assert r.status_code == 200, r.text
    rival = gh.cards_url(world.other, f"{card.id}/transact/?include_accepted=true")
    assert (
        await client.post(rival, json={"value": "2.25"}, headers=auth(world.outsider))
    ).status_code == 200
    async with factory.sessionmaker() as s:
        order_id = await s.scalar(select(Order.id).where(Order.code == order.json()["code"]))
        s.add(
            GiftCardTransaction(
                card_id=card.id,
                value=Decimal("-1.10"),
                order_id=order_id,
                datetime=dt.datetime(2031, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC),
                text=None,
                info=None,
            )
        )
        await s.commit()
        rows = list(
            await s.scalars(
                select(GiftCardTransaction)
                .where(GiftCardTransaction.card_id == card.id)
                .order_by(GiftCardTransaction.datetime, GiftCardTransaction.id)
            )
        )
        orders = {o.id: o.code for o in await s.scalars(select(Order))}
    slugs = {world.org.id: world.org.slug, world.other.id: world.other.slug}
    expected = [_expected(t, orders, slugs) for t in rows]
    assert len(expected) >= 4 and any(e["order"] for e in expected)
    assert {e["acceptor"] for e in expected} >= {"acme", "rival", None}
    listed = await client.get(f"{url}transactions/", headers=h)
    assert listed.status_code == 200 and listed.json()["results"] == expected
    page = await client.get(f"{url}transactions/?page_size=2&page=2", headers=h)
    assert page.json()["results"] == expected[2:4] and page.json()["count"] == len(expected)
    assert (await client.get(f"{url}transactions/?page=9", headers=h)).status_code == 404
