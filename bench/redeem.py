"""Doors open: C concurrent scanners redeeming distinct tickets of one event.

PostgreSQL, 2 server workers, an event with 100,000 paid tickets (``--tickets``) and one
check-in list; wrk POSTs ``checkinrpc/redeem/`` as fast as answers come, every request a
ticket not scanned before (each wrk thread walks its own slice of the secrets). Reports
successful redeems/s, p50/p99 latency, and checks afterwards that the database holds exactly
one successful check-in per successful answer. A run that scans more tickets than there are
(a thread starts its slice again) answers ``already_redeemed`` and is reported as not met:
raise ``--tickets`` or lower ``--seconds``.

Target (issue: check-in): >= 1,500 redeems/s with p99 < 50 ms on the 2-core machine.
With ``--webhook``, a webhook for ``service.event.checkin`` points at a local receiver for the
whole run (delivered by the server processes, the embedded default; with ``--redis`` by an
``admit worker`` and ``admit scheduler`` beside them), and the report adds how many check-ins
were delivered and how long the last ones took to arrive.
With ``--idempotency`` the measurement runs in ``--rounds`` rounds (default 3), each a plain
phase then one with an ``X-Idempotency-Key`` on every request, all on tickets not scanned
before (by default enough tickets for 10,000 scans a second in every phase), so that a
machine whose speed drifts during the run weighs on both alike; the report adds the keyed
figures over all rounds (``keyed_*``), their ratio to the plain ones (target: >= 0.85), each
round's ratio, and checks that every keyed check-in has its stored answer and every answer
kept as a recipe its check-in (``keyed_answers_without_entry``: 0).
Run: .venv/bin/python bench/redeem.py [--connections 32] [--seconds 10] [--tickets N]
     [--webhook [--redis]] [--idempotency [--rounds 3]]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import insert, select, text
from sqlalchemy.ext.asyncio import create_async_engine

from admit.models import Event, Item, Order, OrderPosition, Organizer
from bench.common import (
    ROOT,
    admit,
    demo_token,
    fresh_pg_database,
    merged,
    server,
    worst_ms,
    wrk,
)  # fmt: skip
from bench.receiver import Receiver, create_webhook

REDIS_URL = os.environ.get("ADMIT_BENCH_REDIS", "redis://127.0.0.1:6379/0")

# Each wrk thread takes every n-th secret from its own offset, so no ticket is scanned twice.
LUA = """
local secrets = {}
for line in io.lines("%(secrets)s") do secrets[#secrets + 1] = line end
local counter = 1
local threads = {}

function setup(thread)
  thread:set("offset", #threads)
  table.insert(threads, thread)
end

function init(args)
  stride = %(threads)d
  position = offset + 1
  headers = {}
  for key, value in pairs(wrk.headers) do headers[key] = value end
  headers["Content-Type"] = "application/json"
end

request = function()
  local secret = secrets[position]
  position = position + stride
  if secret == nil then
    position = offset + 1
    secret = secrets[position]
  end
  local body = '{"secret": "' .. secret .. '", "lists": [%(list)d], "nonce": "' .. secret .. '"}'
  %(key)s
  return wrk.format("POST", "%(path)s", headers, body)
end
"""


async def load_tickets(url: str, tickets: int, per_order: int = 4) -> list[str]:
    """``tickets`` paid positions in orders of ``per_order`` on the demo event's ticket."""
    engine = create_async_engine(url)
    now = dt.datetime.now(dt.UTC)
    secret_list: list[str] = []
    async with engine.begin() as conn:
        org_id = await conn.scalar(select(Organizer.id).where(Organizer.slug == "demo"))
        event_id = await conn.scalar(
            select(Event.id).where(Event.organizer_id == org_id, Event.slug == "democon")
        )
        item_id = await conn.scalar(
            insert(Item)
            .values(event_id=event_id, name={"en": "Bench ticket"}, admission=True)
            .returning(Item.id)
        )
        n_orders = -(-tickets // per_order)
        for start in range(0, n_orders, 5000):
            chunk = range(start, min(start + 5000, n_orders))
            orders = [
                {
                    "event_id": event_id,
                    "code": f"B{i:07d}",
                    "status": "p",
                    "secret": secrets.token_hex(16),
                    "email": "fan@example.org",
                    "expires": now + dt.timedelta(days=30),
                    "total": Decimal("10.00") * per_order,
                    "datetime": now,
                    "last_modified": now,
                }
                for i in chunk
            ]
            ids = (await conn.execute(insert(Order).returning(Order.id), orders)).scalars().all()
            rows = []
            for order_id in ids:
                for n in range(1, per_order + 1):
                    if len(secret_list) >= tickets:
                        break
                    secret = secrets.token_hex(16)
                    secret_list.append(secret)
                    rows.append(
                        {
                            "order_id": order_id,
                            "event_id": event_id,
                            "positionid": n,
                            "item_id": item_id,
                            "price": Decimal("10.00"),
                            "secret": secret,
                            "web_secret": secrets.token_hex(16),
                            "pseudonymization_id": secrets.token_hex(5).upper(),
                            "attendee_name_parts": {"_legacy": f"Guest {len(secret_list)}"},
                            "attendee_name_cached": f"Guest {len(secret_list)}",
                        }
                    )
            await conn.execute(insert(OrderPosition), rows)
    # As a running system would have them: vacuumed and analysed (else autovacuum works
    # through the fresh rows during the measurement).
    async with engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("VACUUM ANALYZE"))
        # Flush the load's writes now rather than in a checkpoint during the measurement.
        await conn.execute(text("CHECKPOINT"))
    await engine.dispose()
    return secret_list


async def analyze(url: str) -> None:
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
    async with engine.connect() as conn:
        await conn.execute(text("ANALYZE"))
    await engine.dispose()


async def count_checkins(url: str) -> tuple[int, int]:
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        ok = await conn.scalar(text("SELECT count(*) FROM checkins WHERE successful"))
        failed = await conn.scalar(text("SELECT count(*) FROM checkins WHERE NOT successful"))
    await engine.dispose()
    return int(ok), int(failed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--tickets",
        type=int,
        default=None,
        help="default 100,000; with --idempotency enough for 10,000 scans/s in every phase",
    )
    parser.add_argument("--webhook", action="store_true", help="deliver every check-in")
    parser.add_argument(
        "--idempotency", action="store_true", help="measure with a key on every request too"
    )
    parser.add_argument("--rounds", type=int, default=3, help="plain/keyed rounds (--idempotency)")
    parser.add_argument(
        "--redis",
        action="store_true",
        help="with --webhook: deliver from an admit worker and scheduler (Redis), not the server",
    )
    args = parser.parse_args()
    phase_seconds = max(3, args.seconds // args.rounds)  # each phase of --idempotency
    if args.tickets is None:
        # A phase that runs out of its share of tickets scans them again (second entries,
        # a slower path, keyed ones slower still): the run would not be met.
        scans = 2 * args.rounds * phase_seconds * 10_000
        args.tickets = 15_000 + scans if args.idempotency else 100_000
    threads = 2

    url = fresh_pg_database("admit_bench_redeem")
    receiver = Receiver()
    with tempfile.TemporaryDirectory() as data_dir, receiver:
        env = {
            "ADMIT_DATABASE_URL": url,
            "ADMIT_DATA_DIR": data_dir,
            "ADMIT_WEBHOOK_ALLOW_PRIVATE": "true",
        }
        if args.redis:
            env["ADMIT_REDIS_URL"] = REDIS_URL
            env["ADMIT_JOB_QUEUE"] = f"admit-bench-{secrets.token_hex(4)}"
        admit(env, "migrate")
        token = demo_token(env)["token"]
        all_secrets = asyncio.run(load_tickets(url, args.tickets))
        # Warm-up at the measured concurrency, so each worker's pools have grown to what the
        # measurement needs (new connections compile their statements and functions).
        warmup, measured = all_secrets[:15000], all_secrets[15000:]
        phases = [("warmup", warmup, 2, ""), ("measured", measured, args.seconds, "")]
        if args.idempotency:
            share = len(measured) // (2 * args.rounds)
            seconds = phase_seconds
            key = f'headers["X-Idempotency-Key"] = "{secrets.token_hex(6)}-" .. secret'
            chunks = [measured[i * share : (i + 1) * share] for i in range(2 * args.rounds)]
            phases[1:] = [
                phase
                for n in range(args.rounds)
                for phase in (
                    ("measured", chunks[2 * n], seconds, ""),
                    ("keyed", chunks[2 * n + 1], seconds, key),
                )
            ]
        with server(env, workers=args.workers) as base, background(env, args.redis):
            event = f"{base}/api/v1/organizers/demo/events/democon"
            headers = {"Authorization": f"Token {token}"}
            created = httpx.post(
                f"{event}/checkinlists/", json={"name": "Main entrance"}, headers=headers
            )
            created.raise_for_status()
            list_id = created.json()["id"]
            if args.webhook:
                create_webhook(base, token, receiver.url, ["service.event.checkin"])
            path = "/api/v1/organizers/demo/checkinrpc/redeem/"
            results: dict[str, list[dict]] = {}
            connections = args.connections
            for name, chunk, seconds, key in phases:
                if name == "measured" and name not in results:
                    # The warm-up wrote the first check-ins: update the planner's statistics
                    # as autovacuum's analyze does on a normal server once a table has grown
                    # (this machine's PostgreSQL runs with autovacuum off). Without it, a
                    # plan made while ``checkins`` was empty (statistics from the load's
                    # VACUUM ANALYZE) stays cached on some connections: a sequential scan of
                    # a table growing by thousands of rows a second.
                    asyncio.run(analyze(url))
                secrets_file = Path(data_dir) / f"{name}.txt"
                secrets_file.write_text("\n".join(chunk) + "\n")
                script = Path(data_dir) / f"{name}.lua"
                script.write_text(
                    LUA
                    % {
                        "secrets": secrets_file,
                        "threads": threads,
                        "list": list_id,
                        "path": path,
                        "key": key,
                    }
                )
                if name == "keyed" and name not in results:
                    stored_before = asyncio.run(count_stored(url))[0]
                report = wrk(
                    f"{base}{path}",
                    token,
                    connections=connections,
                    seconds=seconds,
                    threads=threads,
                    script=str(script),
                )
                results.setdefault(name, []).append(report)
            delivery_wait = 0.0
            if args.webhook:
                waited = time.monotonic()
                while receiver.count() < ok_so_far(url) and time.monotonic() - waited < 120:
                    time.sleep(0.2)
                delivery_wait = time.monotonic() - waited
        ok, failed = asyncio.run(count_checkins(url))
        stored_after, orphans = asyncio.run(count_stored(url)) if args.idempotency else (0, 0)
    result = merged(results["measured"], phases[1][2])
    if args.webhook:
        result.update(
            webhook_deliveries=receiver.count(),
            webhook_catch_up_seconds=round(delivery_wait, 1),
        )
    answered = results["warmup"][0]["requests"] + result["requests"]
    keyed_ok = True
    if args.idempotency:
        keyed = merged(results["keyed"], phases[1][2])
        answered += keyed["requests"]
        ratio = keyed["requests_per_second"] / max(1.0, result["requests_per_second"])
        stored = stored_after - stored_before
        result.update(
            keyed_requests_per_second=keyed["requests_per_second"],
            keyed_p50=keyed["p50"],
            keyed_p99=keyed["p99"],
            keyed_non_2xx=keyed["non_2xx"],
            keyed_answers_stored=stored,
            keyed_answers_without_entry=orphans,
            keyed_ratio=round(ratio, 3),
            round_ratios=[
                round(k["requests_per_second"] / max(1.0, p["requests_per_second"]), 3)
                for p, k in zip(results["measured"], results["keyed"], strict=True)
            ],
        )
        # wrk stops mid-request: a check-in and its stored answer commit together, so the
        # stored answers may exceed the answers wrk saw, never fall short of them.
        keyed_ok = keyed["non_2xx"] == 0 and keyed["requests"] <= stored and orphans == 0
    result.update(
        benchmark="redeem",
        workers=args.workers,
        connections=args.connections,
        tickets=args.tickets,
        successful_checkins=ok,
        failed_checkins=failed,
        target_rps=1500,
        target_p99_ms=50,
        met=result["requests_per_second"] >= 1500
        and result["non_2xx"] == 0
        and (worst_ms(result["p99"]) or float("inf")) < 50
        # wrk stops mid-request on some connections: those may have checked in unanswered
        and answered <= ok <= answered + len(phases) * args.connections
        and failed == 0
        and keyed_ok,
    )
    print(json.dumps(result))


@contextlib.contextmanager
def background(env: dict[str, str], wanted: bool) -> Iterator[None]:
    """An ``admit worker`` and an ``admit scheduler`` beside the server (the at-scale mode)."""
    if not wanted:
        yield
        return
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "admit", *command],
            env={**os.environ, **env},
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for command in (["worker", "--concurrency", "16"], ["scheduler"])
    ]
    try:
        yield
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)
        import redis

        redis.Redis.from_url(REDIS_URL).delete(env["ADMIT_JOB_QUEUE"])


async def count_stored(url: str) -> tuple[int, int]:
    """Stored 201 answers, and those among them kept as a recipe whose entry is missing
    (a first entry's key and its entry commit together: must be none)."""
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                text(
                    "SELECT count(*), count(*) FILTER (WHERE k.recipe IS NOT NULL AND NOT EXISTS "
                    "(SELECT 1 FROM checkins c WHERE c.successful "
                    "AND c.id = (k.recipe -> 'scan' ->> 'id')::int)) "
                    "FROM idempotency_keys k WHERE k.status = 201"
                )
            )
        ).one()
    await engine.dispose()
    return int(row[0]), int(row[1])


def ok_so_far(url: str) -> int:
    return asyncio.run(count_checkins(url))[0]


if __name__ == "__main__":
    main()
