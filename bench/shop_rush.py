"""An on-sale through the headless checkout: B buyers, each a session that puts one ticket
into a cart (``POST …/carts/``) and checks it out by bank transfer (``POST …/checkout/``),
C of them at a time, against a quota smaller than B; then the shop's front page under wrk.

Checks: exactly the quota sold (orders written = quota, 0 oversell), every refused buyer got
a 400 that says why, the sales ledger agrees with the rows. Reports checkouts/s, carts/s, the
checkouts' p50/p99 and the front page's req/s as one JSON line.

The issue's target (5,000 quota, 2,000 buyers, >= 500 checkouts/s, front page >= 2,000 req/s)
is measured with ``--quota 5000 --buyers 6000``; the default is a short run. PostgreSQL
(``ADMIT_BENCH_PG``), 2 server workers, the per-address shop limit off. Also reports the
CPU the rush cost the server's workers (``worker_cpu_ms_per_checkout``: all its requests per
completed checkout), this client and the database's backends, which on a shared machine say
more than the rates. Old code: ``PYTHONPATH=<absolute path of its src>`` (the server runs
with it).
Run: .venv/bin/python bench/shop_rush.py [--quota 500] [--buyers 800] [--connections 64]
[--front-only: only the front page, no buyers before it]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from bench.common import (
    admit,
    cpu_by_process,
    cpu_used,
    demo_token,
    fresh_pg_database,
    postgres_backends,
    serving,
    wrk,
)
from bench.rawhttp import Connection


async def _set_quota(url: str, size: int) -> None:
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.execute(
            text("UPDATE quotas SET size = :size WHERE name = 'Conference seats'"), {"size": size}
        )
    await engine.dispose()


async def _sold(url: str, item: int) -> tuple[int, int]:
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        positions = await conn.scalar(
            text(
                "SELECT count(*) FROM order_positions p JOIN orders o ON o.id = p.order_id "
                "WHERE p.item_id = :item AND o.status IN ('n', 'p')"
            ),
            {"item": item},
        )
        ledger = await conn.scalar(
            text("SELECT coalesce(sum(pending + paid), 0) FROM sales_counts WHERE item_id = :i"),
            {"i": item},
        )
    await engine.dispose()
    return int(positions or 0), int(ledger or 0)


async def _buyers(base: str, path: str, item: int, buyers: int, connections: int) -> dict:
    """``connections`` kept connections, each a buyer at a time: a cart, then its checkout
    (``bench/rawhttp.py``: the client must cost far less than the server it measures)."""
    statuses: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    latencies: list[float] = []
    waiting = iter(range(buyers))

    async def one(connection: Connection, n: int) -> None:
        r = await connection.request("POST", f"{path}/carts/", {"products": [{"item": item}]})
        statuses[f"cart {r.status}"] += 1
        if r.status != 201:
            reasons[r.body.decode()[:120]] += 1
            return
        start = time.perf_counter()
        body = {
            "cart_id": r.json()["cart_id"],
            "email": f"buyer{n}@example.org",
            "payment_provider": "banktransfer",
        }
        r = await connection.request("POST", f"{path}/checkout/", body)
        latencies.append((time.perf_counter() - start) * 1000)
        statuses[f"checkout {r.status}"] += 1
        if r.status != 201:
            reasons[r.body.decode()[:120]] += 1

    async def serve_buyers() -> None:
        connection = Connection(base)
        try:
            for n in waiting:
                await one(connection, n)
        finally:
            await connection.close()

    began = time.perf_counter()
    await asyncio.gather(*(serve_buyers() for _ in range(connections)))
    seconds = time.perf_counter() - began
    latencies.sort()
    return {
        "seconds": round(seconds, 2),
        "statuses": dict(statuses),
        "refusals": dict(reasons.most_common(5)),
        "checkout_p50_ms": round(statistics.median(latencies), 1) if latencies else None,
        "checkout_p99_ms": round(latencies[int(len(latencies) * 0.99) - 1], 1)
        if latencies
        else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quota", type=int, default=500)
    parser.add_argument("--buyers", type=int, default=800)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--front-seconds", type=int, default=5)
    parser.add_argument(
        "--front-only", action="store_true", help="skip the buyers: only the front page's wrk run"
    )
    args = parser.parse_args()

    url = fresh_pg_database("admit_bench_shop")
    with tempfile.TemporaryDirectory() as data_dir:
        env = {"ADMIT_DATABASE_URL": url, "ADMIT_DATA_DIR": data_dir, "ADMIT_SHOP_RATE_LIMIT": ""}
        admit(env, "migrate")
        demo = demo_token(env)
        asyncio.run(_set_quota(url, args.quota))
        path = f"/api/v1/public/organizers/{demo['organizer']}/events/{demo['event']}"
        with serving(env, workers=args.workers) as served:
            base = served.base
            # CPU seconds the rush cost the server's workers, the database and this client
            # (on a shared machine the rate says little; the cost per sale does).
            workers = served.worker_pids()
            database = url.rsplit("/", 1)[1]
            before = cpu_by_process(workers), time.process_time()
            rush = (
                {"seconds": 1.0, "statuses": {}}
                if args.front_only
                else asyncio.run(
                    _buyers(base, path, demo["ticket_item"], args.buyers, args.connections)
                )
            )
            rush["worker_cpu_s"] = round(cpu_used(before[0], cpu_by_process(workers)), 2)
            rush["client_cpu_s"] = round(time.process_time() - before[1], 2)
            backends = postgres_backends(database)
            rush["db_cpu_s_open_backends"] = round(sum(cpu_by_process(backends).values()), 2)
            front = wrk(
                f"{base}/{demo['organizer']}/{demo['event']}/",
                demo["token"],
                connections=16,
                seconds=args.front_seconds,
            )
        sold, ledger = asyncio.run(_sold(url, demo["ticket_item"]))
    checkouts = rush["statuses"].get("checkout 201", 0)
    report = {
        "benchmark": "shop_rush",
        "quota": args.quota,
        "buyers": args.buyers,
        "connections": args.connections,
        "sold": sold,
        "oversell": max(0, sold - args.quota),
        # sold out exactly, unless a buyer's checkout was refused 409 (busy: retry) while
        # their cart still held the unit; never more than the quota, the ledger as the rows
        "exact": sold == args.quota == checkouts and ledger == sold,
        "ledger_agrees": ledger == sold,
        "checkouts_per_s": round(checkouts / rush["seconds"], 1),
        "buyers_per_s": round(args.buyers / rush["seconds"], 1),
        # every request of the rush (carts, refusals, checkouts) per completed checkout
        "worker_cpu_ms_per_checkout": round(1000 * rush["worker_cpu_s"] / max(checkouts, 1), 2),
        **rush,
        "front_page_req_s": front["requests_per_second"],
        "front_page_p99": front["p99"],
        "front_page_non_2xx": front["non_2xx"],
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
