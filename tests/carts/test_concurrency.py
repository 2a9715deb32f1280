"""A rush on one quota: many cart requests at the same time never oversell.

The requests go through the in-process ASGI client concurrently (asyncio.gather); the app's
connection pool gives each its own database connection, so they overlap in the database and
only the quota lock taken by ``availability.reserve`` keeps them from overselling. On SQLite
the same requests are serialised by ``BEGIN IMMEDIATE``; the tests run (and pass) there too.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from tests.carts import helpers as h
from tests.factories import auth

QUOTA = 100
REQUESTS = 400
CONCURRENCY = 80  # not a divisor of QUOTA: the last places go inside a concurrent batch


async def _rush(client, world, body: dict, count: int) -> Counter[int]:
    statuses: Counter[int] = Counter()
    headers = auth(world.admin)
    for start in range(0, count, CONCURRENCY):
        batch = min(CONCURRENCY, count - start)
        responses = await asyncio.gather(
            *(client.post(h.url(world), json=body, headers=headers) for _ in range(batch))
        )
        statuses.update(r.status_code for r in responses)
        for r in responses:
            if r.status_code == 400:
                assert r.json() == {
                    "non_field_errors": ['There are no more tickets available in the quota "Rush".']
                }
    return statuses


async def test_rush_on_one_quota_sells_exactly_its_size(client, world, factory):
    ticket = await h.item(factory, world.event)
    quota = await h.quota(factory, world.event, QUOTA, [ticket], name="Rush")
    statuses = await _rush(client, world, {"item": ticket.id, "price": "1"}, REQUESTS)
    assert statuses == {201: QUOTA, 400: REQUESTS - QUOTA}
    assert await h.available(factory, quota) == 0
    assert await h.cart_rows(factory) == QUOTA


async def test_rush_with_addons_over_two_quotas(client, world, factory):
    """Parents and add-ons in different quotas, taken together: no partial writes either."""
    ticket = await h.item(factory, world.event, "Ticket")
    shirt = await h.item(factory, world.event, "Shirt")
    tickets = await h.quota(factory, world.event, 60, [ticket], name="Tickets")
    shirts = await h.quota(factory, world.event, 40, [shirt], name="Rush")
    body = {"item": ticket.id, "price": "1", "addons": [{"item": shirt.id, "price": "1"}]}
    statuses = await _rush(client, world, body, 100)
    assert statuses == {201: 40, 400: 60}
    assert await h.available(factory, shirts) == 0
    assert await h.available(factory, tickets) == 20
    assert await h.cart_rows(factory) == 80
