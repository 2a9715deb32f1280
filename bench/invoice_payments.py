"""Payment confirmation with and without an invoice issued on payment (issue 33).

A fresh PostgreSQL database, the demo event, ``admit serve --workers 2`` with a Redis broker
(so the server runs no jobs: the PDFs are drawn by ``admit worker`` processes elsewhere, and
``bench/invoice_pdfs.py`` measures that drawing). Rounds alternate between the two modes on the
same server, so both see the same machine: each round places ``--orders`` pending orders
(untimed), sets ``invoice_generate`` (``"False"`` or ``"paid"``), then ``POST
…/orders/{code}/mark_paid/`` for all of them with ``--concurrency`` requests in flight (httpx),
timed. With ``"paid"`` each payment also issues the order's invoice in its transaction: the
invoice rows, its number from the event's counter row (locked until the commit: concurrent
payments queue there) and the queued rendering job.

Reported: payments/s per round and mode, the median of each mode, the cost of invoicing as a
share of throughput (target < 10 %), the CPU per payment of the server's workers and of the
database's backends (read from /proc around each timed round: on a shared machine a steadier
measure of the cost than throughput), and the load average.
Run: .venv/bin/python bench/invoice_payments.py [--orders 300] [--rounds 6] [--concurrency 16]
[--profile DIR] (py-spy's collapsed stacks of each worker per round, py-spy on the PATH)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    Served,
    admit,
    cpu_by_process,
    cpu_used,
    demo_token,
    fresh_pg_database,
    postgres_backends,
    serving,
)

REDIS_URL = os.environ.get("ADMIT_BENCH_REDIS", "redis://127.0.0.1:6379/0")
ISSUER = {
    "invoice_address_from_name": "Bench Events GmbH",
    "invoice_address_from": "Am Markt 5",
    "invoice_address_from_zipcode": "04109",
    "invoice_address_from_city": "Leipzig",
    "invoice_address_from_country": "DE",
    "invoice_address_from_vat_id": "DE999999999",
}
ADDRESS = {"name": "Ada Lovelace", "street": "Hauptstr. 1", "zipcode": "10115",
           "city": "Berlin", "country": "DE"}  # fmt: skip


async def _place(client: httpx.AsyncClient, event: str, item: int, count: int) -> list[str]:
    body = {
        "email": "buyer@example.org",
        "invoice_address": ADDRESS,
        "positions": [{"item": item}, {"item": item}],
    }
    codes = []
    for _ in range(count):
        r = await client.post(f"{event}orders/", json=body)
        r.raise_for_status()
        codes.append(r.json()["code"])
    return codes


async def _pay(
    client: httpx.AsyncClient, event: str, codes: list[str], concurrency: int
) -> tuple[float, int]:
    queue = list(codes)
    failures = 0

    async def worker() -> None:
        nonlocal failures
        while queue:
            code = queue.pop()
            r = await client.post(f"{event}orders/{code}/mark_paid/", json={})
            if r.status_code != 200:
                failures += 1
                if failures == 1:
                    print(f"mark_paid {code}: {r.status_code} {r.text[:300]}", file=sys.stderr)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started, failures


def _cpu(served: Served, database: str) -> tuple[dict[int, float], dict[int, float]]:
    """CPU seconds used so far by each of the server's workers and the database's backends."""
    return cpu_by_process(served.worker_pids()), cpu_by_process(postgres_backends(database))


def _spy(served: Served, folder: str | None, name: str) -> list[subprocess.Popen]:
    """py-spy on each worker while the round runs (``--profile``): collapsed stacks per worker,
    to see where a payment's CPU goes with and without the invoice."""
    if not folder:
        return []
    Path(folder).mkdir(parents=True, exist_ok=True)
    spy = shutil.which("py-spy") or "py-spy"
    spies = []
    for pid in served.worker_pids():
        out = f"{folder}/{name}-{pid}.txt"
        command = [spy, "record", "--format", "raw", "--rate", "200", "-o", out, "-p", str(pid)]
        spies.append(
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
    return spies


def _stop(spies: list[subprocess.Popen]) -> None:
    for spy in spies:
        spy.send_signal(signal.SIGINT)
    for spy in spies:
        spy.wait(timeout=30)


async def _run(served: Served, database: str, token: str, args: argparse.Namespace) -> dict:
    base = served.base
    headers = {"Authorization": f"Token {token}"}
    limits = httpx.Limits(max_connections=args.concurrency * 2)
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=60) as c:
        event = "/api/v1/organizers/demo/events/democon/"
        r = await c.post(
            f"{event}items/",
            json={"name": {"en": "Bench ticket"}, "default_price": "119.00", "admission": True},
        )
        r.raise_for_status()
        item = r.json()["id"]
        r = await c.post(f"{event}quotas/", json={"name": "Bench", "size": None, "items": [item]})
        r.raise_for_status()
        r = await c.patch(f"{event}settings/", json=ISSUER)
        r.raise_for_status()
        rounds: list[dict] = []
        for index in range(args.rounds * 2):
            mode = "False" if index % 2 == 0 else "paid"
            codes = await _place(c, event, item, args.orders)
            r = await c.patch(f"{event}settings/", json={"invoice_generate": mode})
            r.raise_for_status()
            cpu_before = _cpu(served, database)
            spies = _spy(served, args.profile, f"round{index + 1:02}-{mode}")
            seconds, failures = await _pay(c, event, codes, args.concurrency)
            cpu_after = _cpu(served, database)
            _stop(spies)
            server_ms, pg_ms = (
                round(1000 * cpu_used(before, after) / len(codes), 2)
                for before, after in zip(cpu_before, cpu_after, strict=True)
            )
            rate = round(len(codes) / seconds, 1)
            rounds.append({"invoice_generate": mode, "payments_per_s": rate, "failed": failures,
                           "server_cpu_ms": server_ms, "postgres_cpu_ms": pg_ms})  # fmt: skip
            print(f"round {index + 1}: {mode:5} {rate}/s, CPU per payment: server {server_ms} "
                  f"ms, PostgreSQL {pg_ms} ms", file=sys.stderr)  # fmt: skip
        invoices = (await c.get(f"{event}invoices/")).json()["count"]
    plain = statistics.median(
        r["payments_per_s"] for r in rounds if r["invoice_generate"] == "False"
    )
    invoiced = statistics.median(
        r["payments_per_s"] for r in rounds if r["invoice_generate"] == "paid"
    )

    def cpu(mode: str) -> float:
        return statistics.median(
            r["server_cpu_ms"] + r["postgres_cpu_ms"]
            for r in rounds
            if r["invoice_generate"] == mode
        )

    return {
        "rounds": rounds,
        "median_without_invoice": plain,
        "median_with_invoice": invoiced,
        "invoicing_cost_pct": round(100 * (1 - invoiced / plain), 1),
        # CPU (server and database) per payment: steadier than throughput on a shared machine.
        "cpu_ms_without_invoice": round(cpu("False"), 2),
        "cpu_ms_with_invoice": round(cpu("paid"), 2),
        "invoicing_cpu_cost_pct": round(100 * (1 - cpu("False") / cpu("paid")), 1),
        "invoices_issued": invoices,
        "expected_invoices": args.rounds * args.orders,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--orders", type=int, default=300, help="payments per round")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per mode")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--profile", help="folder for py-spy's collapsed stacks of each round")
    args = parser.parse_args()
    url = fresh_pg_database("admit_bench_invoice_payments")
    data_dir = tempfile.mkdtemp(prefix="admit-bench-invoices-")
    env = {
        "ADMIT_DATABASE_URL": url,
        "ADMIT_DATA_DIR": data_dir,
        "ADMIT_BROKER_URL": REDIS_URL,
        "ADMIT_JOB_QUEUE": f"admit-bench-invoices-{os.getpid()}",
        "ADMIT_DB_POOL_SIZE": "6",  # the PostgreSQL server is shared: few connections
    }
    admit(env, "migrate")
    token = demo_token(env)["token"]
    before = [round(x, 2) for x in os.getloadavg()]
    log_path = Path(data_dir) / "server.log"
    with log_path.open("w") as log, serving(env, args.workers, log=log) as served:
        database = url.rsplit("/", 1)[1]
        report = asyncio.run(_run(served, database, token, args))
    report.update(
        benchmark="invoice_payments",
        orders_per_round=args.orders,
        concurrency=args.concurrency,
        workers=args.workers,
        loadavg_before=before,
        loadavg_after=[round(x, 2) for x in os.getloadavg()],
    )
    print(json.dumps(report))


if __name__ == "__main__":
    main()
