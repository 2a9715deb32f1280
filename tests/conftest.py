"""Shared fixtures: the app on SQLite (always) and PostgreSQL (when ADMIT_TEST_DATABASE_URL is
set), a clean database for every test, an ASGI client that fails the test on any 500."""

from __future__ import annotations

import asyncio
import os
import uuid
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import settings as hypothesis_settings
from sqlalchemy import inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from admit.app import create_app
from admit.config import Settings
from admit.db import Base
from admit.kit.lanes import in_transaction
from admit.migrate import upgrade
from tests import scheduling
from tests.factories import Factory, World, build_world
from tests.live import live_database, live_process, live_server  # noqa: F401

PG_URL = os.environ.get("ADMIT_TEST_DATABASE_URL")
Hook = Callable[..., Awaitable[None]]

# Property tests bound their work by what they count, never by the wall clock: hypothesis's
# per-example deadline (200 ms) fails on a loaded machine, not on slow code.
hypothesis_settings.register_profile("admit", deadline=None)
hypothesis_settings.load_profile("admit")
BACKENDS = ["sqlite"] + (["postgresql"] if PG_URL else [])


async def _create_pg_database(url: str) -> str:
    """A fresh database on the server named by ``url``; returns its URL."""
    parsed = make_url(url)
    name = f"{parsed.database or 'admit_test'}_{uuid.uuid4().hex[:8]}"
    admin = create_async_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
        # A throwaway database: commits need not wait for the disk.
        await conn.execute(text(f'ALTER DATABASE "{name}" SET synchronous_commit TO off'))
    await admin.dispose()
    return parsed.set(database=name).render_as_string(hide_password=False)


async def _drop_pg_database(url: str) -> None:
    parsed = make_url(url)
    admin = create_async_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
    await admin.dispose()


@pytest.fixture(scope="session", params=BACKENDS)
async def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[str]:
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("db") / "test.sqlite3"
        url = f"sqlite+aiosqlite:///{path}"
        await asyncio.to_thread(upgrade, url)
        yield url
        return
    assert PG_URL
    url = await _create_pg_database(PG_URL)
    await asyncio.to_thread(upgrade, url)
    yield url
    await _drop_pg_database(url)


@pytest.fixture(scope="session")
async def app(database_url: str, tmp_path_factory: pytest.TempPathFactory):
    data_dir: Path = tmp_path_factory.mktemp("data")
    # Small pools, a patient wait: each test process's app then holds at most 18 of the
    # PostgreSQL server's 100 connections (30 by default), beside the servers the live tests
    # start; clean-clone runs had run out of connections ("too many clients").
    settings = Settings(
        data_dir=data_dir,
        database_url=database_url,
        base_url="http://testserver",
        db_pool_size=6,
        db_pool_timeout=60,
        # Tests see every change at once; tests/shop/test_front_kept.py turns the kept front
        # pages (shop/front_pages.py) on for itself.
        shop_page_seconds=0,
    )
    application = create_app(settings)
    yield application
    await application.state.db.dispose()


async def _truncate(app) -> None:
    db = app.state.db
    async with db.engine.begin() as conn:
        tables = getattr(app.state, "test_tables", None)
        if tables is None:
            # Tables of models whose migration is still missing are left to test_migrations.
            existing = set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
            tables = [t.name for t in reversed(Base.metadata.sorted_tables) if t.name in existing]
            app.state.test_tables = tables
        # A test writes a few of the tables: one statement finds them, one more empties them
        # (DELETE on small tables is much cheaper than TRUNCATE, and a DELETE of each of the
        # ~150 tables cost more than the probe).
        probe = " UNION ALL ".join(
            f"""SELECT '{name}' WHERE EXISTS (SELECT 1 FROM "{name}")""" for name in tables
        )
        written = {row[0] for row in (await conn.exec_driver_sql(probe)).all()}
        script = "; ".join(f'DELETE FROM "{name}"' for name in tables if name in written)
        if not script:
            return
        raw = (await conn.get_raw_connection()).driver_connection
        if db.is_sqlite:
            await raw.executescript(f"SAVEPOINT clean; {script}; RELEASE clean;")
        else:
            await raw.execute(script)


# Transactions of the test database open for longer than a test lasts: something an earlier
# test started was never ended. Such a transaction holds back every kept page's bound (its
# xact_start), so later kept-page tests in the same process fail far from the cause.
_LINGERING = text(
    "SELECT pid, state, xact_start, application_name, left(query, 300) AS query "
    "FROM pg_stat_activity WHERE datname = current_database() "
    "AND backend_type = 'client backend' AND pid <> pg_backend_pid() "
    "AND xact_start < now() - interval '10 seconds'"
)


async def _warn_of_lingering_transactions(app, test: str) -> None:
    if app.state.db.is_sqlite:
        return
    async with app.state.db.engine.connect() as conn:
        rows = (await conn.execute(_LINGERING)).all()
    if rows:
        found = "; ".join(f"{r.pid} {r.state} since {r.xact_start}: {r.query!r}" for r in rows)
        warnings.warn(f"before {test}: transactions left open: {found}", stacklevel=1)


@pytest.fixture
async def clean_app(app, request: pytest.FixtureRequest):
    await _warn_of_lingering_transactions(app, request.node.nodeid)
    await _truncate(app)
    return app


async def _no_server_errors(response: httpx.Response) -> None:
    if response.status_code >= 500:
        await response.aread()
        raise AssertionError(
            f"{response.request.method} {response.request.url} answered "
            f"{response.status_code}: {response.text}"
        )


