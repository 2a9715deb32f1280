"""Webhooks under an order rush: deliveries/s, delivery lag, and what delivery costs the rush.

PostgreSQL, Redis, 2 server workers, 1 ``admit worker``, 1 ``admit scheduler``, a local
receiver in this process (answers 200 at once). Phase 1: wrk creates orders for ``--seconds``
without any webhook. Phase 2: a webhook for the order types is created and the same rush
runs again; every notification it records is delivered to the receiver. Reported: orders/s
and p50/p99 of both phases, notifications recorded, deliveries, deliveries/s (first order of
phase 2 to the last delivery), and the lag from a notification's commit to its arrival
(p50/p99).

Each order is created paid and records three notifications (placed, payment.confirmed, paid).
Target (issue: notifications and webhooks): report the figures for 10,000 notifications,
about ``--seconds 50`` at today's order rate.
Run: .venv/bin/python bench/webhooks.py [--seconds 50] [--connections 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from bench.common import ROOT, admit, demo_token, fresh_pg_database, server, wrk
from bench.receiver import Receiver, create_webhook
from bench.rush import POST_SCRIPT, product_with_quota

REDIS_URL = os.environ.get("ADMIT_BENCH_REDIS", "redis://127.0.0.1:6379/0")
ACTIONS = [
    "service.event.order.placed",
    "service.event.order.payment.confirmed",
    "service.event.order.paid",
]
# Paid at once, as a box office sells: three notifications an order.
ORDER = json.dumps(
    {
        "email": "fan@example.org",
        "status": "p",
        "payment_provider": "manual",
        "positions": [{"item": 0}],
        "send_email": False,
    }
)


async def notifications(url: str, since_id: int) -> dict[int, float]:
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT id, extract(epoch FROM created) FROM notifications "
                "WHERE id > :since AND action = ANY(:actions)"
            ),
            {"since": since_id, "actions": ACTIONS},
        )
        result = {int(i): float(t) for i, t in rows}
    await engine.dispose()
    return result


async def last_notification(url: str) -> int:
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        value = await conn.scalar(text("SELECT coalesce(max(id), 0) FROM notifications"))
    await engine.dispose()
    return int(value)


def rush(base: str, token: str, item: int, connections: int, seconds: int) -> dict:
    """wrk creating paid orders of one position for ``seconds``."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(POST_SCRIPT % ORDER.replace('"item": 0', f'"item": {item}'))
    target = f"{base}/api/v1/organizers/demo/events/democon/orders/"
    result = wrk(target, token, connections=connections, seconds=seconds, script=script.name)
    result.pop("raw")
    Path(script.name).unlink()
    successes = result["requests"] - result["non_2xx"]
    result["successes_per_second"] = round(successes / seconds, 1)
    return result


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=50)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--wait", type=int, default=180, help="seconds to wait for deliveries")
    args = parser.parse_args()

    url = fresh_pg_database("admit_bench_webhooks")
    queue = f"admit-bench-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as data_dir, Receiver() as receiver:
        env = {
            "ADMIT_DATABASE_URL": url,
            "ADMIT_DATA_DIR": data_dir,
            "ADMIT_REDIS_URL": REDIS_URL,
            "ADMIT_JOB_QUEUE": queue,
            "ADMIT_WEBHOOK_ALLOW_PRIVATE": "true",
        }
        admit(env, "migrate")
        token = demo_token(env)["token"]
        helpers = [
            subprocess.Popen(
                [sys.executable, "-m", "admit", command, *extra],
                env={**os.environ, **env},
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for command, extra in (("worker", ["--concurrency", "32"]), ("scheduler", []))
        ]
        try:
            with server(env, workers=args.workers) as base:
                item, _ = product_with_quota(base, token, 10**7, "Rush")
                rush(base, token, item, args.connections, 3)  # warm-up
                plain = rush(base, token, item, args.connections, args.seconds)
                create_webhook(base, token, receiver.url, ACTIONS)
                since = asyncio.run(last_notification(url))
                started = time.time()
                hooked = rush(base, token, item, args.connections, args.seconds)
                recorded = asyncio.run(notifications(url, since))
                deadline = time.time() + args.wait
                while time.time() < deadline:
                    got = {p.get("notification_id") for _, p in receiver.deliveries}
                    if set(recorded) <= got:
                        break
                    time.sleep(0.2)
        finally:
            for helper in helpers:
                helper.terminate()
            for helper in helpers:
                helper.wait(timeout=30)
            import redis

            redis.Redis.from_url(REDIS_URL).delete(queue)
    arrivals = {}
    for arrived, payload in receiver.deliveries:
        arrivals.setdefault(payload.get("notification_id"), arrived)
    delivered = [i for i in recorded if i in arrivals]
    lags = [arrivals[i] - recorded[i] for i in delivered]
    last = max((arrivals[i] for i in delivered), default=started)
    print(
        json.dumps(
            {
                "benchmark": "webhooks",
                "orders_per_s_without_webhook": plain["successes_per_second"],
                "orders_p50_without_webhook": plain["p50"],
                "orders_p99_without_webhook": plain["p99"],
                "orders_per_s_with_webhook": hooked["successes_per_second"],
                "orders_p50_with_webhook": hooked["p50"],
                "orders_p99_with_webhook": hooked["p99"],
                "notifications": len(recorded),
                "delivered": len(delivered),
                "duplicates": len(receiver.deliveries) - len(arrivals),
                "deliveries_per_s": round(len(delivered) / max(last - started, 1e-9), 1),
                "lag_p50_s": round(_pct(lags, 0.5), 3),
                "lag_p99_s": round(_pct(lags, 0.99), 3),
                "met": len(delivered) == len(recorded) > 0,
            }
        )
    )


if __name__ == "__main__":
    main()
