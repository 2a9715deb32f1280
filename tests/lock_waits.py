"""The sign that a race happened on PostgreSQL: while concurrent requests run, how many of
the database's connections wait for a lock, sampled every few milliseconds."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import text

WAITING = text(
    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
    "AND datname = current_database()"
)
PG_ONLY = "concurrent writers only overlap on PostgreSQL (SQLite serialises them)"


@contextlib.asynccontextmanager
async def lock_waits(factory: Any) -> AsyncIterator[list[int]]:
    """Yields the list the samples are appended to (its ``max()`` >= 1: some request waited
    for another's lock)."""
    seen: list[int] = []
    done = asyncio.Event()

    async def watch() -> None:
        async with factory.sessionmaker() as s:
            while not done.is_set():
                seen.append(int(await s.scalar(WAITING) or 0))
                await s.rollback()
                await asyncio.sleep(0.002)

    watcher = asyncio.create_task(watch())
    try:
        yield seen
    finally:
        done.set()
        await watcher
