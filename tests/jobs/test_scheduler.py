"""Periodic work runs once per period however many schedulers run, and a scheduler that dies
mid-task hands the period on."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt

from sqlalchemy import select, update

from admit.jobs.scheduler import PeriodicTask, Scheduler
from admit.models import PeriodicRun

T0 = dt.datetime(2030, 1, 1, 12, 0, 0, tzinfo=dt.UTC)


def _recorder():
    calls: list[dt.datetime] = []

    async def run(session, now):
        calls.append(now)

    return calls, run


async def test_two_schedulers_run_each_period_once(clean_app):
    calls, run = _recorder()
    tasks = [PeriodicTask("test.every_10s", 10, run)]
    one = Scheduler(clean_app.state.db, tasks, "one")
    two = Scheduler(clean_app.state.db, tasks, "two")
    await one._ensure_rows()
    await two._ensure_rows()
    ran = []
    for second in range(0, 60, 2):  # both look every 2 s for a minute: 6 periods
        now = T0 + dt.timedelta(seconds=second)
        ran += await asyncio.gather(one.tick(now), two.tick(now))
    assert len(calls) == 6
    assert [c.second for c in calls] == [0, 10, 20, 30, 40, 50]
    assert sum(len(r) for r in ran) == 6
    async with clean_app.state.db.sessionmaker() as session:
        row = await session.get(PeriodicRun, "test.every_10s")
    assert (row.runs, row.running, row.last_error) == (6, False, None)


async def test_a_dead_schedulers_period_is_taken_over_after_its_lease(clean_app):
    calls, run = _recorder()
    tasks = [PeriodicTask("test.minutely", 60, run)]
    dead = Scheduler(clean_app.state.db, tasks, "dead", lease_seconds=30)
    alive = Scheduler(clean_app.state.db, tasks, "alive", lease_seconds=30)
    await dead._ensure_rows()
    assert await dead._claim(tasks[0], T0)  # claims the period, then dies before running it
    assert await alive.tick(T0 + dt.timedelta(seconds=10)) == []  # its lease still holds
    assert await alive.tick(T0 + dt.timedelta(seconds=31)) == ["test.minutely"]
    assert len(calls) == 1
    assert await alive.tick(T0 + dt.timedelta(seconds=50)) == []  # done for this period
    async with clean_app.state.db.sessionmaker() as session:
        row = await session.get(PeriodicRun, "test.minutely")
    assert (row.owner, row.running, row.runs) == ("alive", False, 1)


async def test_a_failing_task_is_recorded_and_does_not_stop_the_others(clean_app):
    calls, run = _recorder()

    async def broken(session, now):
        raise ValueError("no")

    tasks = [PeriodicTask("test.broken", 60, broken), PeriodicTask("test.fine", 60, run)]
    scheduler = Scheduler(clean_app.state.db, tasks, "solo")
    await scheduler._ensure_rows()
    assert await scheduler.tick(T0) == ["test.broken", "test.fine"]
    assert len(calls) == 1
    async with clean_app.state.db.sessionmaker() as session:
        rows = {r.name: r for r in (await session.execute(select(PeriodicRun))).scalars()}
    assert rows["test.broken"].last_error == "ValueError: no"
    assert rows["test.broken"].running is False


async def test_the_server_schedule_covers_the_existing_housekeeping(clean_app):
    names = [t.name for t in clean_app.state.background.scheduler.tasks]
    assert names[0] == "jobs.sweep"
    assert {"carts.purge_expired", "checkin.exit_all", "waitinglist.assign"} <= set(names)
    assert "users.purge_sessions" in names
    scheduler = clean_app.state.background.scheduler
    await scheduler._ensure_rows()
    assert set(await scheduler.tick()) == set(names)  # each runs cleanly on an empty database
    async with clean_app.state.db.sessionmaker() as session:
        errors = (await session.execute(select(PeriodicRun.last_error))).scalars().all()
        await session.execute(update(PeriodicRun).values(period=0))
        await session.commit()
    assert set(errors) == {None}


async def test_run_forever_keeps_running_failing_tasks_and_stops_cleanly(clean_app):
    runs: list[int] = []

    async def failing(session, now):
        runs.append(1)
        raise RuntimeError("boom")

    scheduler = Scheduler(clean_app.state.db, [PeriodicTask("test.fast", 0.05, failing)], "solo")
    task = asyncio.create_task(scheduler.run_forever())
    await asyncio.sleep(0.6)
    await scheduler.stop(task)
    assert task.done()
    done = len(runs)
    assert done >= 3
    await asyncio.sleep(0.15)
    assert len(runs) == done  # stopped with the task


async def test_a_scheduler_asks_once_per_period_not_once_per_tick(clean_app):
    calls, run = _recorder()
    task = PeriodicTask("test.hourly", 3600, run)
    scheduler = Scheduler(clean_app.state.db, [task], "solo", lease_seconds=60)
    await scheduler._ensure_rows()
    asked = []
    claim = scheduler._claim

    async def counting(task, now):
        asked.append(now)
        return await claim(task, now)

    scheduler._claim = counting
    for second in range(0, 120):  # a tick a second for two minutes of one period
        await scheduler.tick(T0 + dt.timedelta(seconds=second))
    assert len(calls) == 1
    assert len(asked) == 4  # the first tick, then every half lease (a takeover check)


async def test_a_tick_without_database_logs_one_line_not_a_traceback(clean_app, caplog):
    scheduler = Scheduler(clean_app.state.db, [], "solo")
    ticks: list[int] = []

    async def unreachable():
        ticks.append(1)
        raise ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 5432)")

    scheduler._ensure_rows = unreachable  # type: ignore[method-assign]
    task = asyncio.create_task(scheduler.run_forever())
    await asyncio.sleep(0.3)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert ticks  # it tried, and keeps trying
    records = [r for r in caplog.records if r.name == "admit.scheduler"]
    assert records
    assert {r.levelname for r in records} == {"WARNING"}
    assert all(r.exc_info is None for r in records)
    assert "database unavailable" in records[0].message


async def test_a_cancelled_stop_leaves_no_scheduler_running(clean_app):
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(session, now):
        started.set()
        await release.wait()  # a tick that does not end within the stop

    scheduler = Scheduler(clean_app.state.db, [PeriodicTask("test.slow", 0.05, slow)], "solo")
    task = asyncio.create_task(scheduler.run_forever())
    await asyncio.wait_for(started.wait(), 10)
    stopping = asyncio.create_task(scheduler.stop(task, grace_seconds=30))
    await asyncio.sleep(0.1)
    stopping.cancel()  # the server's own shutdown was cut short
    with contextlib.suppress(asyncio.CancelledError):
        await stopping
    done, _ = await asyncio.wait({task}, timeout=5)
    assert task in done and task.cancelled()
