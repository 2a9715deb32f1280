"""Real ``admit worker`` and ``admit scheduler`` processes on PostgreSQL with Redis."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import text

from admit.config import Settings
from admit.db import Database, create_database
from admit.jobs.runtime import Background
from tests.live import SERVER_POOL_ENV
from tests.parts import missing

PG_URL = os.environ.get("ADMIT_TEST_DATABASE_URL")
REDIS_URL = os.environ.get("ADMIT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def redis_available() -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except Exception:
        return False


@dataclass
class Processes:
    """Starts admit commands against one database and queue; stops them all at the end."""

    env: dict[str, str]
    logs: Path
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, *args: str, name: str) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "admit", *args],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.started.append(process)
        return process

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def stop_all(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + 15
        for process in self.started:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()


@dataclass
class LiveJobs:
    db: Database
    settings: Settings
    processes: Processes
    producer: Background


@pytest.fixture(scope="module")
async def jobs_database() -> AsyncIterator[str]:
    """A database of its own: the live API server of other tests runs its own scheduler."""
    async with fresh_jobs_database() as url:
        yield url


@asynccontextmanager
async def fresh_jobs_database() -> AsyncIterator[str]:
    """A new, migrated PostgreSQL database for job processes, dropped after; skips the test
    without PostgreSQL or Redis."""
    if not PG_URL:
        pytest.skip(missing("PostgreSQL", "job processes need ADMIT_TEST_DATABASE_URL"))
    if not redis_available():
        pytest.skip(missing("Redis", f"not reachable at {REDIS_URL}"))
    from admit.migrate import upgrade
    from tests.conftest import _create_pg_database, _drop_pg_database

    url = await _create_pg_database(PG_URL)
    await asyncio.to_thread(upgrade, url)
    yield url
    await _drop_pg_database(url)


@pytest.fixture
async def live_jobs(jobs_database: str, tmp_path: Path) -> AsyncIterator[LiveJobs]:
    live_database = jobs_database
    queue = f"admit-test-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "ADMIT_DATABASE_URL": live_database,
        "ADMIT_DATA_DIR": str(tmp_path),
        "ADMIT_REDIS_URL": REDIS_URL,
        "ADMIT_JOB_QUEUE": queue,
        **SERVER_POOL_ENV,
        "ADMIT_JOB_LEASE_SECONDS": "2",
        "ADMIT_JOB_SWEEP_SECONDS": "0.5",
        "ADMIT_JOB_REDELIVER_SECONDS": "3",
        "ADMIT_DB_POOL_SIZE": "4",
        # The tests read which periodic task ran where from the processes' INFO lines.
        "ADMIT_LOG_LEVEL": "info",
    }
    settings = Settings(
        database_url=live_database,
        data_dir=tmp_path,
        redis_url=REDIS_URL,
        job_queue=queue,
        job_lease_seconds=2,
    )
    db = create_database(live_database, pool_size=4)
    async with db.engine.begin() as conn:
        await conn.execute(text("DELETE FROM jobs"))
        await conn.execute(text("DELETE FROM periodic_runs"))
    producer = Background(settings, db, broker_url=REDIS_URL)
    await producer.engine.start()
    processes = Processes(env, tmp_path)
    try:
        yield LiveJobs(db, settings, processes, producer)
    finally:
        processes.stop_all()
        await producer.engine.stop()
        import redis.asyncio

        client = redis.asyncio.Redis.from_url(REDIS_URL)
        await client.delete(queue)
        await client.aclose()
        await db.dispose()
