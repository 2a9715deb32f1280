"""The fan-out's cursor (late commits, concurrent runs), housekeeping, and the limits of a
delivery run (retry window, timeout, answer size, concurrency per host)."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from sqlalchemy import select, update

from admit.db import utcnow
from admit.kit.http.transaction import commit_and_notify
from admit.models import Notification, Webhook, WebhookCall, WebhookCursor
from admit.webhooks import delivery
from admit.webhooks.fanout import GAP_GRACE_SECONDS, fan_out
from admit.webhooks.tasks import LOG_DAYS, housekeeping
from tests.factories import World
from tests.webhooks.conftest import Receiver, calls, create_hook, hook_row, notify, pump

ADDED = "service.event.orders.waitinglist.added"


async def _insert(app, world: World, pk: int | None = None) -> int:
    async with app.state.db.sessionmaker() as session:
        row = Notification(
            id=pk, organizer_id=world.org.id, event_id=world.event.id, action=ADDED, payload={}
        )
        session.add(row)
        await session.commit()
        return row.id


async def _cursor(app, source: str = "notification") -> WebhookCursor:
    async with app.state.db.sessionmaker() as session:
        return await session.get(WebhookCursor, source)


async def _clear_gaps(app) -> None:
    async with app.state.db.sessionmaker() as session:
        await session.execute(update(WebhookCursor).values(gaps={}))
        await session.commit()


async def _fan_out(app) -> int:
    async with app.state.db.sessionmaker() as session:
        created = await fan_out(session, utcnow())
        await commit_and_notify(session)
    return created


async def test_a_late_commit_below_the_cursor_is_not_skipped(client, world: World):
    app = client._transport.app
    await create_hook(client, world, "https://example.org/hook")
    first = await _insert(app, world)
    assert await _fan_out(app) == 1
    await _clear_gaps(app)  # ids used by earlier tests on this database
    third = await _insert(app, world, first + 2)  # id first + 1 not committed yet
    assert await _fan_out(app) == 1
    cursor = await _cursor(app)
    assert cursor.position == third and list(cursor.gaps) == [str(first + 1)]
    assert await _fan_out(app) == 0
    second = await _insert(app, world, first + 1)
    assert await _fan_out(app) == 1
    assert [c.source_id for c in await calls(app)] == [first, third, second]
    assert (await _cursor(app)).gaps == {}

    # A gap nobody fills is given up after the grace period.
    async with app.state.db.sessionmaker() as session:
        old = utcnow().timestamp() - GAP_GRACE_SECONDS - 1
        cursor = await session.get(WebhookCursor, "notification")
        cursor.gaps = {str(third + 5): old, str(third + 6): utcnow().timestamp()}
        await session.commit()
    await _fan_out(app)
    assert list((await _cursor(app)).gaps) == [str(third + 6)]


async def test_a_real_transaction_committing_late(client, world: World):
    app = client._transport.app
    if app.state.db.is_sqlite:
        pytest.skip("SQLite writers are serial: ids commit in order")
    await create_hook(client, world, "https://example.org/hook")
    async with app.state.db.sessionmaker() as slow:
        early = Notification(
            organizer_id=world.org.id, event_id=world.event.id, action=ADDED, payload={}
        )
        slow.add(early)
        await slow.flush()  # has its id, not committed
        later = await _insert(app, world)
        assert await _fan_out(app) == 1
        await slow.commit()
    assert await _fan_out(app) == 1
    assert [c.source_id for c in await calls(app)] == [later, early.id]


async def test_concurrent_runs_fan_out_each_row_once(client, world: World):
    app = client._transport.app
    await create_hook(client, world, "https://example.org/hook")
    await create_hook(client, world, "https://example.org/other")
    for _ in range(30):
        await _insert(app, world)
    counts = await asyncio.gather(*(_fan_out(app) for _ in range(4)))
    assert sum(counts) == 60
    pairs = [(c.webhook_id, c.source_id) for c in await calls(app)]
    assert len(pairs) == len(set(pairs)) == 60


async def test_without_webhooks_the_cursor_skips_ahead(client, world: World):
    app = client._transport.app
    await _fan_out(app)
    last = [await _insert(app, world) for _ in range(3)][-1]
    assert await _fan_out(app) == 0
    assert (await _cursor(app)).position == last
    await create_hook(client, world, "https://example.org/hook")
    assert await _fan_out(app) == 0  # what came before the webhook is not sent


async def test_housekeeping_purges_old_log_entries_and_rearms(client, world: World):
    app = client._transport.app
    hook = await create_hook(client, world, "https://example.org/hook")
    await _insert(app, world)
    await _insert(app, world)
    await _fan_out(app)
    old, recent = await calls(app)
    async with app.state.db.sessionmaker() as session:
        long_ago = utcnow() - dt.timedelta(days=LOG_DAYS, minutes=1)
        await session.execute(
            update(WebhookCall).where(WebhookCall.id == old.id).values(created=long_ago)
        )
        await session.execute(update(Webhook).values(wake_at=None))
        assert await housekeeping(session, utcnow()) == 1
        await session.commit()
    assert [c.id for c in await calls(app)] == [recent.id]
    assert (await hook_row(app, hook["id"])).wake_at is not None


async def test_calls_past_the_retry_window_fail_unsent(
    client, background, fast_retries, receiver: Receiver, world: World
):
    app = client._transport.app
    await create_hook(client, world, receiver.url)
    await notify(app, world.org.id, world.event.id, ADDED)
    # The call is made 73 hours old before the fan-out's commit hands it to the background
    # runner: moved back after that, the runner could deliver it first.
    async with app.state.db.sessionmaker() as session:
        assert await fan_out(session, utcnow()) == 1
        await session.execute(update(WebhookCall).values(created=utcnow() - dt.timedelta(hours=73)))
        await commit_and_notify(session)

    async def ended() -> bool:
        return all(c.status != "pending" for c in await calls(app))

    await pump(app, ended)
    [call] = await calls(app)
    assert (call.status, call.attempts) == ("failed", 0)
    assert receiver.requests == []


async def test_timeouts_and_long_answers(
    client, background, fast_retries, receiver: Receiver, world: World
):
    app = client._transport.app
    receiver.answer = b"\x00" + "é".encode() * 3000
    await create_hook(client, world, receiver.url)
    await notify(app, world.org.id, world.event.id, ADDED)
    await pump(app, lambda: _count(receiver, 1))
    [call] = await calls(app)
    assert call.status == "delivered" and len(call.response_body) <= 1024
    assert call.response_body.startswith("\ufffdé")

    receiver.stall = 2.0
    fast_retries.webhook_timeout_seconds = 0.2
    try:
        await notify(app, world.org.id, world.event.id, ADDED)

        async def tried() -> bool:
            return (await calls(app))[-1].attempts > 0

        await pump(app, tried)
    finally:
        fast_retries.webhook_timeout_seconds = 30.0
    late = (await calls(app))[-1]
    assert late.status == "pending" and late.error == "No answer within 0.2 s."


async def test_a_busy_host_waits_for_a_free_slot(
    client, background, fast_retries, receiver: Receiver, world: World
):
    app = client._transport.app
    hook = await create_hook(client, world, receiver.url)
    await notify(app, world.org.id, world.event.id, ADDED)
    delivery._in_flight["127.0.0.1"] = fast_retries.webhook_host_concurrency
    try:
        await _fan_out(app)
        await app.state.background.engine.broker.wait_all()
        assert receiver.requests == []
        row = await hook_row(app, hook["id"])
        assert row.wake_at is not None and row.wake_at > utcnow()
        assert row.lock_owner is None
    finally:
        delivery._in_flight["127.0.0.1"] = 0
    async with app.state.db.sessionmaker() as session:
        await session.execute(update(Webhook).values(wake_at=utcnow()))
        await session.commit()
    await pump(app, lambda: _count(receiver, 1))
    assert [c.status for c in await calls(app)] == ["delivered"]
    async with app.state.db.sessionmaker() as session:
        assert (await session.scalar(select(Webhook.lock_owner))) is None


async def _count(receiver: Receiver, n: int) -> bool:
    return len(receiver.requests) >= n
