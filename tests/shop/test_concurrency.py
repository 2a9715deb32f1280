"""Races on the checkout (meant for PostgreSQL, where the requests really overlap in the
database; on SQLite the same requests are serialised and must give the same answers).

- The last ticket, wanted by 20 checkouts at once, is sold once: twenty carts were made while
  the quota was large, then the quota shrank to one and the carts ran out, so every checkout
  must take the ticket itself under the quota lock.
- One gift card paying 12 orders at once never goes below zero: the guarded debit lets exactly
  as many through as its credit covers, and the card's transactions sum to what it lost.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal

from sqlalchemy import func, select, update

from admit.models import CartPosition, GiftCardTransaction, Item, Order, Quota
from admit.quotas import availability
from tests.conftest import asgi_client
from tests.shop import helpers as h

BUYERS = 20
CARD_ORDERS = 12


class InFlight:
    """Counts requests under way at once (the proof that the checkouts overlapped)."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0

    async def started(self, _request: object) -> None:
        self.now += 1
        self.most = max(self.most, self.now)

    async def ended(self, _response: object) -> None:
        self.now -= 1


async def _carts(client, world, item_id: int, count: int) -> list[str]:
    ids = []
    for _ in range(count):
        r = await h.cart(client, world, {"item": item_id})
        assert r.status_code == 201, r.text
        ids.append(r.json()["cart_id"])
    return ids


async def _rush(app, world, bodies: list[dict]) -> tuple[list, InFlight]:
    flight = InFlight()
    async with asgi_client(app, request_hooks=[flight.started], response_hooks=[flight.ended]) as c:
        answers = await asyncio.gather(
            *(c.post(f"{h.base(world)}/checkout/", json=b) for b in bodies)
        )
    return answers, flight


async def test_last_ticket_sells_once_to_twenty_checkouts(client, world, factory, clean_app):
    shop = await h.setup(factory, world, size=BUYERS)
    carts = await _carts(client, world, shop.ticket.id, BUYERS)
    async with factory.sessionmaker() as session:
        await session.execute(update(Quota).where(Quota.id == shop.quota.id).values(size=1))
        past = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
        await session.execute(update(CartPosition).values(expires=past))
        await session.commit()
    bodies = [
        {"cart_id": c, "email": f"b{i}@example.org", "payment_provider": "banktransfer"}
        for i, c in enumerate(carts)
    ]
    answers, flight = await _rush(clean_app, world, bodies)
    statuses = sorted(r.status_code for r in answers)
    assert statuses.count(201) == 1, [r.text for r in answers if r.status_code != 400][:3]
    refused = [r for r in answers if r.status_code != 201]
    assert all(r.status_code in (400, 409) for r in refused)
    assert any("not enough quota" in r.text for r in refused)
    async with factory.sessionmaker() as session:
        orders = await session.scalar(select(func.count()).select_from(Order))
        quota = await session.get(Quota, shop.quota.id)
        left = (await availability.count(session, [quota]))[quota.id].available_number
    assert orders == 1 and left == 0
    if not clean_app.state.db.is_sqlite:
        assert flight.most >= BUYERS // 2, f"only {flight.most} checkouts overlapped"


async def test_one_gift_card_paying_twelve_orders_never_goes_negative(
    client, world, factory, clean_app
):
    shop = await h.setup(factory, world, size=50, payment_banktransfer__enabled=False)
    ten = await factory._add(
        Item(event_id=shop.event.id, name={"en": "Ten"}, default_price=Decimal("10.00"))
    )
    await factory.quota(shop.event, 50, items=[ten], name="Ten")
    card = await h.gift_card(factory, world, "SHARED-CARD", "100.00")
    carts = await _carts(client, world, ten.id, CARD_ORDERS)
    bodies = [
        {
            "cart_id": c,
            "email": f"g{i}@example.org",
            "payment_provider": "giftcard",
            "payment_data": {"gift_card": "SHARED-CARD"},
        }
        for i, c in enumerate(carts)
    ]
    answers, flight = await _rush(clean_app, world, bodies)
    paid = [r for r in answers if r.status_code == 201]
    refused = [r for r in answers if r.status_code != 201]
    assert len(paid) == 10 and all(r.json()["status"] == "p" for r in paid)
    assert all(r.status_code in (400, 409) and "gift_card" in r.json() for r in refused), [
        r.text for r in refused
    ]
    assert await h.card_value(factory, card.id) == 0
    async with factory.sessionmaker() as session:
        moved = await session.scalar(
            select(func.sum(GiftCardTransaction.value)).where(
                GiftCardTransaction.card_id == card.id
            )
        )
        orders = await session.scalar(select(func.count()).select_from(Order))
    assert moved == -100 and orders == 10  # refused checkouts leave no order behind
    if not clean_app.state.db.is_sqlite:
        assert flight.most >= CARD_ORDERS // 2, f"only {flight.most} checkouts overlapped"


async def test_the_public_api_is_rate_limited_per_address(client, world, factory, clean_app):
    from admit.kit.http.ratelimit import Budget, MemoryStore

    await h.setup(factory, world)
    saved = getattr(clean_app.state, "shop_limiter", False)
    clean_app.state.shop_limiter = (MemoryStore(), Budget(3, 60.0))
    try:
        statuses = [(await client.get(f"{h.base(world)}/catalog/")).status_code for _ in range(4)]
        last = await client.get(f"{h.base(world)}/")
    finally:
        clean_app.state.shop_limiter = saved
    assert statuses == [200, 200, 200, 429]
    assert last.status_code == 429 and int(last.headers["Retry-After"]) >= 1
