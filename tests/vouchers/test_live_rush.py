"""Vouchers and the waiting list under concurrency, against a real server process with two
workers (PostgreSQL only): only the row locks keep the requests of different processes apart.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import httpx
import pytest

from admit.db import utcnow
from admit.models import WaitingListEntry
from tests.factories import auth
from tests.live import LiveServer, gather_limited
from tests.vouchers import helpers as h

CLIENTS = 50


def _url(live: LiveServer, suffix: str) -> str:
    return f"/api/v1/organizers/{live.world.org.slug}/events/{live.world.event.slug}/{suffix}"


async def _statuses(live: LiveServer, calls: list) -> Counter:
    return Counter(r.status_code for r in await gather_limited(calls, CLIENTS))


async def _post(client: httpx.AsyncClient, url: str, **kw: Any) -> httpx.Response:
    """POST as a well-behaved client does: a 409 (lock not had in time, as on a machine under
    load) is retried after ``Retry-After``."""
    for _ in range(20):
        response = await client.post(url, **kw)
        if response.status_code != 409:
            return response
        await asyncio.sleep(float(response.headers.get("retry-after", "1")))
    return response


async def test_50_orders_on_a_voucher_for_10_redeem_it_exactly_10_times(live_server: LiveServer):
    live = live_server
    ticket = await h.item(live.factory, live.world.event)
    await h.quota(live.factory, live.world.event, 1000, [ticket])
    v = await h.voucher(live.factory, live.world.event, "RUSH10", max_usages=10)
    headers = auth(live.world.admin)
    async with live.client(connections=CLIENTS) as client:
        body = h.order_body(ticket.id, voucher="RUSH10")
        calls = [lambda: _post(client, _url(live, "orders/"), json=body, headers=headers)] * 50
        statuses = await _statuses(live, calls)
    assert statuses == {201: 10, 400: 40}, statuses
    assert (await h.fetch(live.factory, v.id)).redeemed == 10
    used = await live.scalar("SELECT count(*) FROM order_positions WHERE voucher_id = :v", v=v.id)
    assert used == 10


async def test_50_cart_positions_on_a_voucher_for_10_hold_it_exactly_10_times(
    live_server: LiveServer,
):
    live = live_server
    ticket = await h.item(live.factory, live.world.event)
    await h.quota(live.factory, live.world.event, 1000, [ticket])
    v = await h.voucher(live.factory, live.world.event, "CART10", max_usages=10)
    headers = auth(live.world.admin)
    async with live.client(connections=CLIENTS) as client:
        body = {"item": ticket.id, "price": "5.00", "voucher": "CART10"}
        calls = [
            lambda: _post(client, _url(live, "cartpositions/"), json=body, headers=headers)
        ] * 50
        statuses = await _statuses(live, calls)
        assert statuses == {201: 10, 400: 40}, statuses
        # Orders now find the voucher used up by the carts.
        r = await client.post(
            _url(live, "orders/"), json=h.order_body(ticket.id, voucher="CART10"), headers=headers
        )
        assert r.status_code == 400
    held = await live.scalar("SELECT count(*) FROM cart_positions WHERE voucher_id = :v", v=v.id)
    assert held == 10


async def test_concurrent_send_voucher_assigns_exactly_one(live_server: LiveServer):
    live = live_server
    ticket = await h.item(live.factory, live.world.event)
    await h.quota(live.factory, live.world.event, 5, [ticket])
    entry = await live.factory._add(
        WaitingListEntry(
            event_id=live.world.event.id, item_id=ticket.id, email="w@example.org", created=utcnow()
        )
    )
    headers = auth(live.world.admin)
    async with live.client(connections=CLIENTS) as client:
        url = _url(live, f"waitinglistentries/{entry.id}/send_voucher/")  # type: ignore[attr-defined]
        statuses = await _statuses(live, [lambda: _post(client, url, headers=headers)] * 30)
    assert statuses == {204: 1, 400: 29}, statuses
    assert await live.scalar("SELECT count(*) FROM vouchers") == 1
    assert await live.scalar("SELECT count(*) FROM outgoing_mails") == 1


# A plain order and a plain cart position: the fast lanes' database functions on PostgreSQL,
# which count what blocking vouchers hold under the quota lock.
SALES = {
    "orders": ("orders/", "pending_orders", "order_positions"),
    "carts": ("cartpositions/", "cart_positions", "cart_positions"),
}


def _sale_body(sale: str, item_id: int) -> dict[str, Any]:
    return h.order_body(item_id) if sale == "orders" else {"item": item_id, "price": "10.00"}


@pytest.mark.parametrize("sale", SALES)
async def test_concurrent_blocking_vouchers_and_sales_never_over_block(
    live_server: LiveServer, sale: str
):
    """Vouchers blocking quota, created in parallel with sales for the same quota: together
    they never take more than the quota holds."""
    live = live_server
    path, counter, table = SALES[sale]
    ticket = await h.item(live.factory, live.world.event)
    quota = await h.quota(live.factory, live.world.event, 20, [ticket])
    headers = auth(live.world.admin)
    async with live.client(connections=CLIENTS) as client:

        def call(i: int):
            if i % 2:
                body = {"item": ticket.id, "block_quota": True, "max_usages": 1}
                return lambda: _post(client, _url(live, "vouchers/"), json=body, headers=headers)
            body = _sale_body(sale, ticket.id)
            return lambda: _post(client, _url(live, path), json=body, headers=headers)

        statuses = await _statuses(live, [call(i) for i in range(60)])
        assert statuses[201] == 20 and statuses[400] == 40, statuses
        r = await client.get(_url(live, f"quotas/{quota.id}/availability/"), headers=headers)
    state = r.json()
    assert state["available_number"] == 0
    assert state["blocking_vouchers"] + state[counter] == 20
    vouchers = await live.scalar("SELECT count(*) FROM vouchers WHERE block_quota")
    sold = await live.scalar(f"SELECT count(*) FROM {table}")
    assert vouchers + sold == 20


async def _quota_of_20_with_10_held(live: LiveServer) -> tuple[Any, Any]:
    """A ticket on a quota of 20 and the voucher ``HOLD10`` blocking 10 of them."""
    ticket = await h.item(live.factory, live.world.event)
    quota = await h.quota(live.factory, live.world.event, 20, [ticket])
    await h.voucher(
        live.factory, live.world.event, "HOLD10", item_id=ticket.id, block_quota=True, max_usages=10
    )
    return ticket, quota


async def test_plain_carts_beside_a_blocking_voucher_get_only_the_units_it_leaves(
    live_server: LiveServer,
):
    """A voucher holding 10 of 20 units, 50 plain cart positions at once (the cart lane):
    exactly 10 are sold, the voucher's 10 stay held."""
    live = live_server
    ticket, quota = await _quota_of_20_with_10_held(live)
    headers = auth(live.world.admin)
    async with live.client(connections=CLIENTS) as client:
        body = _sale_body("carts", ticket.id)
        statuses = await _statuses(
            live,
            [
                lambda: _post(client, _url(live, "cartpositions/"), json=body, headers=headers)
                for _ in range(50)
            ],
        )
        r = await client.get(_url(live, f"quotas/{quota.id}/availability/"), headers=headers)
    assert statuses == {201: 10, 400: 40}, statuses
    state = r.json()
    assert (state["cart_positions"], state["blocking_vouchers"]) == (10, 10)
    assert state["available_number"] == 0
    assert await live.scalar("SELECT count(*) FROM cart_positions") == 10


async def test_orders_redeeming_a_blocking_voucher_alongside_a_sellout(live_server: LiveServer):
    """A voucher holding 10 units, 50 holders and 50 buyers without it at once: the holders
    get exactly 10, the others exactly the 10 units left, the quota is never oversold."""
    live = live_server
    ticket, quota = await _quota_of_20_with_10_held(live)
    headers = auth(live.world.admin)
    async with live.client(connections=CLIENTS) as client:

        def call(i: int):
            body = h.order_body(ticket.id, voucher="HOLD10" if i % 2 else None)
            return lambda: _post(client, _url(live, "orders/"), json=body, headers=headers)

        responses = await gather_limited([call(i) for i in range(100)], CLIENTS)
        r = await client.get(_url(live, f"quotas/{quota.id}/availability/"), headers=headers)
    with_voucher = Counter(r.status_code for i, r in enumerate(responses) if i % 2)
    without = Counter(r.status_code for i, r in enumerate(responses) if not i % 2)
    assert with_voucher == {201: 10, 400: 40}, with_voucher
    assert without == {201: 10, 400: 40}, without
    state = r.json()
    assert state["pending_orders"] == 20 and state["blocking_vouchers"] == 0
    assert state["available_number"] == 0
