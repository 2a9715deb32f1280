"""Periodic work, run once per period whatever the number of schedulers.

Time is cut into periods of each task's interval (period = seconds since the epoch // interval).
A scheduler runs a task for a period only after moving the task's row in ``periodic_runs`` to
that period in one conditional update, so of several schedulers on several machines exactly one
wins each period (on PostgreSQL and SQLite alike). The winner holds a lease that it extends
while the task runs; a scheduler that dies mid-task leaves a lease that runs out, and the next
one to look takes the period over and runs the task again.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import and_, bindparam, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import Database, utcnow
from admit.kit.http.errors import database_unreachable
from admit.kit.http.transaction import commit_and_notify
from admit.models import PeriodicRun

if TYPE_CHECKING:
    from admit.config import Settings
    from admit.jobs.storage import FileStore

log = logging.getLogger("admit.scheduler")

TaskRun = Callable[[AsyncSession, dt.datetime], Awaitable[object]]


@dataclass(frozen=True)
class PeriodicTask:
    name: str
    interval_seconds: float
    run: TaskRun

    def period(self, now: dt.datetime) -> int:
        return int(now.timestamp() // self.interval_seconds)


TaskFactory = Callable[["Settings", "FileStore"], Iterable[PeriodicTask]]
# The packages' periodic tasks, filled at their import: the engine knows no package's work.
PERIODIC: list[TaskFactory] = []


def periodic(factory: TaskFactory) -> TaskFactory:
    """Registers a package's periodic tasks (built per process, from its settings and file
    store), so that the scheduler runs them without importing the package: the entries import
    every package with background work (``admit/all_tasks.py``)."""
    PERIODIC.append(factory)
    return factory


_CLAIM = (
    update(PeriodicRun)
    .where(
        PeriodicRun.name == bindparam("task"),
        or_(
            PeriodicRun.period < bindparam("period"),
            and_(
                PeriodicRun.period == bindparam("period"),
                PeriodicRun.running.is_(True),
                PeriodicRun.lease_until < bindparam("now"),
            ),
        ),
    )
    .values(
        period=bindparam("period"),
        running=True,
        owner=bindparam("owner"),
        lease_until=bindparam("lease_until"),
        last_started=bindparam("now"),
    )
    .returning(PeriodicRun.name)
)


class Scheduler:
    def __init__(
        self, db: Database, tasks: list[PeriodicTask], owner: str, *, lease_seconds: float = 60
    ) -> None:
        self.db = db
        self.tasks = tasks
        self.owner = owner
        self.lease = lease_seconds
        self._asked: dict[str, tuple[int, dt.datetime]] = {}
        self._stopping = asyncio.Event()

    async def _ensure_rows(self) -> None:
        async with self.db.sessionmaker() as session:
            known = set((await session.execute(select(PeriodicRun.name))).scalars())
            for task in self.tasks:
                if task.name not in known:
                    session.add(PeriodicRun(name=task.name, period=0, running=False, runs=0))
            try:
                await session.commit()
            except Exception:  # another scheduler inserted them at the same moment
                await session.rollback()

    async def tick(self, now: dt.datetime | None = None) -> list[str]:
        """Runs every task whose period this scheduler wins at ``now``; returns their names."""
        now = now or utcnow()
        ran = []
        for task in self.tasks:
            if not self._worth_asking(task, now):
                continue
            if await self._claim(task, now):
                await self._run(task, now)
                ran.append(task.name)
        return ran

    def _worth_asking(self, task: PeriodicTask, now: dt.datetime) -> bool:
        """A period this scheduler already asked for is asked for again only to take over
        from a scheduler that may have died (after half a lease): one claim per task and
        period, not one per tick."""
        period = task.period(now)
        seen = self._asked.get(task.name)
        if seen and seen[0] == period and (now - seen[1]).total_seconds() < self.lease / 2:
            return False
        self._asked[task.name] = (period, now)
        return True

    async def _claim(self, task: PeriodicTask, now: dt.datetime) -> bool:
        params = {
            "task": task.name,
            "period": task.period(now),
            "now": now,
            "owner": self.owner,
            "lease_until": now + dt.timedelta(seconds=self.lease),
        }
        try:
            async with self.db.sessionmaker() as session:
                won = (await session.execute(_CLAIM, params)).first() is not None
                await session.commit()
        except Exception:
            log.warning("periodic task %s: could not claim", task.name, exc_info=True)
            return False
        return won

    async def _run(self, task: PeriodicTask, now: dt.datetime) -> None:
        period = task.period(now)
        error = None
        keep_alive = asyncio.create_task(self._extend(task))
        try:
            async with self.db.sessionmaker() as session:
                await task.run(session, now)
                await commit_and_notify(session)
            log.info("periodic task %s ran for period %d on %s", task.name, period, self.owner)
        except Exception as exc:
            log.exception("periodic task %s failed", task.name)
            error = f"{type(exc).__name__}: {exc}"[:2000]
        finally:
            keep_alive.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keep_alive
        async with self.db.sessionmaker() as session:
            await session.execute(
                update(PeriodicRun)
                .where(
                    PeriodicRun.name == task.name,
                    PeriodicRun.owner == self.owner,
                    PeriodicRun.period == period,
                )
                .values(
                    running=False,
                    lease_until=None,
                    last_finished=utcnow(),
                    last_error=error,
                    runs=PeriodicRun.runs + 1,
                )
            )
            await session.commit()

    async def _extend(self, task: PeriodicTask) -> None:
        while True:
            await asyncio.sleep(self.lease / 3)
            with contextlib.suppress(Exception):
                async with self.db.sessionmaker() as session:
                    await session.execute(
                        update(PeriodicRun)
                        .where(PeriodicRun.name == task.name, PeriodicRun.owner == self.owner)
                        .values(lease_until=utcnow() + dt.timedelta(seconds=self.lease))
                    )
                    await session.commit()

    async def run_forever(self) -> None:
        """Ticks whenever the next period of any task begins (and at least every second),
        until :meth:`stop`. A database that is down at the start delays the first tick, it
        does not end the scheduler."""
        ready = False
        while not self._stopping.is_set():
            try:
                if not ready:
                    await self._ensure_rows()
                    ready = True
                await self.tick()
            except Exception as exc:
                if not database_unreachable(exc):
                    log.exception("scheduler tick failed")
                else:  # the database is down or out of connections: one line, no trace
                    log.warning("scheduler tick skipped, database unavailable: %s", exc)
            now = utcnow().timestamp()
            wait = min(
                [t.interval_seconds - (now % t.interval_seconds) for t in self.tasks] + [1.0]
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), max(wait, 0.01))

    async def stop(self, task: asyncio.Task[None], grace_seconds: float = 10) -> None:
        """Ends ``task`` (running :meth:`run_forever`) between ticks: a cancel in the middle
        of a tick would abandon its transaction, and on SQLite an abandoned transaction keeps
        the write lock until the connection is collected. Cancels only after the grace."""
        self._stopping.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), grace_seconds)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        except asyncio.CancelledError:
            task.cancel()  # stopping was itself cancelled: leave nothing running
            raise
        if task.done():
            self._stopping.clear()  # the same scheduler may serve again
