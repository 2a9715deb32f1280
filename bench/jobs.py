"""Background jobs on PostgreSQL and Redis: the enqueue cost a request pays, and the drain rate.

1. Enqueue cost: ``--requests`` write transactions, each as a request would run it, timed with
   and without one ``enqueue()`` (the job row in the transaction, the id handed to Redis after
   the commit), interleaved so both see the same machine. Reported: the p50/p99 of the whole
   transaction both ways and of the enqueue's own share (insert + hand-off).
2. Drain: ``--jobs`` no-op jobs enqueued at once (rows in one transaction, ids to Redis), run by
   2 ``admit worker`` processes (``--concurrency`` each); jobs/s from the first hand-off until
   the last job finished.
Targets (issue: background work): enqueue < 1 ms at p50; report jobs/s.
Run: .venv/bin/python bench/jobs.py [--jobs 10000] [--requests 2000] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import func, insert, select, text, update

from bench.common import ROOT, admit, fresh_pg_database

REDIS_URL = os.environ.get("ADMIT_BENCH_REDIS", "redis://127.0.0.1:6379/0")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def enqueue_cost(url: str, settings, requests: int) -> dict:
    from admit.db import create_database
    from admit.jobs.queue import enqueue
    from admit.jobs.runtime import Background
    from admit.kit.http.transaction import commit, run_after_commit
    from admit.models import Organizer

    db = create_database(url, pool_size=4)
    parts = Background(settings, db, broker_url=REDIS_URL)
    await parts.engine.start()
    async with db.sessionmaker() as session:
        session.add(Organizer(slug="bench", name="Bench"))
        await session.commit()
    plain: list[float] = []
    with_job: list[float] = []
    share: list[float] = []
    touch = update(Organizer).where(Organizer.slug == "bench").values(name="Bench")
    for i in range(requests * 2):
        job = i % 2 == 1
        started = time.perf_counter()
        async with db.sessionmaker() as session:
            await session.execute(touch)  # the request's own write
            if job:
                before = time.perf_counter()
                await enqueue(session, "noop")
                enqueue_time = time.perf_counter() - before
            await commit(session)
            before = time.perf_counter()
            await run_after_commit(session)  # the hand-off to Redis
            if job:
                share.append(enqueue_time + time.perf_counter() - before)
        (with_job if job else plain).append(time.perf_counter() - started)
    await parts.engine.stop()
    async with db.engine.begin() as conn:
        await conn.execute(text("DELETE FROM jobs"))
    await db.dispose()
    ms = 1000
    return {
        "transaction_p50_ms": round(statistics.median(plain) * ms, 3),
        "transaction_with_enqueue_p50_ms": round(statistics.median(with_job) * ms, 3),
        "enqueue_share_p50_ms": round(statistics.median(share) * ms, 3),
        "enqueue_share_p99_ms": round(_pct(share, 0.99) * ms, 3),
        "added_p50_ms": round((statistics.median(with_job) - statistics.median(plain)) * ms, 3),
    }


async def drain(url: str, settings, jobs: int) -> dict:
    from admit.db import create_database
    from admit.jobs.queue import new_job_values
    from admit.jobs.runtime import Background
    from admit.models import Job

    db = create_database(url, pool_size=4)
    parts = Background(settings, db, broker_url=REDIS_URL)
    await parts.engine.start()
    rows = [new_job_values("noop") for _ in range(jobs)]
    started = time.perf_counter()
    async with db.sessionmaker() as session:
        ids = list((await session.execute(insert(Job).returning(Job.id), rows)).scalars())
        await session.commit()
    await parts.engine.dispatch(ids)
    handed = time.perf_counter() - started
    while True:
        async with db.sessionmaker() as session:
            left = await session.scalar(
                select(func.count()).select_from(Job).where(Job.status != "finished")
            )
        if not left:
            break
        await asyncio.sleep(0.05)
    elapsed = time.perf_counter() - started
    async with db.sessionmaker() as session:
        runs = await session.scalar(select(func.sum(Job.attempts)))
        workers = await session.scalar(select(func.count(func.distinct(Job.worker))))
    await parts.engine.stop()
    await db.dispose()
    return {
        "jobs": jobs,
        "seconds": round(elapsed, 2),
        "jobs_per_s": round(jobs / elapsed),
        "handoff_seconds": round(handed, 2),
        "runs": runs,
        "workers": workers,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=2_000)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    from admit.config import Settings

    url = fresh_pg_database("admit_bench_jobs")
    data_dir = tempfile.mkdtemp(prefix="admit-bench-jobs-")
    queue = f"admit-bench-{uuid.uuid4().hex[:8]}"
    env = {
        "ADMIT_DATABASE_URL": url,
        "ADMIT_DATA_DIR": data_dir,
        "ADMIT_REDIS_URL": REDIS_URL,
        "ADMIT_JOB_QUEUE": queue,
    }
    admit(env, "migrate")
    settings = Settings(
        database_url=url, data_dir=Path(data_dir), redis_url=REDIS_URL, job_queue=queue
    )
    cost = asyncio.run(enqueue_cost(url, settings, args.requests))
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "admit", "worker", "--concurrency", str(args.concurrency)],
            env={**os.environ, **env},
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]
    try:
        time.sleep(3)  # both workers connected
        rate = asyncio.run(drain(url, settings, args.jobs))
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=30)
        import redis

        redis.Redis.from_url(REDIS_URL).delete(queue)
    met = cost["enqueue_share_p50_ms"] < 1.0
    print(json.dumps({"benchmark": "jobs", **cost, **rate, "target_met": met}))


if __name__ == "__main__":
    main()
