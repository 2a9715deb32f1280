"""The sign that a race happened on PostgreSQL: while concurrent requests run, how many of
the database's connections wait for a lock, sampled about every millisecond.

The sampler runs in a thread of its own with its own connection and event loop: the requests
under test run in the test's loop, which is busy with their work for most of the time a lock
is held, and a sampler sharing it sees only the moments when every request waits for the
database, which a fast machine makes too rare to count on."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
from sqlalchemy import text

WAITING = text(
    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
    "AND datname = current_database()"
)
PG_ONLY = "concurrent writers only overlap on PostgreSQL (SQLite serialises them)"


def _dsn(factory: Any) -> str:
    url = factory.sessionmaker.kw["bind"].url.set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


def _sample(dsn: str, seen: list[int], ready: threading.Event, done: threading.Event) -> None:
    async def run() -> None:
        connection = await asyncpg.connect(dsn)
        try:
            ready.set()
            while not done.is_set():
                seen.append(int(await connection.fetchval(WAITING.text) or 0))
                await asyncio.sleep(0.001)
        finally:
            ready.set()
            await connection.close()

    asyncio.run(run())


@contextlib.asynccontextmanager
async def lock_waits(factory: Any) -> AsyncIterator[list[int]]:
    """Yields the list the samples are appended to (its ``max()`` >= 1: some request waited
    for another's lock)."""
    seen: list[int] = []
    ready, done = threading.Event(), threading.Event()
    sampler = threading.Thread(
        target=_sample, args=(_dsn(factory), seen, ready, done), name="lock-waits", daemon=True
    )
    sampler.start()
    await asyncio.to_thread(ready.wait, 10)
    try:
        yield seen
    finally:
        done.set()
        await asyncio.to_thread(sampler.join, 10)
