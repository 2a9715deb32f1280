"""Clients that hang up in the middle of creating an order with several positions.

Hung up while sending the body: no order. Hung up after sending it (at once, a little later,
with a reset or a clean close): the whole order or none of it, never a part of its positions,
and the sales ledger equals a recount. The server serves on.

Hung up while the server is inside the order's transaction: the test holds the quota's row
lock, which every sale of the product takes, sees in ``pg_stat_activity`` that the server's
connection is in a transaction waiting for it, hangs up, sees it still waiting, and only then
lets go. The order is then whole or absent, the ledger exact, and nothing answered 500.
"""

from __future__ import annotations

import asyncio
import random
import re
import socket
import time
from pathlib import Path
from typing import Any

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
MODES = ("mid_body", "mid_body_reset", "after_body", "after_body_reset", "after_a_moment")
HELD_HANG_UPS = 6  # hang-ups inside a transaction held on the quota lock, clean and reset


async def _product(factory: Factory, world: World) -> tuple:
    item = await carts.item(factory, world.event, "Ticket")
    quota = await carts.quota(factory, world.event, QUOTA, [item], name="Plenty")
    return item, quota


def _body(email: str, item_id: int) -> bytes:
    return orjson.dumps({"email": email, "positions": [{"item": item_id}] * ORDER_SIZE})


async def _send(
    site: Site, email: str, item_id: int, cut: int | None = None
) -> asyncio.StreamWriter:
    """An order's request written on a connection of its own (its body cut after ``cut``
    bytes); the connection is returned open, its answer never read."""
    body = _body(email, item_id)
    head = (
        f"POST {site.event_url('orders/')} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Token {site.world.admin}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    _, writer = await asyncio.open_connection("127.0.0.1", site.server.port)
    writer.write(head + (body if cut is None else body[:cut]))
    await writer.drain()
    return writer


def _close(writer: asyncio.StreamWriter, reset: bool) -> None:
    if reset:
        # SO_LINGER 0: the close sends a reset instead of a clean end of stream.
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        writer.transport.abort()
    else:
        writer.close()


async def _hang_up(site: Site, mode: str, email: str, item_id: int, rng: random.Random) -> None:
    size = len(_body(email, item_id))
    cut = rng.randrange(1, size) if mode.startswith("mid_body") else None
    writer = await _send(site, email, item_id, cut)
    if mode == "after_a_moment":
        await asyncio.sleep(rng.uniform(0.0, 0.3))
    _close(writer, mode.endswith("reset"))


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
        assert not re.search(r" 5\d\d [\d.]+ms", log), log[-3000:]


# The server's connections (of this database) whose transaction waits for ``holder``'s locks.
_WAITING = text(
    "SELECT pid, xact_start FROM pg_stat_activity WHERE datname = current_database() "
    "AND xact_start IS NOT NULL AND wait_event_type = 'Lock' "
    "AND :holder = ANY(pg_blocking_pids(pid))"
)


async def _waiting_for(site: Site, holder: int, seconds: float = 4.0) -> dict[int, Any]:
    """The backends blocked on ``holder`` (pid: start of its transaction) once there is one
    (empty if none came in time; under the server's ``lock_timeout`` of 5 s, so a waiting
    one is still waiting)."""
    deadline = time.monotonic() + seconds
    while True:
        async with site.db.engine.connect() as conn:
            found = {pid: at for pid, at in await conn.execute(_WAITING, {"holder": holder})}
        if found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.01)


async def _positions_once_ended(site: Site, email: str, backends: dict[int, Any]) -> int:
    """The positions of ``email``'s order (0: none) once the transactions that worked on it
    (backend pid: transaction start) have ended (committed or rolled back)."""
    pid, started = next(iter(backends.items()))
    ended = text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid AND xact_start = :at")
    count = text(
        "SELECT count(p.id) FROM orders o JOIN order_positions p ON p.order_id = o.id "
        "WHERE o.email = :email"
    )
    deadline = time.monotonic() + 30
    async with site.db.engine.connect() as conn:
        while (await conn.execute(ended, {"pid": pid, "at": started})).scalar_one():
            assert time.monotonic() < deadline, "the abandoned transaction did not end"
            await conn.rollback()
            await asyncio.sleep(0.02)
        await conn.rollback()
        return (await conn.execute(count, {"email": email})).scalar_one()


async def test_hang_up_while_the_order_transaction_waits(fresh_database: str, tmp_path: Path):
    async with open_site(fresh_database, tmp_path, _product) as (site, (item, quota)):
        outcomes: dict[str, int] = {}
        for n in range(HELD_HANG_UPS):
            email, reset = f"held{n}@example.org", bool(n % 2)
            async with site.db.engine.connect() as holder:
                await holder.begin()
                # The quota's row lock: every sale of the product takes it in its transaction.
                await holder.execute(
                    text("SELECT id FROM quotas WHERE id = :id FOR UPDATE"), {"id": quota.id}
                )
                pid = (await holder.execute(text("SELECT pg_backend_pid()"))).scalar_one()
                writer = await _send(site, email, item.id)
                waiting = await _waiting_for(site, pid)
                assert waiting, "the order's transaction never waited for the quota lock"
                _close(writer, reset)
                # The server has seen the hang-up (its end of the socket is closed) while the
                # order's transaction is still waiting, inside its transaction.
                await asyncio.sleep(0.3)
                assert await _waiting_for(site, pid, 0) == waiting
                await holder.rollback()  # lets go: the abandoned work goes on or rolls back
            outcomes[email] = await _positions_once_ended(site, email, waiting)
        orders = await _settled(site)
        assert set(outcomes.values()) <= {0, ORDER_SIZE}, outcomes  # whole or none
        assert orders == sum(1 for v in outcomes.values() if v), outcomes
        assert await site.ledger_drift() == {}
        async with site.client() as client:
            response = await client.get(
                site.event_url(f"quotas/{quota.id}/availability/"), headers=auth(site.world.admin)
            )
        assert response.json()["available_number"] == QUOTA - ORDER_SIZE * orders
        log = site.server.log
        assert "unhandled error" not in log and "Exception in ASGI application" not in log, log[
            -3000:
        ]
        assert not re.search(r" 5\d\d [\d.]+ms", log), log[-3000:]
