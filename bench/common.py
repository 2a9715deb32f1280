"""Helpers for the benchmarks: a fresh PostgreSQL database, a server process, wrk."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

ROOT = Path(__file__).resolve().parent.parent
PG_SERVER = os.environ.get(
    "ADMIT_BENCH_PG", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
)


def _run_admin(*statements: str) -> None:
    async def work() -> None:
        engine = create_async_engine(PG_SERVER, isolation_level="AUTOCOMMIT")
        async with engine.connect() as conn:
            for statement in statements:
                await conn.execute(text(statement))
        await engine.dispose()

    asyncio.run(work())


def fresh_pg_database(name: str) -> str:
    """Drops and recreates database ``name`` (plus ``$ADMIT_BENCH_DB_SUFFIX``); returns its
    URL. The database is dropped again when the benchmark exits, so the next one does not
    share the server with its vacuuming."""
    name += os.environ.get("ADMIT_BENCH_DB_SUFFIX", "")  # side by side runs keep apart
    drop = f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
    _run_admin(drop, f'CREATE DATABASE "{name}"')
    atexit.register(_run_admin, drop)
    return make_url(PG_SERVER).set(database=name).render_as_string(hide_password=False)


def admit(env: dict[str, str], *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "admit", *args],
        env={**os.environ, **env},
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def server(env: dict[str, str], workers: int = 2) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "admit", "serve", "--port", str(port), "--workers", str(workers)],
        env={**os.environ, **env},
        cwd=ROOT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.2)
        time.sleep(1.0)  # let every worker finish importing
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def wrk(
    url: str,
    token: str,
    *,
    connections: int,
    seconds: int,
    threads: int = 2,
    script: str | None = None,
) -> dict:
    """Runs wrk (optionally with a Lua ``script``, e.g. one that POSTs) and parses its report."""
    out = subprocess.run(
        [
            "wrk",
            f"-t{threads}",
            f"-c{connections}",
            f"-d{seconds}s",
            "--latency",
            "-H",
            f"Authorization: Token {token}",
            *(["-s", script] if script else []),
            url,
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    lat = dict(re.findall(r"^\s+(50|99)%\s+(\S+)$", out, re.M))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    total = int(re.search(r"(\d+) requests in", out).group(1))
    return {
        "requests": total,
        "requests_per_second": rps,
        "p50": lat.get("50"),
        "p99": lat.get("99"),
        "non_2xx": int(non2xx.group(1)) if non2xx else 0,
        "raw": out,
    }


def demo_token(env: dict[str, str]) -> dict:
    return json.loads(admit(env, "demo", "--json").strip().splitlines()[-1])
