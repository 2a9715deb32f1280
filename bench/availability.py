"""Availability of a quota with 100,000 sold positions (plus carts) on PostgreSQL.

The positions are written straight into the database (orders of 10 positions, half paid,
half pending) and the sales ledger rebuilt from them, as ``admit recount-sales --fix`` would.
Then sequential GETs of ``E/quotas/{id}/availability/`` against a server with 1 worker report
the time per request (end to end over loopback) and the SQL time of the count alone.
Target (issue: sales core): under 5 ms.
Run: .venv/bin/python bench/availability.py [--positions 100000] [--requests 500]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import select, text

from bench.common import admit, demo_token, fresh_pg_database, server
from bench.rush import product_with_quota

FILL = """
INSERT INTO orders (event_id, code, status, testmode, secret, locale, datetime, expires, total,
                    sales_channel, comment, checkin_attention, require_approval,
                    valid_if_pending, meta_info, last_modified)
SELECT e.id, 'B' || lpad(g::text, 8, '0'), CASE WHEN g % 2 = 0 THEN 'p' ELSE 'n' END, false,
       md5(g::text), 'en', now(), now() + interval '7 days', 100, 'web', '', false, false, false,
       '{}', now()
FROM generate_series(1, :orders) g, events e WHERE e.slug = 'democon';
INSERT INTO order_positions (order_id, event_id, positionid, item_id, price, tax_rate,
                             tax_value, attendee_name_parts, secret, web_secret,
                             pseudonymization_id, canceled, is_bundled)
SELECT o.id, o.event_id, p, :item, 10, 0, 0, '{}', md5(o.id::text || '-' || p),
       md5(p::text || o.code), substr(md5(o.code || p), 1, 10), false, false
FROM orders o, generate_series(1, 10) p WHERE o.code LIKE 'B%';
ANALYZE;
"""


async def fill(url: str, item_id: int, positions: int) -> None:
    from admit.db import create_database
    from admit.quotas import ledger

    db = create_database(url)
    async with db.engine.begin() as conn:
        for statement in FILL.split(";"):
            if statement.strip():
                await conn.execute(text(statement), {"orders": positions // 10, "item": item_id})
    async with db.sessionmaker() as session:
        await ledger.rebuild(session)
        await session.commit()
    await db.dispose()


async def sql_time(url: str, quota_id: int, runs: int) -> float:
    from admit.db import create_database
    from admit.models import Quota
    from admit.quotas.availability import count

    db = create_database(url)
    async with db.sessionmaker() as session:
        quota = (await session.execute(select(Quota).where(Quota.id == quota_id))).scalar_one()
        timings = []
        for _ in range(runs):
            start = time.perf_counter()
            result = await count(session, [quota])
            timings.append(time.perf_counter() - start)
        assert result[quota_id].paid_orders + result[quota_id].pending_orders >= 100_000
    await db.dispose()
    return statistics.median(timings) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--positions", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()

    url = fresh_pg_database("admit_bench_availability")
    with tempfile.TemporaryDirectory() as data_dir:
        env = {"ADMIT_DATABASE_URL": url, "ADMIT_DATA_DIR": data_dir}
        admit(env, "migrate")
        token = demo_token(env)["token"]
        with server(env, workers=1) as base:
            item_id, quota_id = product_with_quota(base, token, 10**6, "Big")
            asyncio.run(fill(url, item_id, args.positions))
            target = f"{base}/api/v1/organizers/demo/events/democon/quotas/{quota_id}/availability/"
            headers = {"Authorization": f"Token {token}"}
            timings = []
            with httpx.Client(headers=headers) as client:
                body = client.get(target).json()
                for _ in range(args.requests):
                    start = time.perf_counter()
                    response = client.get(target)
                    timings.append(time.perf_counter() - start)
                    assert response.status_code == 200
        count_ms = asyncio.run(sql_time(url, quota_id, 200))
    timings.sort()
    p50 = timings[len(timings) // 2] * 1000
    p99 = timings[int(len(timings) * 0.99)] * 1000
    print(
        json.dumps(
            {
                "benchmark": "availability_100k",
                "sold_positions": body["paid_orders"] + body["pending_orders"],
                "available_number": body["available_number"],
                "request_p50_ms": round(p50, 2),
                "request_p99_ms": round(p99, 2),
                "count_median_ms": round(count_ms, 3),
                "target_ms": 5,
                "met": p50 < 5,
            }
        )
    )


if __name__ == "__main__":
    main()
