"""Database failures a retry may resolve are answered 503 (unavailable) or 409 (busy) with
``Retry-After``, never 500: on the framework path and on the fast lane, in-process.

No server process here: an application pointed at a port nobody listens on meets the same
refused connections as one whose PostgreSQL is restarting; a pool held empty by the test is
the full pool of a rush.
"""

from __future__ import annotations

import asyncio
import errno
import time
from pathlib import Path

import asyncpg
import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from admit.app import create_app
from admit.config import Settings
from admit.kit.http.errors import database_error
from tests.factories import Factory, auth, build_world
from tests.faults.cluster import free_port
from tests.faults.site import NOT_ON_PG, PG_URL

ORG = "/api/v1/organizers/acme"
EVENT = f"{ORG}/events/summit"
TOKEN = {"Authorization": "Token " + "x" * 64}


class _Wrapped(Exception):
    """Stands in for a DBAPI error object (SQLAlchemy keeps the driver's as its cause)."""


def _dbapi(orig: BaseException, invalidated: bool = False) -> DBAPIError:
    return DBAPIError("SELECT 1", {}, orig, connection_invalidated=invalidated)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed"), 503),
        (OSError(errno.EHOSTUNREACH, "No route to host"), 503),
        (TimeoutError(), 503),
        (PoolTimeoutError("QueuePool limit of size 10 overflow 10 reached"), 503),
        (asyncpg.CannotConnectNowError("the database system is starting up"), 503),
        (asyncpg.AdminShutdownError("terminating connection"), 503),
        (asyncpg.TooManyConnectionsError("sorry, too many clients already"), 503),
        (asyncpg.ConnectionDoesNotExistError("connection was closed"), 503),
        (asyncpg.InterfaceError("connection is closed"), 503),
        (_dbapi(_Wrapped("closed"), invalidated=True), 503),
        (_dbapi(asyncpg.AdminShutdownError("terminating connection")), 503),
        (asyncpg.LockNotAvailableError("canceling statement due to lock timeout"), 409),
        (_dbapi(asyncpg.DeadlockDetectedError("deadlock detected")), 409),
        (asyncpg.UniqueViolationError("duplicate key"), None),
        (_dbapi(asyncpg.UndefinedColumnError("no such column")), None),
        (asyncpg.InterfaceError("cannot use a closed pool"), None),
        (OSError(errno.ENOSPC, "No space left on device"), None),
        (ValueError("a bug"), None),
    ],
)
def test_what_counts_as_unavailable_or_busy(exc: BaseException, status: int | None) -> None:
    error = database_error(exc)
    assert (error.status if error else None) == status
    if error is not None:
        assert int(error.headers["Retry-After"]) > 0
        assert set(error.body()) == {"detail"}


def test_a_cause_chain_is_followed() -> None:
    try:
        try:
            raise ConnectionResetError(errno.ECONNRESET, "reset")
        except ConnectionResetError as inner:
            raise RuntimeError("the statement failed") from inner
    except RuntimeError as outer:
        error = database_error(outer)
    assert error is not None and error.status == 503


@pytest.fixture
async def unreachable(tmp_path: Path):
    """The application pointed at a PostgreSQL port nobody listens on (asyncpg is the driver,
    so the fast lane is on as in production). Its pool timeout is the longest allowed: an
    answer "at once" is one that did not wait for it."""
    url = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/admit"
    settings = Settings(
        data_dir=tmp_path, database_url=url, base_url="http://testserver", db_pool_timeout=600
    )
    app = create_app(settings)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client
    await app.state.db.dispose()


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", f"{EVENT}/orders/", None),  # framework path, read
        ("POST", f"{EVENT}/orders/", {"email": "a@example.org", "positions": [{"item": 1}]}),
        ("POST", f"{EVENT}/cartpositions/", {"item": 1, "price": "1.00"}),  # fast lane
        ("POST", f"{ORG}/checkinrpc/redeem/", {"secret": "abc", "lists": [1]}),  # fast lane
        ("GET", f"{EVENT}/quotas/1/availability/", None),  # fast lane, read
    ],
)
async def test_an_unreachable_database_is_503_with_retry_after_at_once(
    unreachable: httpx.AsyncClient, method: str, path: str, body: dict | None
) -> None:
    # At once: a tenth of the pool timeout (600 s) is far more than any machine needs to be
    # refused a connection, and far less than waiting for a connection would take.
    response = await asyncio.wait_for(
        unreachable.request(method, path, json=body, headers=TOKEN), 60
    )
    assert response.status_code == 503, response.text
    assert set(response.json()) == {"detail"}
    assert "unavailable" in response.json()["detail"]
    assert int(response.headers["retry-after"]) > 0


@pytest.mark.skipif(not PG_URL, reason=NOT_ON_PG)
async def test_a_full_pool_answers_503_after_the_pool_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_database: str
) -> None:
    monkeypatch.setenv("ADMIT_DB_POOL_TIMEOUT", "0.5")
    settings = Settings(
        data_dir=tmp_path, database_url=fresh_database, base_url="http://testserver", db_pool_size=1
    )
    app = create_app(settings)
    engine = app.state.db.engine
    world = await build_world(Factory(app.state.db.sessionmaker))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    # Pool size 1 plus 1 overflow: both held by someone else for the whole request.
    async with engine.connect() as one, engine.connect() as two:
        await one.execute(text("SELECT 1"))
        await two.execute(text("SELECT 1"))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            started = time.monotonic()
            response = await client.get("/api/v1/organizers/", headers=auth(world.admin))
            waited = time.monotonic() - started
    await app.state.db.dispose()
    assert response.status_code == 503, response.text
    assert "busy" in response.json()["detail"]
    assert response.headers["retry-after"]
    # It waited for the pool timeout (0.5 s; the lower bound holds on any machine), and the
    # timeout ended the wait ("busy" above); the upper bound only catches a hang.
    assert 0.4 < waited < 60


async def test_a_disk_full_upload_is_507(tmp_path: Path) -> None:
    """A request whose file cannot be stored (no space left) gets 507, not 500."""
    from fastapi import FastAPI

    from admit.kit.http.errors import install_error_handlers

    app = FastAPI()
    install_error_handlers(app)

    @app.post("/store")
    async def store() -> None:
        await asyncio.sleep(0)
        raise OSError(errno.ENOSPC, "No space left on device")

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        response = await client.post("/store")
    assert response.status_code == 507
    assert set(response.json()) == {"detail"}
