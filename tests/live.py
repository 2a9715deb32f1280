"""A real Admit server process for concurrency tests (PostgreSQL only).

The in-process ASGI client shares one event loop with the test; races between API *processes*
only show against a server with several workers. ``live_server`` starts ``admit serve
--workers 2`` on a free port against its own fresh PostgreSQL database and gives the test a
:class:`LiveServer` with a base URL, a :class:`~tests.factories.Factory` writing to the same
database, and a :class:`World` of two tenants. Tables are emptied before each test.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from admit.db import Base, Database, create_database
from tests.factories import Factory, World, build_world
from tests.parts import missing

PG_URL = os.environ.get("ADMIT_TEST_DATABASE_URL")
# Every Admit process a test starts gets small pools and a patient pool wait: a worker then
# holds at most 12 connections (4 pooled, 4 overflow, 4 fast-read), so the suite runs beside
# another client holding 25 of a 100-connection server, and a rush queues for connections
# instead of answering 503 "too busy" on a slow machine.
SERVER_POOL_ENV = {"ADMIT_DB_POOL_SIZE": "4", "ADMIT_DB_POOL_TIMEOUT": "60"}


@dataclass
class LiveServer:
    base_url: str
    db: Database
    factory: Factory
    world: World

    def client(
        self, *, connections: int = 64, timeout: float = 60.0, keep_alive: bool = True
    ) -> httpx.AsyncClient:
        """A client with a pool big enough for ``connections`` requests in flight, which
        retries a 503 as its ``Retry-After`` asks (see :class:`RetryUnavailable`). Without
        ``keep_alive`` every request opens a new connection, which any server worker may
        accept."""
        kept = connections if keep_alive else 0
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=kept)
        transport = RetryUnavailable(httpx.AsyncHTTPTransport(limits=limits))
        return httpx.AsyncClient(base_url=self.base_url, transport=transport, timeout=timeout)

    async def scalar(self, sql: str, **params: Any) -> Any:
        async with self.db.engine.connect() as conn:
            return (await conn.execute(text(sql), params)).scalar()


class RetryUnavailable(httpx.AsyncBaseTransport):
    """Sends a request again when the server answers 503 with ``Retry-After``, as a
    well-behaved client does.

    The suite shares one PostgreSQL (100 connections by default) between both test processes,
    this server's two workers and any server a fault test starts; when they peak together the
    server is refused a connection ("too many clients") and rightly answers 503 before doing
    any work. A race test counts outcomes of the work, so it asks again rather than counting
    a refusal the database's limit caused. Its assertions on the ledger would catch a retry
    of work that had been done.
    """

    ATTEMPTS = 20

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.retries = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        for _ in range(self.ATTEMPTS - 1):
            response = await self.inner.handle_async_request(request)
            wait = response.headers.get("Retry-After")
            if response.status_code != 503 or wait is None:
                return response
            await response.aclose()
            self.retries += 1
            await asyncio.sleep(min(float(wait), 1.0))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def gather_limited(
    calls: Iterable[Callable[[], Awaitable[Any]]], concurrency: int
) -> list[Any]:
    """Runs the calls with at most ``concurrency`` in flight; results in call order."""
    gate = asyncio.Semaphore(concurrency)

    async def one(call: Callable[[], Awaitable[Any]]) -> Any:
        async with gate:
            return await call()

    return await asyncio.gather(*(one(c) for c in calls))


def free_port() -> int:
    """A TCP port on 127.0.0.1 free at the moment of asking."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_serving(
    url: str, process: subprocess.Popen[bytes], seconds: float = 60, log: Path | None = None
) -> None:
    """Returns once the server at ``url`` answers; raises (with ``log``'s text) when its
    process ended or ``seconds`` passed first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}{_text(log)}")
        try:
            if httpx.get(f"{url}/api/v1/", timeout=1).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the server did not start in time{_text(log)}")


def _text(log: Path | None) -> str:
    if log is None or not log.exists():
        return ""
    return ": " + log.read_text(errors="replace")


@pytest.fixture(scope="session")
async def live_database(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    if not PG_URL:
        pytest.skip(
            missing("PostgreSQL", "tests against a server process need ADMIT_TEST_DATABASE_URL")
        )
    from admit.migrate import upgrade
    from tests.conftest import _create_pg_database, _drop_pg_database

    url = await _create_pg_database(PG_URL)
    await asyncio.to_thread(upgrade, url)
    yield url
    await _drop_pg_database(url)


@contextmanager
def serving(
    env: Mapping[str, str], log: Path, *, workers: int = 1, port: int | None = None
) -> Iterator[str]:
    """``admit serve`` with ``env`` on ``port`` (a free one by default), its ``ADMIT_BASE_URL``
    set to match: yields the base URL once it answers, and stops it (SIGTERM, SIGKILL after
    15 s) after. Output goes to ``log``: read it when a test that used the server fails."""
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "admit", "serve", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*command, "--workers", str(workers)],
            env={**env, "ADMIT_BASE_URL": url},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_until_serving(url, process, log=log)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="session")
def live_process(live_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterable[str]:
    data_dir: Path = tmp_path_factory.mktemp("live")
    env = {
        **os.environ,
        "ADMIT_DATABASE_URL": live_database,
        "ADMIT_DATA_DIR": str(data_dir),
        **SERVER_POOL_ENV,
    }
    with serving(env, data_dir / "server.log", workers=2) as url:
        yield url


@pytest.fixture
async def live_server(live_database: str, live_process: str) -> AsyncIterator[LiveServer]:
    db = create_database(live_database, pool_size=4)
    async with db.engine.begin() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        tables = [t.name for t in reversed(Base.metadata.sorted_tables)]
        await raw.execute("; ".join(f'DELETE FROM "{n}"' for n in tables))
    factory = Factory(db.sessionmaker)
    world = await build_world(factory)
    try:
        yield LiveServer(live_process, db, factory, world)
    finally:
        await db.dispose()
