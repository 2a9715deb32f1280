"""Periodic housekeeping inside each API process, until a separate scheduler exists.

Jobs must be idempotent and safe to run from several processes at once (each process runs
them): e.g. deleting expired rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import Database
from admit.kit.transaction import commit

log = logging.getLogger("admit")

Job = Callable[[AsyncSession], Awaitable[object]]


@dataclass(frozen=True)
class PeriodicJob:
    name: str
    interval_seconds: float
    run: Job


async def _loop(db: Database, job: PeriodicJob) -> None:
    while True:
        await asyncio.sleep(job.interval_seconds)
        try:
            async with db.sessionmaker() as session:
                await job.run(session)
                await commit(session)
        except Exception:
            log.exception("periodic job %s failed", job.name)


@contextlib.asynccontextmanager
async def running(db: Database, jobs: list[PeriodicJob]) -> AsyncIterator[None]:
    tasks = [asyncio.create_task(_loop(db, job), name=job.name) for job in jobs]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
