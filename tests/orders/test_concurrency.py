"""A rush on one quota: 400 concurrent order creations for 100 tickets sell exactly 100."""

from __future__ import annotations

import asyncio

import pytest

from tests.factories import auth
from tests.orders import helpers as h


async def test_rush_sells_exactly_the_quota(client, world, factory, database_url):
    if not database_url.startswith("postgresql"):
        pytest.skip("concurrent writers only overlap on PostgreSQL (SQLite serialises them)")
    item = await h.item(factory, world.event, "10.00", quota=100)
    quota = await h.quota_of(factory, item.id)

    async def buy() -> int:
        r = await client.post(h.url(world), json=h.body(item.id), headers=auth(world.admin))
        return r.status_code

    statuses: list[int] = []
    for _ in range(8):
        statuses += await asyncio.gather(*(buy() for _ in range(50)))
    assert statuses.count(201) == 100, {s: statuses.count(s) for s in set(statuses)}
    assert set(statuses) <= {201, 400}
    assert await h.availability(client, world, factory, quota.id) == 0
    r = await client.get(h.url(world), headers=auth(world.admin))
    assert r.json()["count"] == 100


async def test_concurrent_state_changes_of_one_order_run_one_after_the_other(
    client, world, factory
):
    """20 simultaneous mark_paid on one pending order: one wins, the rest see it paid."""
    item = await h.item(factory, world.event, "10.00", quota=10)
    r = await client.post(h.url(world), json=h.body(item.id), headers=auth(world.admin))
    assert r.status_code == 201, r.text
    code = r.json()["code"]

    async def pay() -> int:
        resp = await client.post(
            f"{h.url(world)}{code}/mark_paid/", json={}, headers=auth(world.admin)
        )
        return resp.status_code

    statuses = await asyncio.gather(*(pay() for _ in range(20)))
    assert statuses.count(200) == 1, {s: statuses.count(s) for s in set(statuses)}
    assert set(statuses) <= {200, 400}
    order = (await client.get(f"{h.url(world)}{code}/", headers=auth(world.admin))).json()
    assert order["status"] == "p"
    assert [p["state"] for p in order["payments"]].count("confirmed") == 1
