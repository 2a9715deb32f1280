"""Delivery runs racing for one webhook: while one run sends to a slow receiver for longer
than several job leases (its heartbeat keeps the lock), runs started beside it find the
webhook taken; every call arrives once, in order, never two at a time."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from sqlalchemy import update

from admit.db import utcnow
from admit.jobs.queue import JobContext
from admit.models import Webhook, WebhookCall
from admit.webhooks.delivery import deliver
from tests.factories import World
from tests.webhooks.conftest import (
    Receiver,
    calls,
    create_hook,
    hook_row,
    notify,
    pump,
    run_fan_out,
)

WAITING = "service.event.orders.waitinglist"
CALLS = 6
STALL = 1.2  # seconds the receiver sits on each call
LEASE = 2.0  # the job lease: the whole delivery lasts more than three of them


class Watching(Receiver):
    """Also counts requests in flight at once (two runs sending would show as two)."""

    in_flight: int = 0
    most: int = 0

    async def handle(self, reader: Any, writer: Any) -> None:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await super().handle(reader, writer)
        finally:
            self.in_flight -= 1


def _context(app: Any, job_id: int, webhook_id: int, settings: Any) -> JobContext:
    async def report(percentage: int) -> None:
        return None

    return JobContext(
        id=job_id,
        uuid=f"run-{job_id}",
        kind="webhook.deliver",
        input={"webhook_id": webhook_id},
        attempt=1,
        organizer_id=None,
        event_id=None,
        owner_kind=None,
        owner_id=None,
        db=app.state.db,
        store=app.state.background.store,
        settings=settings,
        report=report,
    )


async def test_two_runs_at_once_deliver_each_call_once_in_order(client, fast_retries, world: World):
    app = client._transport.app
    if app.state.db.is_sqlite:
        # A rival's claim waits for SQLite's one writer, so whether runs overlap depends on the
        # machine's timing there; the race this test shows is PostgreSQL's (a serving setup).
        pytest.skip("SQLite writers are serial: runs overlap only by chance")
    box = Watching(stall=STALL)
    server = await asyncio.start_server(box.handle, "127.0.0.1", 0)
    box.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/hook"
    settings = fast_retries.model_copy(update={"job_lease_seconds": LEASE})
    try:
        hook = await create_hook(client, world, box.url)
        ids = [
            await notify(app, world.org.id, world.event.id, f"{WAITING}.added", n=n)
            for n in range(CALLS)
        ]
        assert await run_fan_out(app) == CALLS

        spans: list[tuple[str, float, float, str]] = []

        async def run(name: str, job_id: int) -> str:
            started = time.monotonic()
            result = await deliver(_context(app, job_id, hook["id"], settings))
            spans.append((name, started, time.monotonic(), result))
            return result

        async def rival() -> None:
            """Starts a run beside the others again and again until the calls are in, as the
            fan-out and the job sweep would after a lease that seemed to lapse. Each is started
            without waiting for the one before, so whichever run wins (the first two may both
            lose to a claim still held when they start), rivals keep starting during its run."""
            n = 100
            rivals = []
            while len(box.requests) < CALLS:
                n += 1
                rivals.append(asyncio.create_task(run(f"rival-{n}", n)))
                await asyncio.sleep(LEASE / 4)
            await asyncio.gather(*rivals)

        first = asyncio.create_task(run("first", 1))
        second = asyncio.create_task(run("second", 2))  # at the same moment
        await asyncio.wait_for(asyncio.gather(first, second, rival()), 60)
    finally:
        server.close()
        await server.wait_closed()

    # Both runs were active at once, also long after the first run's first lease had ended.
    winner = next(s for s in spans if s[3] == f"{CALLS} call(s) sent.")
    others = [s for s in spans if s is not winner]
    assert winner[2] - winner[1] > 3 * LEASE
    assert others and all(s[3] == "Another run delivers to this webhook." for s in others)
    overlapping = [s for s in others if winner[1] <= s[1] < winner[2]]
    assert len(overlapping) >= 8
    assert any(s[1] > winner[1] + 2 * LEASE for s in overlapping)
    # Each call arrived once, in order, one at a time.
    got = [json.loads(r.body)["notification_id"] for r in box.requests]
    assert got == ids and box.most == 1
    log = await calls(app, hook["id"])
    assert [(c.status, c.attempts, c.claimed_by) for c in log] == [("delivered", 1, None)] * CALLS
    assert (await hook_row(app, hook["id"])).lock_owner is None  # released


async def test_a_call_marked_by_a_stopped_run_counts_that_attempt(
    client, background, fast_retries, receiver: Receiver, world: World
):
    """A mark left behind (its run's process died after sending, before recording) makes the
    next run count the lost attempt: the log says the receiver may have got it twice."""
    app = client._transport.app
    hook = await create_hook(client, world, receiver.url)
    await notify(app, world.org.id, world.event.id, f"{WAITING}.added")
    await notify(app, world.org.id, world.event.id, f"{WAITING}.added")
    await run_fan_out(app)  # the calls, and a delivery job handed to the engine
    await app.state.background.engine.broker.wait_all()
    assert len(receiver.requests) == 2
    second_id = (await calls(app))[1].id
    async with app.state.db.sessionmaker() as session:
        await session.execute(
            update(WebhookCall)
            .where(WebhookCall.webhook_id == hook["id"])
            .values(status="pending", attempts=0, next_retry=utcnow(), claimed_by="7:1:dead")
        )
        await session.execute(
            update(WebhookCall).where(WebhookCall.id == second_id).values(claimed_by=None)
        )
        # Marked for a run, as the housekeeping does for calls nobody is sending.
        await session.execute(
            update(Webhook).where(Webhook.id == hook["id"]).values(wake_at=utcnow())
        )
        await session.commit()
    await pump(app, lambda: _all_delivered(app))
    first, second = await calls(app)
    assert (first.attempts, first.claimed_by, first.error) == (2, None, None)
    assert (second.attempts, second.claimed_by) == (1, None)


async def test_calls_marked_but_left_unsent_are_not_counted(
    client, background, fast_retries, receiver: Receiver, world: World
):
    """A run that stops early (two failures in a row block the webhook) takes its mark off
    the calls it did not send: the next run counts no attempt for them."""
    app = client._transport.app
    receiver.statuses = [500, 500]
    await create_hook(client, world, receiver.url)
    for _ in range(5):
        await notify(app, world.org.id, world.event.id, f"{WAITING}.added")
    await pump(app, lambda: _all_delivered(app))
    log = await calls(app)
    assert [(c.status, c.attempts, c.claimed_by) for c in log] == [
        ("delivered", 2, None),
        ("delivered", 2, None),
        ("delivered", 1, None),
        ("delivered", 1, None),
        ("delivered", 1, None),
    ]
    assert len(receiver.requests) == 7


async def _all_delivered(app: Any) -> bool:
    return all(c.status == "delivered" for c in await calls(app))
