"""The order list of 100,000 positions as XLSX and as CSV, run by an ``admit worker``.

1. Builds the demo event on a fresh PostgreSQL database with ``--positions`` order positions
   (two per order; 80 % of the orders paid with a payment, 15 % pending, 5 % canceled; a
   service fee on every tenth) and answers to four questions per position (a number, a
   text, a choice and, for half of them, a multiple choice): COPY, a few seconds.
2. Starts ``admit serve --workers 2`` and, per format, a fresh ``admit worker`` (Redis
   broker), asks for ``orderlist`` through the API and waits for the download: reported are
   the job's run time (started to finished, from its row), the time from the request to the
   downloadable file, the file's size, and the worker's peak RSS (``VmHWM``: a fresh worker
   per format, so the peak is that export's).
3. Runs the XLSX export once more while wrk sends event-detail GETs (``--connections``) and
   reports their p99 against the same GETs without an export running.
Targets (issue: exporters): < 10 s per export; peak RSS < 200 MB; report the GET p99.
Run: .venv/bin/python bench/export.py [--positions 100000] [--connections 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from bench.common import ROOT, admit, demo_token, fresh_pg_database, memory_mb, server, wrk
from bench.seed import dsn, populate

REDIS_URL = os.environ.get("ADMIT_BENCH_REDIS", "redis://127.0.0.1:6379/0")


def start_worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    worker = subprocess.Popen(
        [sys.executable, "-m", "admit", "worker", "--concurrency", "1"],
        env={**os.environ, **env},
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # Ready once it ran a diagnostic job (imported, connected to Redis).
    admit(env, "jobs", "ping", "--timeout", "60")
    return worker


def run_export(base: str, token: str, fmt: str) -> dict:
    """Asks for the order list, waits for the file; the job's own timings from its row."""
    headers = {"Authorization": f"Token {token}"}
    exporters = f"{base}/api/v1/organizers/demo/events/democon/exporters"
    with httpx.Client(timeout=120) as client:
        asked = time.perf_counter()
        started = client.post(f"{exporters}/orderlist/run/", json={"_format": fmt}, headers=headers)
        started.raise_for_status()
        url = started.json()["download"]
        while True:
            got = client.get(url, headers=headers)
            if got.status_code != 409:
                break
            time.sleep(0.05)
        ready = time.perf_counter() - asked
        got.raise_for_status()
        job_uuid = url.rstrip("/").split("/")[-2]
    return {
        "url": url,
        "uuid": job_uuid,
        "ready_seconds": round(ready, 2),
        "bytes": len(got.content),
    }


async def job_timing(url: str, job_uuid: str) -> float:
    import asyncpg

    conn = await asyncpg.connect(dsn(url))
    try:
        row = await conn.fetchrow("SELECT started, finished FROM jobs WHERE uuid = $1", job_uuid)
    finally:
        await conn.close()
    return round((row["finished"] - row["started"]).total_seconds(), 2)


def measure(env: dict[str, str], url: str, base: str, token: str, fmt: str) -> dict:
    worker = start_worker(env)
    try:
        idle = memory_mb(worker.pid)
        result = run_export(base, token, fmt)
        peak = memory_mb(worker.pid, "VmHWM")
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    seconds = asyncio.run(job_timing(url, result["uuid"]))
    return {
        "seconds": seconds,
        "ready_seconds": result["ready_seconds"],
        "bytes": result["bytes"],
        "worker_idle_rss_mb": idle,
        "worker_peak_rss_mb": peak,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--positions", type=int, default=100_000)
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args()

    url = fresh_pg_database("admit_bench_export")
    data_dir = tempfile.mkdtemp(prefix="admit-bench-export-")
    queue = f"admit-bench-export-{uuid.uuid4().hex[:8]}"
    env = {
        "ADMIT_DATABASE_URL": url,
        "ADMIT_DATA_DIR": data_dir,
        "ADMIT_REDIS_URL": REDIS_URL,
        "ADMIT_JOB_QUEUE": queue,
    }
    admit(env, "migrate")
    token = demo_token(env)["token"]
    built = time.perf_counter()
    counts = asyncio.run(populate(url, "demo", "democon", args.positions))
    build_seconds = round(time.perf_counter() - built, 1)
    report: dict = {"benchmark": "export", **counts, "build_seconds": build_seconds}
    try:
        with server(env, workers=2) as base:
            report["xlsx"] = measure(env, url, base, token, "xlsx")
            print(f"xlsx: {report['xlsx']}", file=sys.stderr)
            report["csv"] = measure(env, url, base, token, "positions:default")
            print(f"csv: {report['csv']}", file=sys.stderr)
            detail = f"{base}/api/v1/organizers/demo/events/democon/"
            wrk(detail, token, connections=args.connections, seconds=3)  # warm-up
            seconds = max(3, round(report["xlsx"]["seconds"]))
            quiet = wrk(detail, token, connections=args.connections, seconds=seconds)
            worker = start_worker(env)
            try:
                busy: dict = {}
                load = threading.Thread(
                    target=lambda: busy.update(
                        wrk(detail, token, connections=args.connections, seconds=seconds)
                    )
                )
                load.start()
                time.sleep(0.5)
                during = run_export(base, token, "xlsx")
                load.join(timeout=seconds + 60)
            finally:
                worker.terminate()
                worker.wait(timeout=30)
            report["detail_get"] = {
                "connections": args.connections,
                "p99_idle": quiet["p99"],
                "p99_during_export": busy["p99"],
                "rps_idle": quiet["requests_per_second"],
                "rps_during_export": busy["requests_per_second"],
                "non_2xx": busy["non_2xx"],
                "xlsx_seconds_under_load": asyncio.run(job_timing(url, during["uuid"])),
            }
    finally:
        import redis

        redis.Redis.from_url(REDIS_URL).delete(queue)
    report["target_met"] = (
        report["xlsx"]["seconds"] < 10
        and report["csv"]["seconds"] < 10
        and max(report["xlsx"]["worker_peak_rss_mb"], report["csv"]["worker_peak_rss_mb"]) < 200
    )
    print(json.dumps(report))


if __name__ == "__main__":
    main()
