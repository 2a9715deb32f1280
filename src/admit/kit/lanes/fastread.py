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
# objects of the fast paths (e.g. ``pg_temp`` functions, see ``kit.lanes.plpgsql``). Registered at
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
    _prepared: dict[Any, _Prepared | None] = field(default_factory=dict)
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
        # What SQLAlchemy would pass asyncpg for the same URL: host and port, or a Unix
        # socket's directory (``?host=/var/run/postgresql``), user, password, database.
        _args, connect = self.engine.dialect.create_connect_args(make_url(self.url))
        return await asyncpg.create_pool(
            **connect,
            min_size=1,
            max_size=size,
            init=_initializer(self.engine.dialect),
            server_settings=settings,
            max_cached_statement_lifetime=self.statement_lifetime,
            # Pages written as JSON by the database (``kit/resources/sql_json.py``) are
            # statements of 15-30 kB: above asyncpg's default limit, each would be prepared
            # (and planned) again at every execution.
            max_cacheable_statement_size=_MAX_CACHED_SQL,
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

    async def rows(
        self,
        session: AsyncSession,
        stmt: Select[Any],
        params: Mapping[str, Any] | None = None,
        *,
        static: bool = True,
    ) -> Sequence[Sequence[Any]]:
        """Every row (columns in select order); on SQLite through the session.

        ``static``: ``stmt`` lives as long as the process (a module-level constant, or one
        built once and kept), and its SQL is cached by its identity. Otherwise it was built
        for this request: its SQL is cached by SQLAlchemy's cache key (values in the
        statement are bound from the key, as SQLAlchemy itself does). A statement whose SQL
        depends on its values (expanding ``IN`` lists) is compiled for each execution.
        """
        if not self.native:
            conn = await session.connection()
            return (await conn.execute(stmt, dict(params or {}))).all()
        prepared = self._prepare(stmt, static)
        if prepared is None:
            # Compiled with its values: those of ``params`` go into the statement.
            if params:
                stmt = stmt.params(dict(params))
            prepared = _Prepared.of(stmt, self.engine.dialect, None, expand=True)
            assert prepared is not None
            params = None
        sql, args = prepared.bind(params)
        pool = await self.pool()
        self.executed += 1
        return await pool.fetch(sql, *args)

    def _prepare(self, stmt: Select[Any], static: bool) -> _Prepared | None:
        if static:
            key: Any = id(stmt)
            found = self._prepared.get(key, _MISSING)
            if found is _MISSING:
                found = _Prepared.of(stmt, self.engine.dialect, None)
                self._prepared[key] = found
            return found  # type: ignore[return-value]
        cache_key = stmt._generate_cache_key()
        if cache_key is None:
            return None
        found = self._prepared.get(cache_key.key, _MISSING)
        if found is _MISSING:
            if len(self._prepared) > _MAX_PREPARED:
                self._prepared = {}  # static entries come back on their next use
            found = _Prepared.of(stmt, self.engine.dialect, cache_key)
            self._prepared[cache_key.key] = found
        if found is None:
            return None
        return found.with_values(cache_key.bindparams)  # type: ignore[union-attr]

    async def close(self) -> None:
        for pool in (self._pool, self._lax_pool):
            if pool is not None:
                await pool.close()
        self._pool = self._lax_pool = None


_MISSING = object()
# The longest statement text each connection keeps prepared.
_MAX_CACHED_SQL = 128 * 1024
# Compiled statements kept per process; beyond this the cache starts over.
_MAX_PREPARED = 2000


@dataclass(frozen=True)
class _Prepared:
    """A statement compiled for the native pool: its SQL and how to bind its parameters."""

    sql: str
    compiled: Any
    names: Sequence[str]
    processors: Mapping[str, Callable[[Any], Any]]
    extracted: Sequence[Any] | None = None

    @classmethod
    def of(
        cls, stmt: Select[Any], dialect: Dialect, cache_key: Any, *, expand: bool = False
    ) -> _Prepared | None:
        """None when the SQL depends on the values (unless ``expand``: then compiled with
        them, for this execution only)."""
        kwargs = {"compile_kwargs": {"render_postcompile": True}} if expand else {}
        compiled = dialect.statement_compiler(dialect, stmt, cache_key=cache_key, **kwargs)
        if "POSTCOMPILE_" in compiled.string:
            return None
        return cls(
            compiled.string,
            compiled,
            tuple(compiled.positiontup or ()),
            dict(compiled._bind_processors),
        )

    def with_values(self, extracted: Sequence[Any]) -> _Prepared:
        return _Prepared(self.sql, self.compiled, self.names, self.processors, extracted)

    def bind(self, params: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
        if self.compiled._render_postcompile:
            # Compiled with its values (``expand``), those of ``Select.params()`` included
            # (which ``construct_params`` refuses to combine with the expanded form).
            values = dict(self.compiled._post_compile_expanded_state.parameters)
        elif self.extracted is None:
            values = self.compiled.construct_params(params)
        else:
            values = self.compiled.construct_params(params, extracted_parameters=self.extracted)
        for name, process in self.processors.items():
            if name in values and values[name] is not None:
                values[name] = process(values[name])
        return self.sql, [values[n] for n in self.names]
