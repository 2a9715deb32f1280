"""Fast reads for the hot path (credential and event resolution on every request).

Through an ORM session one small query costs ~0.9 ms of CPU, straight on asyncpg ~0.15 ms
(measured on the 2-core machine). So on PostgreSQL these lookups go to a small asyncpg pool of
their own, with statements written once in SQLAlchemy Core and compiled for the dialect; on
SQLite they run as Core statements on the request's session. Only reads go this way: every
write stays in the request's ORM transaction.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import orjson
from sqlalchemy import Select
from sqlalchemy.engine import Dialect, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

# SQL each native connection runs once when it opens, built from the dialect: session-local
# objects of the fast paths (e.g. ``pg_temp`` functions, see ``kit.plpgsql``). Registered at
# import time by the packages that call them.
ConnectionSetup = Callable[[Dialect], str]
connection_setup: list[ConnectionSetup] = []


def _initializer(dialect: Dialect) -> Callable[[asyncpg.Connection], Awaitable[None]]:
    async def init(conn: asyncpg.Connection) -> None:
        for kind in ("json", "jsonb"):
            await conn.set_type_codec(
                kind,
                encoder=lambda v: orjson.dumps(v).decode(),
                decoder=orjson.loads,
                schema="pg_catalog",
            )
        for setup in connection_setup:
            await conn.execute(setup(dialect))

    return init


async def _no_reset(_conn: asyncpg.Connection) -> None:
    return None


@dataclass
class FastReader:
    engine: AsyncEngine
    url: str
    pool_size: int = 8
    # Session settings of the native connections (the same lock_timeout as the engine's).
    server_settings: dict[str, str] = field(default_factory=dict)
    # Seconds a connection keeps a prepared statement. PostgreSQL keeps a statement's generic
    # plan until the statistics change; where autovacuum is off or lags behind a table that
    # grows from empty (``checkins`` at the first doors), a plan made while the table was
    # empty scans it whole on every call (measured: 65-74 ms instead of 0.7 ms a batch).
    # Preparing again now and then bounds that; it costs a few plannings per minute.
    statement_lifetime: float = 10.0
    _pool: asyncpg.Pool | None = None
    _lax_pool: asyncpg.Pool | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _compiled: dict[int, tuple[str, Sequence[str]]] = field(default_factory=dict)
    # Statements sent on the native pool (tests add them to the SQLAlchemy count).
    executed: int = 0

    @property
    def native(self) -> bool:
        return self.engine.dialect.name == "postgresql"

    async def pool(self) -> asyncpg.Pool:
        """The native pool (PostgreSQL only), opened on first use."""
        if self._pool is None:
            async with self._lock:
                if self._pool is None:
                    self._pool = await self._open(self.pool_size, self.server_settings)
        return self._pool

    async def lax_pool(self) -> asyncpg.Pool:
        """Two native connections whose commits do not wait for the disk. Only for writes
        that are worthless without a later ordinary commit of the same process, which then
        makes them durable too (the log is flushed in order): a lost one lost nothing."""
        if self._lax_pool is None:
            async with self._lock:
                if self._lax_pool is None:
                    settings = {**self.server_settings, "synchronous_commit": "off"}
                    self._lax_pool = await self._open(2, settings)
        return self._lax_pool

    async def _open(self, size: int, settings: dict[str, str]) -> asyncpg.Pool:
        url = make_url(self.url)
        return await asyncpg.create_pool(
            host=url.host,
            port=url.port,
            user=url.username,
            password=url.password,
            database=url.database,
            min_size=1,
            max_size=size,
            init=_initializer(self.engine.dialect),
            server_settings=settings,
            max_cached_statement_lifetime=self.statement_lifetime,
            # Fast reads leave no session state behind: skip asyncpg's reset
            # round trip (RESET ALL, UNLISTEN, ...) on every release.
            reset=_no_reset,
        )

    def compile(self, stmt: Select[Any]) -> tuple[str, Sequence[str]]:
        """The statement's SQL for the native pool and its parameter names in order; cached
        by the statement's identity (pass module-level constants only)."""
        key = id(stmt)
        compiled = self._compiled.get(key)
        if compiled is None:
            c = stmt.compile(dialect=self.engine.dialect)
            compiled = (c.string, tuple(c.positiontup or ()))
            self._compiled[key] = compiled
        return compiled

    async def one(
        self, session: AsyncSession, stmt: Select[Any], params: Mapping[str, Any]
    ) -> Sequence[Any] | None:
        """The first row as a tuple (columns in select order), or None.

        ``stmt`` must be a module-level constant: compiled SQL is cached by its identity.
        """
        if not self.native:
            conn = await session.connection()
            row = (await conn.execute(stmt, dict(params))).first()
            return tuple(row) if row is not None else None
        sql, names = self.compile(stmt)
        pool = await self.pool()
        self.executed += 1
        record = await pool.fetchrow(sql, *(params[n] for n in names))
        return tuple(record.values()) if record is not None else None

    async def column(
        self, session: AsyncSession, stmt: Select[Any], params: Mapping[str, Any]
    ) -> list[Any]:
        """The first column of every row."""
        if not self.native:
            conn = await session.connection()
            return list((await conn.execute(stmt, dict(params))).scalars())
        sql, names = self.compile(stmt)
        pool = await self.pool()
        self.executed += 1
        return [r[0] for r in await pool.fetch(sql, *(params[n] for n in names))]

    async def close(self) -> None:
        for pool in (self._pool, self._lax_pool):
            if pool is not None:
                await pool.close()
        self._pool = self._lax_pool = None
