"""Device sync at scale (issue 29): a scanner downloads a check-in list of 100,000 tickets.

PostgreSQL, 2 server workers. The demo event gets ``--positions`` paid tickets (one an order
unless ``--per-order`` says more, each with a confirmed payment, an attendee name and an answer
to one of four questions), written by COPY straight into the tables the API writes (as
``bench/seed.py`` does); the sales ledger is then recounted (``admit recount-sales --fix``) and
the tables vacuumed and analysed, as a running system would have them. A check-in list takes
them all.

The scanner pairs as a phone would: ``admit device create demo "Door 1" --event democon``
prints the one-time token, ``device/initialize`` trades it for the device's API token. Then the
reference's "full" sync: the list's tickets page by page (``checkinlists/{id}/positions/?
page_size=1000``, following ``next``; a device may ask for 1,000 a page), one request at a
time as the sync library makes them, every answer parsed. It keeps the first page's
``X-Page-Generated``. Then ``--changes`` tickets change (half checked in by the device, half
renamed through the API by a team token) and the incremental round asks for
``modified_since=<that value>``: exactly the changed tickets' orders must come back (each
order's tickets), nothing else.

Reported: the full sync's seconds (target < 30 s) and tickets/s; the server workers' peak
resident memory during the sync (sampled from ``/proc`` every 20 ms, and each worker's
``VmHWM``; target < 200 MB a worker), their RSS before; the incremental round's seconds and
what it returned.

With ``--orders`` the device then downloads the event's ``orders/`` the same way (the
reference's sync library reads orders in its "full" mode; reported, no target).

Run: .venv/bin/python bench/device_sync.py [--positions 100000] [--page-size 1000]
     [--changes 10] [--per-order 1] [--workers 2] [--orders]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import random
import sys
import tempfile
import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import admit, demo_token, fresh_pg_database, memory_mb, serving, vacuum
from bench.seed import (
    DIETS,
    ORDER_COLUMNS,
    POSITION_COLUMNS,
    add_catalog,
    dsn,
    event_id_of,
    next_id,
    order_code,
    sync_sequence,
)

EVENT = "/api/v1/organizers/demo/events/democon"


async def load(url: str, positions: int, per_order: int) -> dict[str, int]:
    """``positions`` paid tickets of the demo event, ``per_order`` an order, by COPY."""
    import asyncpg

    rng = random.Random(29)
    conn = await asyncpg.connect(dsn(url))
    try:
        event_id = await event_id_of(conn, "demo", "democon")
        catalog = await add_catalog(conn, event_id)
        item, price, tax = catalog.items[0], catalog.prices[0], catalog.taxes[0]
        oid0, pid0 = await next_id(conn, "orders"), await next_id(conn, "order_positions")
        aid0 = await next_id(conn, "answers")
        # Stamped as the triggers would have stamped the load: before the sync starts.
        stamped = dt.datetime.now(dt.UTC)
        orders, rows, payments, answers = [], [], [], []
        n_orders = -(-positions // per_order)
        for n in range(n_orders):
            oid = oid0 + n
            count = min(per_order, positions - n * per_order)
            total = price * count
            when = stamped - dt.timedelta(seconds=rng.randrange(30 * 86400))
            orders.append(
                (oid, event_id, order_code(n), "p", False, f"{n:032x}", f"buyer{n}@example.org",
                 "en", when, when + dt.timedelta(days=14), total, "web", "", False, False,
                 False, "{}", stamped)
            )  # fmt: skip
            payments.append((oid, 1, "confirmed", total, "banktransfer", when, when, "{}"))
            for k in range(count):
                j = len(rows)
                pid = pid0 + j
                name = f"Attendee {rng.randrange(10**6):06d}"
                rows.append(
                    (pid, oid, event_id, k + 1, item, None, price, Decimal("19.00"), tax,
                     catalog.rule_id, json.dumps({"full_name": name}), name,
                     f"attendee{j}@example.org", f"{j:032x}", f"w{j:031d}", f"p{j:015d}",
                     None, False, False)
                )  # fmt: skip
                answers.append((aid0 + j, pid, catalog.questions["DIET"], rng.choice(DIETS)))
        await conn.copy_records_to_table(
            "orders",
            records=orders,
            columns=ORDER_COLUMNS,
        )
        await conn.copy_records_to_table(
            "order_positions",
            records=rows,
            columns=POSITION_COLUMNS,
        )
        await conn.copy_records_to_table(
            "order_payments",
            records=payments,
            columns=["order_id", "local_id", "state", "amount", "provider", "created",
                     "payment_date", "info"],
        )  # fmt: skip
        await conn.copy_records_to_table(
            "answers", records=answers, columns=["id", "orderposition_id", "question_id", "answer"]
        )
        for table in ("orders", "order_positions", "answers"):
            await sync_sequence(conn, table)
        return {"orders": len(orders), "positions": len(rows), "answers": len(answers)}
    finally:
        await conn.close()


def pair(env: dict[str, str], base: str) -> str:
    """A device made as ``admit device create`` makes it, initialized as an app does it."""
    printed = admit(env, "device", "create", "demo", "Door 1", "--event", "democon", "--url", base)
    handshake = json.loads(printed.strip().splitlines()[-1])
    paired = httpx.post(
        f"{base}/api/v1/device/initialize",
        json={"token": handshake["token"], "hardware_brand": "Bench", "hardware_model": "Sync",
              "software_brand": "pretixSCAN", "software_version": "1.0"},
        timeout=60,
    )  # fmt: skip
    paired.raise_for_status()
    return str(paired.json()["api_token"])


class Sampler:
    """The peak resident memory of some processes, read from /proc every ``every`` s."""

    def __init__(self, pids: list[int], every: float = 0.02) -> None:
        self.pids, self.every = pids, every
        self.peak = dict.fromkeys(pids, 0.0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in self.pids:
                self.peak[pid] = max(self.peak[pid], memory_mb(pid))
            self._stop.wait(self.every)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()


def sync(client: httpx.Client, url: str, params: dict[str, Any]) -> tuple[list[dict], str, int]:
    """Every page of a list, one request at a time: the rows, the first page's
    ``X-Page-Generated``, the number of requests."""
    first = client.get(url, params=params)
    first.raise_for_status()
    generated = first.headers["X-Page-Generated"]
    page = first.json()
    rows, requests = list(page["results"]), 1
    while page["next"]:
        answer = client.get(page["next"])
        answer.raise_for_status()
        page = answer.json()
        rows.extend(page["results"])
        requests += 1
    return rows, generated, requests


def change(base: str, team: str, device: str, rows: list[dict], list_id: int, n: int) -> set[int]:
    """Half of ``n`` tickets checked in by the device, the others renamed; their ids."""
    picked = random.Random(7).sample(rows, n)
    for i, row in enumerate(picked):
        if i % 2 == 0:
            answer = httpx.post(
                f"{base}/api/v1/organizers/demo/checkinrpc/redeem/",
                json={"secret": row["secret"], "lists": [list_id]},
                headers={"Authorization": f"Device {device}"},
                timeout=60,
            )
            answer.raise_for_status()
            assert answer.json()["status"] == "ok", answer.text
        else:
            answer = httpx.patch(
                f"{base}{EVENT}/orderpositions/{row['id']}/",
                json={"attendee_name": f"Renamed {i}"},
                headers={"Authorization": f"Token {team}"},
                timeout=60,
            )
            answer.raise_for_status()
    return {row["id"] for row in picked}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--positions", type=int, default=100_000)
    parser.add_argument("--per-order", type=int, default=1)
    parser.add_argument("--page-size", type=int, default=1000)
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--orders", action="store_true", help="then sync the event's orders/ the same way"
    )
    args = parser.parse_args()

    url = fresh_pg_database("admit_bench_device_sync")
    with tempfile.TemporaryDirectory() as data_dir:
        env = {"ADMIT_DATABASE_URL": url, "ADMIT_DATA_DIR": data_dir}
        admit(env, "migrate")
        team = demo_token(env)["token"]
        started = time.perf_counter()
        counts = asyncio.run(load(url, args.positions, args.per_order))
        admit(env, "recount-sales", "--fix")
        asyncio.run(vacuum(url))
        load_seconds = time.perf_counter() - started
        with serving(env, workers=args.workers) as served:
            base = served.base
            created = httpx.post(
                f"{base}{EVENT}/checkinlists/",
                json={"name": "Main entrance"},
                headers={"Authorization": f"Token {team}"},
                timeout=60,
            )
            created.raise_for_status()
            list_id = created.json()["id"]
            device = pair(env, base)
            positions_url = f"{base}{EVENT}/checkinlists/{list_id}/positions/"
            workers = served.worker_pids()
            client = httpx.Client(headers={"Authorization": f"Device {device}"}, timeout=120)
            with client:
                # A first small page warms each worker (connections, statements) as a
                # scanner's earlier requests (event, lists, settings) would have.
                for _ in range(2 * args.workers):
                    client.get(positions_url, params={"page_size": 1}).raise_for_status()
                rss_before = {pid: memory_mb(pid) for pid in workers}
                with Sampler(workers) as sampler:
                    started = time.perf_counter()
                    rows, generated, requests = sync(
                        client, positions_url, {"page_size": args.page_size}
                    )
                    full_seconds = time.perf_counter() - started
                hwm = {pid: memory_mb(pid, "VmHWM") for pid in workers}
                changed = change(base, team, device, rows, list_id, args.changes)
                by_order: dict[str, set[int]] = {}
                for row in rows:
                    by_order.setdefault(row["order"], set()).add(row["id"])
                expected = set().union(*(by_order[r["order"]] for r in rows if r["id"] in changed))
                started = time.perf_counter()
                delta, _, delta_requests = sync(
                    client,
                    positions_url,
                    {"page_size": args.page_size, "modified_since": generated},
                )
                delta_seconds = time.perf_counter() - started
                orders: dict[str, Any] = {}
                if args.orders:
                    with Sampler(workers) as order_sampler:
                        started = time.perf_counter()
                        synced, _, order_requests = sync(
                            client, f"{base}{EVENT}/orders/", {"page_size": args.page_size}
                        )
                        order_seconds = time.perf_counter() - started
                    orders = {
                        "orders_synced": len(synced),
                        "orders_requests": order_requests,
                        "orders_seconds": round(order_seconds, 2),
                        "orders_per_second": round(len(synced) / order_seconds, 1),
                        "orders_worker_rss_peak_mb": sorted(order_sampler.peak.values()),
                    }
    returned = {row["id"] for row in delta}
    peak = max(sampler.peak.values())
    result = {
        "benchmark": "device_sync",
        "workers": args.workers,
        "loaded": counts,
        "load_seconds": round(load_seconds, 1),
        "page_size": args.page_size,
        "full_sync_positions": len(rows),
        "full_sync_distinct": len({row["id"] for row in rows}),
        "full_sync_requests": requests,
        "full_sync_seconds": round(full_seconds, 2),
        "positions_per_second": round(len(rows) / full_seconds, 1),
        "worker_rss_before_mb": sorted(rss_before.values()),
        "worker_rss_peak_mb": sorted(sampler.peak.values()),
        "worker_vmhwm_mb": sorted(hwm.values()),
        "changed": len(changed),
        "incremental_seconds": round(delta_seconds, 3),
        "incremental_requests": delta_requests,
        "incremental_returned": len(returned),
        "incremental_expected": len(expected),
        "incremental_exact": returned == expected,
        **orders,
        "target_seconds": 30,
        "target_rss_mb": 200,
    }
    result["met"] = (
        result["full_sync_distinct"] == args.positions == len(rows)
        and full_seconds < 30
        and peak < 200
        and returned == expected
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
