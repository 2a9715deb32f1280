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
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

ROOT = Path(__file__).resolve().parent.parent
# The machine's PostgreSQL over TCP, as every earlier figure was measured. Through its Unix
# socket (``ADMIT_BENCH_PG=postgresql+asyncpg://postgres@/postgres?host=/var/run/postgresql``)
# the ordinary scenarios measured the same within 0-5 % on the 2-core VM (session 23).
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


@dataclass
class Served:
    """A running ``admit serve``: its base URL and the supervising process's id."""

    base: str
    pid: int

    def worker_pids(self) -> list[int]:
        """The worker processes (spawned children; not multiprocessing's resource tracker)."""
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            if parent == self.pid and b"spawn_main" in cmdline:
                pids.append(int(entry.name))
        return sorted(pids)


def cpu_by_process(pids: list[int]) -> dict[int, float]:
    """User and system CPU seconds each process has used so far (gone ones left out)."""
    ticks = os.sysconf("SC_CLK_TCK")
    used = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used[pid] = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return used


def cpu_used(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds used between two readings by the processes alive at the second (one that
    started in between counts from 0; one that ended in between is not counted)."""
    return sum(now - before.get(pid, 0.0) for pid, now in after.items())


def postgres_backends(database: str) -> list[int]:
    """The PostgreSQL server processes serving ``database`` now."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if cmdline.startswith("postgres: ") and f" {database} " in cmdline:
            found.append(int(entry.name))
    return found


def listening_sockets(port: int) -> int:
    """Sockets listening on ``port`` on 127.0.0.1 (one per worker with ``SO_REUSEPORT``)."""
    suffix = f":{port:04X}"
    return sum(
        1
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
        if line.split()[1].endswith(suffix) and line.split()[3] == "0A"
    )


def memory_mb(pid: int, field: str = "VmRSS") -> float:
    """``VmRSS`` (resident now) or ``VmHWM`` (peak resident) of a process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no {field} for process {pid}")


@contextlib.contextmanager
def serving(env: dict[str, str], workers: int = 2, log: IO[str] | None = None) -> Iterator[Served]:
    """``admit serve --workers N`` on a free port, stopped on exit; its output to ``log``
    (default: this process's)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "admit", "serve", "--port", str(port), "--workers", str(workers)],
        env={**os.environ, **env},
        cwd=ROOT,
        start_new_session=True,
        stdout=log,
        stderr=log,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        # Every worker listens on a socket of its own once its application started: wait for
        # all of them, or connections opened early all stay with the first (a busy machine
        # takes 20 s and more to start two workers).
        deadline = time.time() + 90
        while listening_sockets(port) < workers and time.time() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"admit serve ended with {proc.returncode}")
            time.sleep(0.2)
        if not listening_sockets(port):
            raise RuntimeError("admit serve did not listen within 90 s")
        time.sleep(1.0)
        yield Served(base, proc.pid)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


@contextlib.contextmanager
def server(env: dict[str, str], workers: int = 2) -> Iterator[str]:
    with serving(env, workers) as served:
        yield served.base


# Appended to a wrk script: counts the answers by status code and prints them at the end, one
# "status CODE COUNT" line each (:func:`wrk` reads them into ``statuses``).
STATUS_TALLY = """
local tally_threads = {}
function setup(thread)
  table.insert(tally_threads, thread)
end
function init(args)
  statuses = {}
end
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(tally_threads) do
    for code, n in pairs(thread:get("statuses")) do total[code] = (total[code] or 0) + n end
  end
  for code, n in pairs(total) do io.write(string.format("status %d %d\\n", code, n)) end
end
"""

_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


def latency_ms(text: str | None) -> float | None:
    """wrk's latency figure ("812.00us", "12.34ms", "1.02s", "2.00m") in milliseconds."""
    if not text:
        return None
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", text.strip())
    if match is None:
        raise ValueError(f"not a wrk latency: {text!r}")
    return round(float(match.group(1)) * _UNITS_MS[match.group(2)], 3)


def wrk(
    url: str,
    token: str,
    *,
    connections: int,
    seconds: int,
    threads: int = 2,
    script: str | None = None,
    timeout: int | None = None,
) -> dict:
    """Runs wrk (optionally with a Lua ``script``, e.g. one that POSTs) and parses its report.
    Answers slower than ``timeout`` seconds (wrk's default: 2) count as socket errors and are
    left out of the latency figures."""
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
            *(["--timeout", f"{timeout}s"] if timeout else []),
            url,
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return parse_wrk(out)


def parse_wrk(out: str) -> dict:
    """wrk's report (with ``--latency``) as numbers; latencies stay wrk's text ("12.3ms")."""
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    lat = dict(re.findall(r"^\s+(50|99)%\s+(\S+)\s*$", out, re.M))  # "1.24s " ends in a space
    slowest = re.search(r"^\s+Latency\s+\S+\s+\S+\s+(\S+)", out, re.M)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    total = int(re.search(r"(\d+) requests in", out).group(1))
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    statuses = {int(c): int(n) for c, n in re.findall(r"^status (\d+) (\d+)$", out, re.M)}
    return {
        "requests": total,
        "requests_per_second": rps,
        "p50": lat.get("50"),
        "p99": lat.get("99"),
        "max": slowest.group(1) if slowest else None,
        "non_2xx": int(non2xx.group(1)) if non2xx else 0,
        # by status code; only when the script appends STATUS_TALLY
        "statuses": dict(sorted(statuses.items())),
        "socket_errors": sum(int(n) for n in errors.groups()) if errors else 0,
        "raw": out,
    }


def merged(phases: list[dict], seconds: float) -> dict:
    """wrk reports of phases of one kind, ``seconds`` long each, as one: counts summed, each
    ``<count>_per_second`` recomputed over the whole time, latencies listed phase by phase
    ("12.1ms / 14.0ms"; :func:`worst_ms` reads the worst)."""
    out: dict = {}
    for name, first in phases[0].items():
        values = [p[name] for p in phases]
        if name == "raw" or name.endswith("_per_second"):
            continue
        if isinstance(first, int):
            out[name] = sum(values)
        elif isinstance(first, dict):
            out[name] = {k: sum(v.get(k, 0) for v in values) for k in sorted(set().union(*values))}
        else:
            out[name] = " / ".join(str(v) for v in values)
    for name in phases[0]:
        if name.endswith("_per_second"):
            out[name] = round(out[name.removesuffix("_per_second")] / (seconds * len(phases)), 1)
    return out


def worst_ms(latencies: str | None) -> float | None:
    """The highest of the latencies :func:`merged` listed (or of one wrk figure), in ms."""
    if not latencies:
        return None
    return max(latency_ms(part) or 0.0 for part in latencies.split(" / "))


def demo_token(env: dict[str, str]) -> dict:
    return json.loads(admit(env, "demo", "--json").strip().splitlines()[-1])


async def vacuum(url: str) -> None:
    """VACUUM ANALYZE and a CHECKPOINT after a load: the measurement then sees the tables as
    a running system has them, and no checkpoint flushes the load's writes during it."""
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
    async with engine.connect() as conn:
        await conn.execute(text("VACUUM ANALYZE"))
        await conn.execute(text("CHECKPOINT"))
    await engine.dispose()
