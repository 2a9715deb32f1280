"""Engine, session factory and the declarative base shared by every model.

SQLite is the embedded default and PostgreSQL the production database. On SQLite a request that
may write starts its transaction with ``BEGIN IMMEDIATE`` so the write lock is taken up front:
a check-then-write (quota, voucher, check-in) can then never interleave with another writer.

On PostgreSQL no request waits without bound for a connection: a full pool or a server that
does not answer within ``ADMIT_DB_POOL_TIMEOUT`` seconds is answered 503 (kit.http.errors). After a
server restart the pooled connections are dead; each is replaced when it is next taken from the
pool (see :func:`_replace_closed_connections`), so no request meets one.
"""

from __future__ import annotations

import contextvars
import datetime as dt
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import JSON, DateTime, MetaData, Numeric, event
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.types import TypeDecorator

from admit.config import Settings
from admit.kit.lanes.fastread import FastReader

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


# SQLite would otherwise hand out the id of a deleted newest row again; ids must stay unique.
TABLE_OPTIONS = {"sqlite_autoincrement": True}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    __table_args__ = TABLE_OPTIONS


class UTCDateTime(TypeDecorator[dt.datetime]):
    """A timezone-aware datetime stored in UTC; SQLite gets it back aware as well."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are not stored")
        value = value.astimezone(dt.UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: dt.datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC)


# Money and percentages are exact decimals (on SQLite SQLAlchemy converts the stored number
# back to a Decimal of this scale).
Money = Numeric(13, 2, asdecimal=True)
Percent = Numeric(10, 2, asdecimal=True)

# JSON everywhere, JSONB on PostgreSQL (indexable, compact).
JSONType = JSON().with_variant(JSONB(), "postgresql")

# Set per request: whether the transaction about to begin may write (SQLite: BEGIN IMMEDIATE).
write_intent: contextvars.ContextVar[bool] = contextvars.ContextVar("write_intent", default=True)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class Database:
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    # For safe methods: on PostgreSQL in autocommit mode, which saves the BEGIN and COMMIT
    # round trips of a read-only request; elsewhere the same as ``sessionmaker``.
    read_sessionmaker: async_sessionmaker[AsyncSession]
    fast: FastReader

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    async def dispose(self) -> None:
        await self.fast.close()
        await self.engine.dispose()


LOCK_TIMEOUT = "5s"


def create_database(
    url: str, *, pool_size: int = 10, echo: bool = False, pool_timeout: float | None = None
) -> Database:
    """The engine and session factories for ``url``. ``pool_timeout`` bounds the wait for a
    pooled connection and for a new one (default: the setting ``db_pool_timeout``)."""
    # Non-ASCII text stays readable in JSON columns (searchable with LIKE on SQLite too).
    kwargs: dict[str, Any] = {"echo": echo, "json_serializer": _json_dumps}
    if url.startswith("sqlite"):
        kwargs["connect_args"] = {"timeout": 30}
    else:
        if pool_timeout is None:
            pool_timeout = Settings().db_pool_timeout
        kwargs.update(
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_pre_ping=False,  # a round trip per checkout; see _replace_closed_connections
            pool_timeout=pool_timeout,
        )
        kwargs["connect_args"] = {
            # No request waits long for a row lock: it answers 409 (kit.http.errors.busy_error).
            "server_settings": {"lock_timeout": LOCK_TIMEOUT},
            # Nor for a server that does not answer: 503 (kit.http.errors.unavailable_error).
            "timeout": pool_timeout,
        }
    engine = create_async_engine(url, **kwargs)
    if engine.dialect.name == "sqlite":
        _configure_sqlite(engine)
    else:
        _replace_closed_connections(engine)
    sessionmaker = async_sessionmaker(engine, expire_on_commit=False, autoflush=False)
    read_sessionmaker = sessionmaker
    if engine.dialect.name == "postgresql":
        read_sessionmaker = async_sessionmaker(
            engine.execution_options(isolation_level="AUTOCOMMIT"),
            expire_on_commit=False,
            autoflush=False,
        )
    return Database(
        engine=engine,
        sessionmaker=sessionmaker,
        read_sessionmaker=read_sessionmaker,
        fast=FastReader(
            engine, url, pool_size=pool_size, server_settings={"lock_timeout": LOCK_TIMEOUT}
        ),
    )


def _json_dumps(value: Any) -> str:
    return orjson.dumps(value, default=str).decode()


def _unicode_lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy (below) emit BEGIN itself instead of pysqlite's implicit deferred one.
        dbapi_connection.isolation_level = None
        # SQLite's own lower() folds ASCII only; searches must fold "Ö" as PostgreSQL does.
        dbapi_connection.create_function("lower", 1, _unicode_lower, deterministic=True)
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write_intent.get() else "BEGIN")


def _replace_closed_connections(engine: AsyncEngine) -> None:
    """A pooled connection the server closed (a restart, a failover, an idle timeout) is
    replaced when it is taken from the pool, instead of failing the request that took it.

    PostgreSQL tells every session when it shuts down and closes its socket; the driver sees
    that on the event loop and marks the connection closed. Asking the driver costs nothing,
    where ``pool_pre_ping`` would cost a round trip on every checkout. A connection that dies
    silently (a network cut without a reset) is still met by one request, answered 503.
    """

    @event.listens_for(engine.sync_engine, "checkout")
    def _on_checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        if dbapi_connection.driver_connection.is_closed():
            # The pool discards this one and checks out another (a new one if need be).
            raise DisconnectionError("the server closed this pooled connection")