def asgi_client(
    app: Any, *, request_hooks: Sequence[Hook] = (), response_hooks: Sequence[Hook] = ()
) -> httpx.AsyncClient:
    """A client of ``app`` in this process that fails the test on any 5xx answer (after
    ``response_hooks``, so they see it first)."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://testserver",
        event_hooks={
            "request": list(request_hooks),
            "response": [*response_hooks, _no_server_errors],
        },
    )


@pytest.fixture
async def client(clean_app) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(clean_app) as c:
        yield c
    await _assert_sales_ledger_exact(clean_app)


async def _assert_sales_ledger_exact(app) -> None:
    """After every API test: the running sales totals equal a recount from the rows.

    Any code path that changes orders or carts without the ledger following fails here."""
    from sqlalchemy import exists, or_, select

    from admit.models import CartPosition, OrderPosition, SalesCount
    from admit.quotas import ledger

    async with app.state.db.sessionmaker() as session:
        # Most tests sell nothing: one probe spares them the recount's three statements.
        sold = or_(*(exists().select_from(t) for t in (SalesCount, OrderPosition, CartPosition)))
        if not await session.scalar(select(sold)):
            return
        drifted = await ledger.drift(session)
    assert not drifted, f"sales ledger drifted from a recount: {drifted}"


@pytest.fixture
async def background(clean_app):
    """The app's job engine running in the test's process (the embedded mode): jobs enqueued
    by committed requests run here; ``await background.engine.broker.wait_all()`` waits for
    the ones started so far."""
    parts = clean_app.state.background
    async with parts.serving(scheduler=False):
        yield parts


@pytest.fixture
def factory(clean_app) -> Factory:
    return Factory(clean_app.state.db.sessionmaker)


@pytest.fixture
async def world(factory: Factory) -> World:
    return await build_world(factory)


class QueryCounter:
    """Counts SQL statements the app sends (SQLAlchemy and the native fast-read pool)."""

    def __init__(self, app) -> None:
        self.app = app
        self.db = app.state.db
        self.statements: list[str] = []
        self._fast_start = 0

    def _on_execute(self, _conn, _cursor, statement, _params, _context, _many) -> None:
        if (
            not statement.lstrip()
            .upper()
            .startswith(("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE"))
            # The order lists' page bound (``kit/stamps/page``): probed at most every 100 ms,
            # so whether a given request probes depends on the clock, not on the list.
            and "pg_stat_activity" not in statement
        ):
            self.statements.append(statement)

    def __enter__(self) -> QueryCounter:
        from sqlalchemy import event

        # Every counted request looks its credential up: the worker's short credential cache
        # would otherwise make the count depend on what ran before, not on the request.
        cache = getattr(self.app.state, "credential_cache", None)
        if cache is not None:
            cache.clear()
        # Likewise a kept page (``kit/stamps/pagecache.py``) would answer without the page's
        # queries.
        pages = getattr(self.app.state, "page_cache", None)
        if pages is not None:
            pages.clear()
        self._fast_start = self.db.fast.executed
        event.listen(self.db.engine.sync_engine, "before_cursor_execute", self._on_execute)
        in_transaction.listeners.append(self._on_sent)
        return self

    def _on_sent(self, statement: str) -> None:
        """A statement sent past SQLAlchemy on the session's connection (in_transaction)."""
        self._on_execute(None, None, statement, None, None, False)

    def __exit__(self, *exc: object) -> None:
        from sqlalchemy import event

        event.remove(self.db.engine.sync_engine, "before_cursor_execute", self._on_execute)
        in_transaction.listeners.remove(self._on_sent)
        self.fast = self.db.fast.executed - self._fast_start

    @property
    def count(self) -> int:
        fast = getattr(self, "fast", None)
        if fast is None:  # still inside the block
            fast = self.db.fast.executed - self._fast_start
        return len(self.statements) + fast


@pytest.fixture
async def page_cache(clean_app):
    """The app's kept list pages (``kit/stamps/pagecache.py``); they are kept on PostgreSQL only.

    A kept page holds from the oldest open transaction of the database on (its bound), so a
    test that expects a page to be kept first waits until no other transaction of its
    database is open: the work an earlier test left running (a job still drawing, a server
    still answering) would otherwise hold the bound back. One still open after 20 s is named
    in the failure."""
    if not clean_app.state.db.fast.native:
        pytest.skip("the fast lane and its kept pages run on PostgreSQL")
    for _ in range(200):
        async with clean_app.state.db.engine.connect() as conn:
            others = (await conn.execute(_OPEN)).all()
        if not others:
            return clean_app.state.page_cache
        await asyncio.sleep(0.1)
    raise AssertionError(f"transactions of the test database stay open: {others}")


_OPEN = text(
    "SELECT pid, state, xact_start, left(query, 200) FROM pg_stat_activity "
    "WHERE datname = current_database() AND backend_type = 'client backend' "
    "AND pid <> pg_backend_pid() AND xact_start IS NOT NULL"
)


@pytest.fixture
def count_queries(clean_app):
    """``with count_queries() as q: ...; q.count`` — statements sent by the app."""
    return lambda: QueryCounter(clean_app)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``-n 2 --dist loadgroup`` (``make test``): each backend's tests in a few units of whole
    modules, every other module a unit, slow ones early (``tests/scheduling.py``)."""
    if config.getvalue("dist") == "loadgroup":
        return scheduling.GroupScheduling(config, log)
    return None
