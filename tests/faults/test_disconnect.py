"""Clients that hang up in the middle of creating an order with several positions.

Hung up while sending the body: no order. Hung up after sending it (at once, a little later,
with a reset or a clean close): the whole order or none of it, never a part of its positions,
and the sales ledger equals a recount. The server serves on.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time
from pathlib import Path

import orjson
import pytest
from sqlalchemy import text

from tests.carts import helpers as carts
from tests.factories import Factory, World, auth
from tests.faults.site import NOT_ON_PG, PG_URL, Site, open_site

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not PG_URL, reason=NOT_ON_PG)]

ATTEMPTS = 90
CONCURRENCY = 12
ORDER_SIZE = 4
QUOTA = 10_000
MODES = ("mid_body", "mid_body_reset", "after_body", "after_body_reset", "after_a_moment",
         "while_working", "while_working_reset")  # fmt: skip


async def _product(factory: Factory, world: World) -> tuple:
    item = await carts.item(factory, world.event, "Ticket")
    quota = await carts.quota(factory, world.event, QUOTA, [item], name="Plenty")
    return item, quota


async def _hang_up(site: Site, mode: str, email: str, item_id: int, rng: random.Random) -> None:
    body = orjson.dumps({"email": email, "positions": [{"item": item_id}] * ORDER_SIZE})
    head = (
        f"POST {site.event_url('orders/')} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Token {site.world.admin}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", site.server.port)
    if mode.startswith("mid_body"):
        writer.write(head + body[: rng.randrange(1, len(body))])
    else:
        writer.write(head + body)
    await writer.drain()
    if mode == "after_a_moment":
        await asyncio.sleep(rng.uniform(0.0, 0.3))
    elif mode.startswith("while_working"):
        # Long enough for the server to have read the body: it hangs up on work under way.
        await asyncio.sleep(rng.uniform(0.2, 1.5))
    if mode.endswith("reset"):
        # SO_LINGER 0: the close sends a reset instead of a clean end of stream.
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        writer.transport.abort()
    else:
        writer.close()
    del reader


async def _settled(site: Site, seconds: float = 30) -> int:
    """The number of orders once it stopped changing (the server finishes abandoned work)."""
    deadline = time.monotonic() + seconds
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        now = await site.scalar("SELECT count(*) FROM orders")
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since > 2.0:
            return now
        await asyncio.sleep(0.2)
    raise AssertionError("orders kept changing")


async def test_hang_ups_leave_whole_orders_or_none(fresh_database: str, tmp_path: Path) -> None:
    async with open_site(fresh_database, tmp_path, _product) as (site, (item, quota)):
        rng = random.Random(18)
        gate = asyncio.Semaphore(CONCURRENCY)
        attempts = [(MODES[n % len(MODES)], f"gone{n}@example.org") for n in range(ATTEMPTS)]

        async def one(mode: str, email: str) -> None:
            async with gate:
                await _hang_up(site, mode, email, item.id, rng)

        await asyncio.gather(*(one(mode, email) for mode, email in attempts))
        orders = await _settled(site)

        async with site.db.engine.connect() as conn:
            rows = (
                await conn.execute(
                    text(
                        "SELECT o.email, count(p.id) FROM orders o LEFT JOIN order_positions p "
                        "ON p.order_id = o.id GROUP BY o.id, o.email"
                    )
                )
            ).all()
        sizes = {email: n for email, n in rows}
        assert len(sizes) == orders == len(rows)
        assert set(sizes.values()) <= {ORDER_SIZE}, sizes  # whole orders only
        sent_half = {email for mode, email in attempts if mode.startswith("mid_body")}
        assert not sent_half & set(sizes), "an order from a body that never arrived"
        assert await site.ledger_drift() == {}

        # The server serves on, and its numbers agree with the rows. The same order from a
        # client that waits for the answer is created (the bodies above were valid ones).
        async with site.client() as client:
            body = {"email": "stays@example.org", "positions": [{"item": item.id}] * ORDER_SIZE}
            created = await client.post(
                site.event_url("orders/"), json=body, headers=auth(site.world.admin)
            )
            assert created.status_code == 201, created.text
            orders += 1
            response = await client.get(
                site.event_url(f"quotas/{quota.id}/availability/"), headers=auth(site.world.admin)
            )
        assert response.status_code == 200, response.text
        assert response.json()["available_number"] == QUOTA - ORDER_SIZE * orders
        log = site.server.log
        assert "unhandled error" not in log and "Exception in ASGI application" not in log, log[
            -3000:
        ]
