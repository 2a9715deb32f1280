"""Quota rushes against a real server process with two workers (PostgreSQL).

Many clients at once, in separate API processes, each with its own database connection: only
the quota lock keeps them from selling more than exists.
"""

from __future__ import annotations

import random
from collections import Counter

from tests.carts import helpers as h
from tests.factories import auth
from tests.live import LiveServer, gather_limited

QUOTA = 100
REQUESTS = 400
CLIENTS = 64


def _event_url(live: LiveServer, suffix: str) -> str:
    return f"/api/v1/organizers/{live.world.org.slug}/events/{live.world.event.slug}/{suffix}"


async def _availability(live: LiveServer, quota_id: int) -> dict:
    async with live.client() as client:
        response = await client.get(
            _event_url(live, f"quotas/{quota_id}/availability/"), headers=auth(live.world.admin)
        )
    assert response.status_code == 200, response.text
    return response.json()


async def test_400_concurrent_carts_and_orders_sell_exactly_100(live_server: LiveServer):
    live = live_server
    ticket = await h.item(live.factory, live.world.event)
    quota = await h.quota(live.factory, live.world.event, QUOTA, [ticket], name="Rush")
    headers = auth(live.world.admin)
    cart = {"item": ticket.id, "price": "10.00"}
    order = {"email": "fan@example.org", "positions": [{"item": ticket.id}]}

    async with live.client(connections=CLIENTS) as client:

        def request(i: int):
            if i % 2:
                return lambda: client.post(
                    _event_url(live, "cartpositions/"), json=cart, headers=headers
                )
            return lambda: client.post(_event_url(live, "orders/"), json=order, headers=headers)

        responses = await gather_limited([request(i) for i in range(REQUESTS)], CLIENTS)

    statuses = Counter(r.status_code for r in responses)
    assert statuses == {201: QUOTA, 400: REQUESTS - QUOTA}, statuses
    state = await _availability(live, quota.id)
    assert state["available_number"] == 0 and state["available"] is False
    assert state["cart_positions"] + state["pending_orders"] == QUOTA
    sold = await live.scalar("SELECT count(*) FROM order_positions")
    carts = await live.scalar("SELECT count(*) FROM cart_positions")
    assert sold + carts == QUOTA


async def test_mixed_sales_and_cancellations_never_go_below_zero(live_server: LiveServer):
    """Orders, carts, cart deletions and order cancellations interleaved across processes;
    the published number never goes negative and always equals a recount."""
    live = live_server
    ticket = await h.item(live.factory, live.world.event)
    quota = await h.quota(live.factory, live.world.event, 50, [ticket], name="Mixed")
    headers = auth(live.world.admin)
    rng = random.Random(4)
    observed: list[int] = []

    async with live.client(connections=CLIENTS) as client:

        async def buy_then_maybe_cancel() -> int:
            r = await client.post(
                _event_url(live, "orders/"),
                json={"email": "a@example.org", "positions": [{"item": ticket.id}]},
                headers=headers,
            )
            if r.status_code == 201 and rng.random() < 0.5:
                code = r.json()["code"]
                c = await client.post(
                    _event_url(live, f"orders/{code}/mark_canceled/"), headers=headers
                )
                assert c.status_code == 200, c.text
            return r.status_code

        async def cart_then_maybe_delete() -> int:
            r = await client.post(
                _event_url(live, "cartpositions/"),
                json={"item": ticket.id, "price": "1.00"},
                headers=headers,
            )
            if r.status_code == 201 and rng.random() < 0.5:
                d = await client.delete(
                    _event_url(live, f"cartpositions/{r.json()['id']}/"), headers=headers
                )
                assert d.status_code == 204, d.text
            return r.status_code

        async def look() -> int:
            r = await client.get(
                _event_url(live, f"quotas/{quota.id}/availability/"), headers=headers
            )
            observed.append(r.json()["available_number"])
            return r.status_code

        calls = [
            [buy_then_maybe_cancel, cart_then_maybe_delete, look][rng.randrange(3)]
            for _ in range(300)
        ]
        statuses = Counter(await gather_limited(calls, CLIENTS))

    assert set(statuses) <= {200, 201, 400}, statuses
    assert observed and min(observed) >= 0
    state = await _availability(live, quota.id)
    live_orders = await live.scalar(
        "SELECT count(*) FROM order_positions p JOIN orders o ON o.id = p.order_id "
        "WHERE o.status IN ('n', 'p') AND NOT p.canceled"
    )
    carts = await live.scalar("SELECT count(*) FROM cart_positions WHERE expires >= now()")
    assert state["available_number"] == max(0, 50 - live_orders - carts)
    assert live_orders + carts <= 50
