"""What the fault tests share: an ``admit serve --workers 2`` process they may break, its
database and test data, and a load of timed requests.

Unlike ``tests/live.py`` (one server for a whole session) every fault test gets a server of its
own: it kills its workers, restarts its database or fills its disk.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text

from admit.db import Database, create_database
from admit.quotas import ledger
from tests.factories import Factory, World, build_world
from tests.faults.cluster import free_port
from tests.live import SERVER_POOL_ENV, RetryUnavailable, _wait_until_serving
from tests.parts import missing

PG_URL = os.environ.get("ADMIT_TEST_DATABASE_URL")
NOT_ON_PG = missing(
    "PostgreSQL", "fault tests run against a real PostgreSQL: set ADMIT_TEST_DATABASE_URL"
)


class AdmitProcess:
    """``admit serve --workers 2`` in a session of its own (so every worker can be signalled)."""

    def __init__(self, database_url: str, data_dir: Path, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data_dir = data_dir
        self.log_path = data_dir / "server.log"
        self.env = {
            **os.environ,
            "ADMIT_DATABASE_URL": database_url,
            "ADMIT_DATA_DIR": str(data_dir),
            "ADMIT_BASE_URL": self.url,
            **SERVER_POOL_ENV,
            **env,
        }
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, workers: int = 2) -> None:
        command = [sys.executable, "-m", "admit", "serve", "--port", str(self.port)]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [*command, "--workers", str(workers)],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.wait_until_serving()

    def wait_until_serving(self, seconds: float = 45) -> None:
        assert self.process is not None
        _wait_until_serving(self.url, self.process, seconds, log=self.log_path)

    def workers(self) -> list[int]:
        """The pids of the worker processes (children started by multiprocessing)."""
        assert self.process is not None
        pid = self.process.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        found = []
        for child in children:
            try:
                if b"multiprocessing.spawn" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.append(int(child))
            except FileNotFoundError:
                continue  # it ended just now
        return found

    def listeners(self) -> int:
        """How many sockets listen on the server's port (one per worker ready to serve)."""
        count = 0
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == self.port:
                    count += 1
        return count

    def wait_for_replacement(self, dead: int, seconds: float = 45) -> int:
        """The pid of the worker started in place of ``dead``, once it listens."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            workers = self.workers()
            if len(workers) == 2 and dead not in workers and self.listeners() == 2:
                return max(workers)
            time.sleep(0.1)
        raise AssertionError(f"no replacement for worker {dead}: {self.log[-2000:]}")

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> int | None:
        """SIGTERM as a service manager sends it; SIGKILL to the group if that did not do."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else None
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            return self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            return None


@dataclass
class Site:
    """A server under test with its database and the two tenants' world in it."""

    server: AdmitProcess
    db: Database
    factory: Factory
    world: World

    def client(
        self, connections: int = 32, timeout: float = 30.0, *, retry_unavailable: bool = False
    ) -> httpx.AsyncClient:
        """With ``retry_unavailable`` a 503 with ``Retry-After`` is asked again (see
        :class:`tests.live.RetryUnavailable`): for tests whose fault is not the database's."""
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        transport: httpx.AsyncBaseTransport = httpx.AsyncHTTPTransport(limits=limits)
        if retry_unavailable:
            transport = RetryUnavailable(transport)
        return httpx.AsyncClient(base_url=self.server.url, transport=transport, timeout=timeout)

    def event_url(self, suffix: str) -> str:
        w = self.world
        return f"/api/v1/organizers/{w.org.slug}/events/{w.event.slug}/{suffix}"

    async def scalar(self, sql: str, **params: Any) -> Any:
        async with self.db.engine.connect() as conn:
            return (await conn.execute(text(sql), params)).scalar()

    async def ledger_drift(self) -> dict:
        """The running sales totals against a recount (as tests/conftest.py checks)."""
        async with self.db.sessionmaker() as session:
            return await ledger.drift(session)


@asynccontextmanager
async def open_site(
    database_url: str,
    data_dir: Path,
    prepare: Callable[[Factory, World], Awaitable[Any]] | None = None,
    **env: str,
) -> AsyncIterator[tuple[Site, Any]]:
    """A server process on ``database_url`` (migrated already) and test data in it: the
    world and what ``prepare`` writes (returned beside the site), while the server starts."""
    db = create_database(database_url, pool_size=4)
    factory = Factory(db.sessionmaker)
    server = AdmitProcess(database_url, data_dir, **env)
    starting = asyncio.create_task(asyncio.to_thread(server.start))
    try:
        world = await build_world(factory)
        prepared = await prepare(factory, world) if prepare else None
        await starting
        yield Site(server, db, factory, world), prepared
    finally:
        await asyncio.gather(starting, return_exceptions=True)
        await asyncio.to_thread(server.stop)
        await db.dispose()


@dataclass
class Answer:
    """One request of a load: when it ran and what came back (status None: no HTTP answer)."""

    kind: str
    started: float
    ended: float
    status: int | None
    body: Any = None
    retry_after: str | None = None
    error: str | None = None
    key: Any = None

    @property
    def seconds(self) -> float:
        return self.ended - self.started


Call = Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]


@dataclass
class Load:
    """Clients sending requests one after another until stopped; every answer is kept."""

    answers: list[Answer] = field(default_factory=list)
    stopping: bool = False

    async def timed(
        self, client: httpx.AsyncClient, kind: str, call: Call, key: Any = None
    ) -> Answer:
        started = time.monotonic()
        try:
            response = await call(client)
        except httpx.HTTPError as exc:
            answer = Answer(kind, started, time.monotonic(), None, error=repr(exc), key=key)
        else:
            try:
                body = response.json()
            except ValueError:
                body = response.text
            answer = Answer(
                kind,
                started,
                time.monotonic(),
                response.status_code,
                body,
                response.headers.get("retry-after"),
                key=key,
            )
        self.answers.append(answer)
        return answer

    async def client_loop(
        self, client: httpx.AsyncClient, next_call: Callable[[], tuple[str, Call, Any] | None]
    ) -> None:
        while not self.stopping:
            planned = next_call()
            if planned is None:
                return
            kind, call, key = planned
            answer = await self.timed(client, kind, call, key)
            if answer.status == 503:
                await asyncio.sleep(0.05)  # a client honouring Retry-After loosely


def statuses(answers: list[Answer]) -> dict[tuple[str, int | None], int]:
    counts: dict[tuple[str, int | None], int] = {}
    for answer in answers:
        counts[(answer.kind, answer.status)] = counts.get((answer.kind, answer.status), 0) + 1
    return counts
