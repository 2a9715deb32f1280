"""What the order stamp triggers cost the redeem lane's batch statement, in the database alone.

PostgreSQL, one event with ``--tickets`` paid tickets in orders of four (as ``redeem.py``
loads them), one check-in list. Two connections (as two server workers) run the lane's
first-entry batch statement (``checkin/fastpath.py``) back to back, ``--batch`` scans each,
the two streams taking alternate tickets (so both often stamp the same order at once), in
rounds that alternate the triggers on ``checkins`` enabled and disabled (``ALTER TABLE …
ENABLE/DISABLE TRIGGER``), each round on tickets not scanned before. Reports the statements'
mean time per scan with and without, the database backends' CPU time per scan (from
``/proc``: the server must run on this machine; less disturbed by a busy machine than times),
and their ratios; the machine's load average beside it.

Run: .venv/bin/python bench/stamp_triggers.py [--tickets 60000] [--batch 16] [--rounds 6]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import insert, select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from admit.checkin import fastpath
from admit.models import ORDER_STAMP, CheckinList, Event, Organizer
from bench.common import admit, cpu_by_process, cpu_used, demo_token, fresh_pg_database
from bench.redeem import analyze, load_tickets

_TRIGGERS = [name for name, table in ORDER_STAMP.triggers() if table == "checkins"]


async def _stream(
    conn: asyncpg.Connection, sql: str, ids: tuple[int, int], chunk: list[str], batch: int
) -> float:
    """Runs the chunk's scans in batches; returns the seconds spent in statements."""
    spent = 0.0
    for start in range(0, len(chunk), batch):
        part = chunk[start : start + batch]
        now = dt.datetime.now(dt.UTC)
        columns = [
            part,
            [None] * len(part),
            [now] * len(part),
            [now] * len(part),
            [None] * len(part),
            [None] * len(part),
            [None] * len(part),
            ["barcode"] * len(part),
            [False] * len(part),
        ]
        began = time.perf_counter()
        rows = await conn.fetch(sql, ids[0], ids[1], None, *columns)
        spent += time.perf_counter() - began
        assert sum(1 for row in rows if row[-1] is not None) == len(part), "a scan was refused"
    return spent


async def _round(
    conns: list[asyncpg.Connection],
    sql: str,
    ids: tuple[int, int],
    tickets: list[str],
    batch: int,
    enabled: bool,
    split_orders: bool,
) -> tuple[float, float]:
    """Seconds per scan for this round's tickets (the streams running at once) in statements,
    and the database backends' CPU seconds per scan."""
    action = "ENABLE" if enabled else "DISABLE"
    for name in _TRIGGERS:
        await conns[0].execute(f"ALTER TABLE checkins {action} TRIGGER {name}")
    if split_orders:  # four tickets an order: each stream takes whole orders
        streams = [
            [t for i, t in enumerate(tickets) if i // 4 % len(conns) == n]
            for n in range(len(conns))
        ]
    else:
        streams = [tickets[n :: len(conns)] for n in range(len(conns))]
    pids = [conn.get_server_pid() for conn in conns]
    cpu = cpu_by_process(pids)
    spent = await asyncio.gather(
        *(_stream(conn, sql, ids, chunk, batch) for conn, chunk in zip(conns, streams, strict=True))
    )
    return sum(spent) / len(tickets), cpu_used(cpu, cpu_by_process(pids)) / len(tickets)


async def measure(
    url: str, tickets: list[str], batch: int, rounds: int, streams: int, split_orders: bool
) -> dict:
    engine = create_async_engine(url)
    sql = fastpath.statement_sql(engine.dialect)
    async with engine.begin() as conn:
        organizer = await conn.scalar(select(Organizer.id).where(Organizer.slug == "demo"))
        event = await conn.scalar(select(Event.id).where(Event.slug == "democon"))
        list_id = await conn.scalar(
            insert(CheckinList).values(event_id=event, name="Bench").returning(CheckinList.id)
        )
    await engine.dispose()
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    conns = [await asyncpg.connect(dsn) for _ in range(streams)]
    per_round = len(tickets) // (rounds * 2 + 1)
    warm, rest = tickets[:per_round], tickets[per_round:]
    await _round(conns, sql, (organizer, list_id), warm, batch, True, split_orders)
    await analyze(url)
    times: dict[bool, list[float]] = {True: [], False: []}
    cpu: dict[bool, list[float]] = {True: [], False: []}
    for n in range(rounds * 2):
        enabled = n % 4 in (0, 3)  # on, off, off, on, on, off, ... : no side always goes first
        chunk = rest[n * per_round : (n + 1) * per_round]
        took, used = await _round(
            conns, sql, (organizer, list_id), chunk, batch, enabled, split_orders
        )
        times[enabled].append(took)
        cpu[enabled].append(used)
    for conn in conns:
        await conn.close()
    on = sum(times[True]) / len(times[True]) * 1e6
    off = sum(times[False]) / len(times[False]) * 1e6
    cpu_on = sum(cpu[True]) / len(cpu[True]) * 1e6
    cpu_off = sum(cpu[False]) / len(cpu[False]) * 1e6
    return {
        "benchmark": "stamp_triggers",
        "batch": batch,
        "streams": streams,
        "split_orders": split_orders,
        "scans_per_round": per_round,
        "us_per_scan_with_triggers": round(on, 1),
        "us_per_scan_without": round(off, 1),
        "ratio_with_to_without": round(on / off, 3),
        "cpu_us_per_scan_with_triggers": round(cpu_on, 1),
        "cpu_us_per_scan_without": round(cpu_off, 1),
        "cpu_ratio_with_to_without": round(cpu_on / cpu_off, 3),
        "rounds_us_with": [round(t * 1e6, 1) for t in times[True]],
        "rounds_us_without": [round(t * 1e6, 1) for t in times[False]],
        "rounds_cpu_us_with": [round(t * 1e6, 1) for t in cpu[True]],
        "rounds_cpu_us_without": [round(t * 1e6, 1) for t in cpu[False]],
        "load_average": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tickets", type=int, default=60_000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--streams", type=int, default=2, help="concurrent connections")
    parser.add_argument(
        "--split-orders",
        action="store_true",
        help="each stream scans whole orders (default: adjacent tickets go to different streams)",
    )
    args = parser.parse_args()
    url = fresh_pg_database("admit_bench_stamp")
    with tempfile.TemporaryDirectory() as data_dir:
        env = {"ADMIT_DATABASE_URL": url, "ADMIT_DATA_DIR": data_dir}
        admit(env, "migrate")
        demo_token(env)
        tickets = asyncio.run(load_tickets(url, args.tickets))
        print(
            json.dumps(
                asyncio.run(
                    measure(url, tickets, args.batch, args.rounds, args.streams, args.split_orders)
                )
            )
        )


if __name__ == "__main__":
    main()
