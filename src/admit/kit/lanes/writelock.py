"""Serializing the conditional writers of one resource (``If-Match``), across processes.

An ``If-Match`` write compares the resource's current ETag and then writes; two such writers
must not both compare before either writes. Within a process they queue on an asyncio lock
per resource (no database connection held while waiting). On PostgreSQL the holder then also
takes a session advisory lock on a hash of the resource, on a connection of its own, held
until its write has committed, so writers in other processes queue too. SQLite writes come
from one process: the in-process lock is the whole story there.

Waiting is bounded: past ``lock_timeout`` (the connection's setting) the caller gets
:class:`Busy`, answered as 409 with ``Retry-After`` like every other lock conflict.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

_LOCK = text("SELECT pg_advisory_lock(:key)")
_UNLOCK = text("SELECT pg_advisory_unlock(:key)")
LOCAL_WAIT_SECONDS = 5.0


class Busy(Exception):
    """The resource's other writer did not finish in time."""


def resource_key(path: str) -> int:
    """A signed 64-bit key for a resource path (``/items/007/`` is ``/items/7/``)."""
    parts = [str(int(p)) if p.isascii() and p.isdigit() else p for p in path.split("/")]
    digest = hashlib.blake2b(
        "/".join(parts).encode(), digest_size=8, person=b"admit.ifmatch"
    ).digest()
    return int.from_bytes(digest, "big", signed=True)


class WriteLocks:
    """Per-resource locks of one process, plus the cross-process advisory lock."""

    def __init__(self) -> None:
        self._local: dict[int, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, engine: AsyncEngine, path: str) -> AsyncIterator[None]:
        key = resource_key(path)
        lock, users = self._local.get(key) or (asyncio.Lock(), 0)
        self._local[key] = (lock, users + 1)
        try:
            try:
                await asyncio.wait_for(lock.acquire(), LOCAL_WAIT_SECONDS)
            except TimeoutError:
                raise Busy from None
            try:
                if engine.dialect.name == "postgresql":
                    async with _advisory(engine, key):
                        yield
                else:
                    yield
            finally:
                lock.release()
        finally:
            lock, users = self._local[key]
            if users <= 1:
                del self._local[key]
            else:
                self._local[key] = (lock, users - 1)


@asynccontextmanager
async def _advisory(engine: AsyncEngine, key: int) -> AsyncIterator[None]:
    conn = await engine.connect()
    try:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        try:
            await conn.execute(_LOCK, {"key": key})
        except DBAPIError as exc:
            if _is_lock_timeout(exc):
                raise Busy from None
            raise
        try:
            yield
        finally:
            try:
                await conn.execute(_UNLOCK, {"key": key})
            except BaseException:
                # The lock dies with its connection: never hand this one back to the pool.
                await conn.invalidate()
                raise
    finally:
        await conn.close()


def _is_lock_timeout(exc: DBAPIError) -> bool:
    orig: Any = exc.orig
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    return state == "55P03" or "lock timeout" in str(orig).lower()
