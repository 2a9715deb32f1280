"""A node killed (SIGKILL) while it delivers a webhook's calls: the other node goes on after
about the job lease, repeats at most the calls the dead one had marked for sending (among them
the one it was waiting on), and the delivery log counts those attempts.

Two ``admit serve`` processes (no broker: each runs jobs and the scheduler itself) share one
PostgreSQL database. The receiver (in this process) answers after a short pause; when the
``KILL_AT``-th request arrives it holds the answer, the node running the delivery job is
killed, and only then is the request let go: that call was in flight for certain.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import insert, text

from admit.db import create_database, utcnow
from admit.models import Notification
from admit.webhooks.delivery import RECORD_EVERY
from tests.factories import Factory, auth, build_world
from tests.faults.conftest import fault_template, fresh_database  # noqa: F401  (fixtures)
from tests.faults.site import NOT_ON_PG, PG_URL, AdmitProcess

pytestmark = pytest.mark.skipif(not PG_URL, reason=NOT_ON_PG)

CALLS = 120
KILL_AT = 35  # the 5th call of a marked group of 10: four answered but not yet recorded
PAUSE = 0.02  # the receiver's answer time
LEASE = 3.0  # ADMIT_JOB_LEASE_SECONDS
SWEEP = 1.0  # ADMIT_JOB_SWEEP_SECONDS
ENV = {
    "ADMIT_JOB_LEASE_SECONDS": str(LEASE),
    "ADMIT_JOB_SWEEP_SECONDS": str(SWEEP),
    "ADMIT_WEBHOOK_ALLOW_PRIVATE": "true",
}


class Counting:
    """Counts each notification it gets; holds the ``KILL_AT``-th answer until released."""

    def __init__(self) -> None:
        self.arrivals: list[tuple[float, int]] = []
        self.reached = asyncio.Event()
        self.killed = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            body = json.loads(await reader.readexactly(length))
            self.arrivals.append((time.monotonic(), body["notification_id"]))
            assert body["action"] == "pretix.event.orders.waitinglist.added"
            if len(self.arrivals) == KILL_AT:
                self.reached.set()
                await self.killed.wait()  # its sender dies waiting for this answer
            await asyncio.sleep(PAUSE)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def _scalar(db: Any, sql: str, **params: Any) -> Any:
    async with db.engine.connect() as conn:
        return (await conn.execute(text(sql), params)).scalar()


async def test_a_node_killed_mid_delivery_repeats_only_calls_in_flight_and_the_log_shows_them(
    fresh_database: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    receiver = Counting()
    server = await asyncio.start_server(receiver.handle, "127.0.0.1", 0)
    target = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/hook"
    db = create_database(fresh_database, pool_size=4)
    nodes = [AdmitProcess(fresh_database, tmp_path / n, **ENV) for n in ("a", "b")]
    for node in nodes:
        node.data_dir.mkdir()
    try:
        world = await build_world(Factory(db.sessionmaker))
        await asyncio.gather(*(asyncio.to_thread(n.start, 1) for n in nodes))
        async with httpx.AsyncClient(base_url=nodes[0].url, timeout=30) as api:
            hook = await api.post(
                "/api/v1/organizers/acme/webhooks/",
                json={"target_url": target, "action_types": ["pretix.event.orders.waitinglist.*"]},
                headers=auth(world.admin),
            )
            assert hook.status_code == 201, hook.text
            hook_id = hook.json()["id"]
            await asyncio.sleep(2 * SWEEP)  # a fan-out has run: what comes next is new
            async with db.sessionmaker() as session:
                rows = [
                    {
                        "organizer_id": world.org.id,
                        "event_id": world.event.id,
                        "action": "service.event.orders.waitinglist.added",
                        "payload": {"waitinglistentry": n},
                        "created": utcnow(),
                    }
                    for n in range(CALLS)
                ]
                ids = list(
                    (await session.execute(insert(Notification).returning(Notification.id), rows))
                    .scalars()
                    .all()
                )
                await session.commit()

            # The node delivering is killed while the KILL_AT-th call waits for its answer.
            await asyncio.wait_for(receiver.reached.wait(), 60)
            worker = await _scalar(
                db,
                "SELECT worker FROM jobs WHERE kind = 'webhook.deliver' AND status = 'running'",
            )
            pid = int(worker.split(":")[1])
            [dead] = [n for n in nodes if n.process and n.process.pid == pid]
            [alive] = [n for n in nodes if n is not dead]
            assert dead.process is not None
            os.killpg(dead.process.pid, signal.SIGKILL)
            await asyncio.to_thread(dead.process.wait)
            killed_at = time.monotonic()
            received = len(receiver.arrivals)
            recorded = await _scalar(
                db,
                "SELECT count(*) FROM webhook_calls WHERE webhook_id = :h AND status = 'delivered'",
                h=hook_id,
            )
            receiver.killed.set()
            # Calls were in flight: sent (one still unanswered), not recorded as delivered.
            assert received == KILL_AT and recorded < received, (received, recorded)

            deadline = time.monotonic() + 60
            while True:
                done = await _scalar(
                    db,
                    "SELECT count(*) FROM webhook_calls "
                    "WHERE webhook_id = :h AND status = 'delivered'",
                    h=hook_id,
                )
                if done == CALLS:
                    break
                assert time.monotonic() < deadline, (done, alive.log[-3000:])
                await asyncio.sleep(0.2)

            shown: dict[int, int] = {}  # the delivery log through the API, every page
            async with httpx.AsyncClient(base_url=alive.url, timeout=30) as survivor:
                url: str | None = f"/api/v1/organizers/acme/webhooks/{hook_id}/calls/"
                while url:
                    page = await survivor.get(url, headers=auth(world.admin))
                    assert page.status_code == 200, page.text
                    shown.update(
                        (e["notification_id"], e["attempts"]) for e in page.json()["results"]
                    )
                    url = page.json()["next"]
    finally:
        server.close()
        await server.wait_closed()
        for node in nodes:
            await asyncio.to_thread(node.stop)

    after = [at for at, _ in receiver.arrivals if at > killed_at]
    resumed = after[0] - killed_at
    counts = Counter(n for _, n in receiver.arrivals)
    repeated = sorted(n for n, c in counts.items() if c > 1)
    print(
        f"kill after {received} calls ({recorded} recorded); resumed after {resumed:.1f} s; "
        f"repeated {len(repeated)}: {repeated}"
    )
    # Every call arrived, first arrivals in order; repeats only among the calls in flight.
    assert set(counts) == set(ids)
    firsts = list(dict.fromkeys(n for _, n in receiver.arrivals))
    assert firsts == ids
    assert 1 <= len(repeated) <= min(RECORD_EVERY, received - recorded)
    assert ids[KILL_AT - 1] in repeated  # the one whose answer its sender never saw
    assert all(counts[n] == 2 for n in repeated)
    # Delivery went on after about the lease (the sweep reaps the job, the lock is free).
    assert resumed < LEASE + 3 * SWEEP + 3, resumed
    # The log counts the repeats: each repeated call shows two attempts.
    async with db.engine.connect() as conn:
        attempts = dict(
            (
                await conn.execute(
                    text(
                        "SELECT source_id, attempts FROM webhook_calls WHERE webhook_id = :h"
                        " AND status = 'delivered' AND claimed_by IS NULL"
                    ),
                    {"h": hook_id},
                )
            ).all()
        )
    await db.dispose()
    assert len(attempts) == CALLS
    assert all(attempts[n] == 2 for n in repeated)
    counted_twice = [n for n, a in attempts.items() if a > 1]
    assert len(counted_twice) <= RECORD_EVERY and set(repeated) <= set(counted_twice)
    assert all(attempts[n] == 1 for n in ids if n not in counted_twice)
    assert shown == attempts  # the API's log shows the same
