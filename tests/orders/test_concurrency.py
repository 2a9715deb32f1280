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
