"""The sales ledger never drifts: a long random walk through every operation that changes what
orders and carts take, checked against a recount after each step (the ``client`` fixture also
checks after every API test of the suite)."""

from __future__ import annotations

import datetime as dt
import random

from admit.carts.service import purge_expired
from admit.db import utcnow
from admit.quotas import ledger
from tests.carts import helpers as carts_h
from tests.factories import World, auth
from tests.orders import helpers as orders_h

STEPS = 120


async def _drift(factory) -> dict:
    async with factory.sessionmaker() as session:
        return await ledger.drift(session)


async def _recounted_taken(factory, item_ids: list[int]) -> int:
    """Units taken per a recount from the rows (expired carts not yet purged included)."""
    async with factory.sessionmaker() as session:
        totals = await ledger.recount(session)
    return sum(sum(t) for k, t in totals.items() if k[0] in item_ids)


async def test_random_walk_keeps_ledger_equal_to_recount(client, world: World, factory):
    rng = random.Random(20261121)
    ticket = await orders_h.item(factory, world.event, quota=False, name="Ticket")
    shirt = await orders_h.item(factory, world.event, quota=False, name="Shirt")
    size = 40
    quota = await factory.quota(world.event, size, items=[ticket, shirt], name="Shared")
    h = auth(world.admin)
    base = orders_h.url(world, "")
    orders: list[str] = []
    carts: list[int] = []

    async def new_order() -> None:
        positions = [{"item": rng.choice([ticket.id, shirt.id])} for _ in range(rng.randint(1, 3))]
        body = {"email": "a@example.org", "positions": positions, "status": rng.choice("np")}
        if body["status"] == "p":
            body["payment_provider"] = "manual"
        r = await client.post(f"{base}orders/", json=body, headers=h)
        assert r.status_code in (201, 400), r.text
        if r.status_code == 201:
            orders.append(r.json()["code"])

    async def action() -> None:
        if not orders:
            return
        code = rng.choice(orders)
        name = rng.choice(
            ["mark_paid", "mark_pending", "mark_expired", "mark_canceled", "reactivate", "extend"]
        )
        body: dict = {}
        if name == "extend":
            body = {"expires": (utcnow() + dt.timedelta(days=3)).isoformat()}
        if name == "mark_canceled" and rng.random() < 0.3:
            body = {"cancellation_fee": "1.00"}
        r = await client.post(f"{base}orders/{code}/{name}/", json=body, headers=h)
        assert r.status_code in (200, 400), r.text

    async def cancel_position() -> None:
        if not orders:
            return
        r = await client.get(f"{base}orders/{rng.choice(orders)}/", headers=h)
        live = [p["id"] for p in r.json()["positions"] if not p["canceled"]]
        if live:
            r = await client.delete(f"{base}orderpositions/{rng.choice(live)}/", headers=h)
            assert r.status_code in (204, 400), r.text

    async def new_cart() -> None:
        body = {"item": rng.choice([ticket.id, shirt.id]), "price": "1.00"}
        r = await client.post(f"{base}cartpositions/", json=body, headers=h)
        assert r.status_code in (201, 400), r.text
        if r.status_code == 201:
            carts.append(r.json()["id"])

    async def drop_cart() -> None:
        if carts:
            r = await client.delete(f"{base}cartpositions/{carts.pop()}/", headers=h)
            assert r.status_code in (204, 404), r.text

    async def expire_and_purge() -> None:
        if carts:
            await carts_h.expire(factory, rng.choice(carts))
        if rng.random() < 0.5:
            async with factory.sessionmaker() as session:
                await purge_expired(session, utcnow())
                await session.commit()

    async def delete_test_order() -> None:
        body = {
            "email": "t@example.org",
            "testmode": True,
            "positions": [{"item": ticket.id}],
        }
        r = await client.post(f"{base}orders/", json=body, headers=h)
        if r.status_code == 201:
            d = await client.delete(f"{base}orders/{r.json()['code']}/", headers=h)
            assert d.status_code == 204, d.text

    steps = [new_order] * 4 + [action] * 5 + [cancel_position, new_cart, new_cart, drop_cart]
    steps += [expire_and_purge, delete_test_order]
    for _ in range(STEPS):
        await rng.choice(steps)()
        assert await _drift(factory) == {}
        r = await client.get(f"{base}quotas/{quota.id}/availability/", headers=h)
        state = r.json()
        async with factory.sessionmaker() as session:
            stale = await _stale_carts(session)
        taken = await _recounted_taken(factory, [ticket.id, shirt.id]) - stale
        assert state["available_number"] == max(0, size - taken)
        assert state["available_number"] >= 0


async def _stale_carts(session) -> int:
    """Expired cart rows not yet purged: counted by the ledger, not by availability."""
    from sqlalchemy import func, select

    from admit.models import CartPosition

    return int(
        await session.scalar(
            select(func.count()).select_from(CartPosition).where(CartPosition.expires < utcnow())
        )
        or 0
    )
