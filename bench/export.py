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
import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from bench.common import ROOT, admit, demo_token, fresh_pg_database, server, wrk

REDIS_URL = os.environ.get("ADMIT_BENCH_REDIS", "redis://127.0.0.1:6379/0")
CODE_ALPHABET = "ABCDEFGHIJKLMNPQRSTUVWXYZ023456789"  # no O, no 1
DIETS = ["none", "vegetarian", "vegan", "gluten-free & lactose-free", "halal", "kosher"]


def order_code(n: int) -> str:
    chars = []
    for _ in range(7):
        n, r = divmod(n, len(CODE_ALPHABET))
        chars.append(CODE_ALPHABET[r])
    return "".join(reversed(chars))


def _dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


async def _next_ids(conn, table: str) -> int:
    return int(await conn.fetchval(f'SELECT coalesce(max(id), 0) + 1 FROM "{table}"'))


async def _sync_sequence(conn, table: str) -> None:
    await conn.execute(
        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
        f'(SELECT coalesce(max(id), 1) FROM "{table}"))'
    )


async def populate(url: str, organizer: str, event: str, positions: int, seed: int = 7) -> dict:
    """Writes ``positions`` order positions (two per order) with answers into the event, by
    COPY; returns counts. The sales ledger is not maintained: the data is for reading."""
    import asyncpg

    rng = random.Random(seed)
    conn = await asyncpg.connect(_dsn(url))
    try:
        event_id = await conn.fetchval(
            "SELECT e.id FROM events e JOIN organizers o ON o.id = e.organizer_id "
            "WHERE o.slug = $1 AND e.slug = $2",
            organizer,
            event,
        )
        rule_id = await conn.fetchval(
            "INSERT INTO tax_rules (event_id, name, internal_name, rate, price_includes_tax, "
            '"default", eu_reverse_charge, home_country, keep_gross_if_rate_changes) '
            "VALUES ($1, $2, '', 19, true, false, false, '', false) RETURNING id",
            event_id,
            json.dumps({"en": "VAT", "de": "MwSt."}),
        )
        items = []
        for name, price in (("Conference ticket", "89.00"), ("Workshop", "25.00")):
            items.append(
                await conn.fetchval(
                    "INSERT INTO items (event_id, tax_rule_id, name, internal_name, active, "
                    "default_price, free_price, admission, personalized, position, "
                    "require_voucher, hide_without_voucher, allow_cancel, checkin_attention, "
                    "require_approval, require_bundling, allow_waitinglist, issue_giftcard, "
                    "all_sales_channels, limit_sales_channels, meta_data, created) VALUES "
                    "($1, $2, $3, '', true, $4, false, true, true, 0, false, false, true, "
                    "false, false, false, true, false, true, '[]', '{}', now()) RETURNING id",
                    event_id,
                    rule_id,
                    json.dumps({"en": name}),
                    Decimal(price),
                )
            )
        questions = {}
        specs = [
            ("AGE", "N", {"en": "Age", "de": "Alter"}, []),
            ("DIET", "S", {"en": "Dietary needs", "de": "Ernährung"}, []),
            ("SHIRT", "C", {"en": "T-shirt size", "de": "T-Shirt-Größe"}, ["S", "M", "L", "XL"]),
            ("TOPICS", "M", {"en": "Topics", "de": "Themen"}, ["Music", "Art", "Tech"]),
        ]
        options: dict[str, list[int]] = {}
        for position, (ident, kind, text, labels) in enumerate(specs):
            qid = await conn.fetchval(
                "INSERT INTO questions (event_id, question, type, required, position, "
                "identifier, ask_during_checkin, show_during_checkin, hidden, "
                "print_on_invoice, dependency_values, valid_file_portrait) VALUES "
                "($1, $2, $3, false, $4, $5, false, false, false, false, '[]', false) "
                "RETURNING id",
                event_id,
                json.dumps(text),
                kind,
                100 + position,
                f"BENCH_{ident}",
            )
            questions[ident] = qid
            for item_id in items:
                await conn.execute(
                    "INSERT INTO question_items (question_id, item_id) VALUES ($1, $2)",
                    qid,
                    item_id,
                )
            options[ident] = [
                await conn.fetchval(
                    "INSERT INTO question_options (question_id, identifier, answer, position) "
                    "VALUES ($1, $2, $3, $4) RETURNING id",
                    qid,
                    f"{ident}{i}",
                    json.dumps({"en": label}),
                    i,
                )
                for i, label in enumerate(labels)
            ]
        orders_n = positions // 2
        order_id0 = await _next_ids(conn, "orders")
        pos_id0 = await _next_ids(conn, "order_positions")
        answer_id0 = await _next_ids(conn, "answers")
        start = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
        orders, pos_rows, payments, fees, answers, chosen = [], [], [], [], [], []
        prices = [Decimal("89.00"), Decimal("25.00")]
        tax = [Decimal("14.21"), Decimal("3.99")]
        answer_id = answer_id0
        for n in range(orders_n):
            oid = order_id0 + n
            roll = rng.random()
            status = "p" if roll < 0.8 else ("n" if roll < 0.95 else "c")
            when = start + dt.timedelta(seconds=rng.randrange(60 * 86400))
            has_fee = n % 10 == 0
            total = prices[0] + prices[1] + (Decimal("2.50") if has_fee else 0)
            orders.append(
                (
                    oid, event_id, order_code(n), status, False, f"{n:032x}",
                    f"buyer{n}@example.org", "en", when, when + dt.timedelta(days=14), total,
                    "web", "", False, False, False, "{}", when,
                )
            )  # fmt: skip
            if status == "p":
                payments.append((oid, 1, "confirmed", total, "banktransfer", when, when, "{}"))
            if has_fee:
                fees.append(
                    (oid, "service", Decimal("2.50"), "Service", "", Decimal(0), Decimal(0), False)
                )
            for k in range(2):
                pid = pos_id0 + 2 * n + k
                name = f"Attendee {2 * n + k}"
                pos_rows.append(
                    (
                        pid, oid, event_id, k + 1, items[k], prices[k], Decimal("19.00"),
                        tax[k], rule_id, json.dumps({"full_name": name}), name,
                        f"attendee{2 * n + k}@example.org", f"{2 * n + k:032x}",
                        f"w{2 * n + k:031d}", f"p{2 * n + k:015d}"[:16], False, False,
                    )
                )  # fmt: skip
                answers.append((answer_id, pid, questions["AGE"], str(rng.randrange(18, 80))))
                answers.append((answer_id + 1, pid, questions["DIET"], rng.choice(DIETS)))
                shirt = rng.choice(options["SHIRT"])
                answers.append((answer_id + 2, pid, questions["SHIRT"], "M"))
                chosen.append((answer_id + 2, shirt))
                answer_id += 3
                if k == 0:
                    picked = rng.sample(options["TOPICS"], rng.randrange(1, 3))
                    answers.append((answer_id, pid, questions["TOPICS"], "Music"))
                    chosen.extend((answer_id, o) for o in picked)
                    answer_id += 1
        await conn.copy_records_to_table(
            "orders",
            records=orders,
            columns=[
                "id", "event_id", "code", "status", "testmode", "secret", "email", "locale",
                "datetime", "expires", "total", "sales_channel", "comment",
                "checkin_attention", "require_approval", "valid_if_pending", "meta_info",
                "last_modified",
            ],
        )  # fmt: skip
        await conn.copy_records_to_table(
            "order_positions",
            records=pos_rows,
            columns=[
                "id", "order_id", "event_id", "positionid", "item_id", "price", "tax_rate",
                "tax_value", "tax_rule_id", "attendee_name_parts", "attendee_name_cached",
                "attendee_email", "secret", "web_secret", "pseudonymization_id",
                "is_bundled", "canceled",
            ],
        )  # fmt: skip
        await conn.copy_records_to_table(
            "order_payments",
            records=payments,
            columns=[
                "order_id", "local_id", "state", "amount", "provider", "created",
                "payment_date", "info",
            ],
        )  # fmt: skip
        await conn.copy_records_to_table(
            "order_fees",
            records=fees,
            columns=[
                "order_id", "fee_type", "value", "description", "internal_type", "tax_rate",
                "tax_value", "canceled",
            ],
        )  # fmt: skip
        await conn.copy_records_to_table(
            "answers", records=answers, columns=["id", "orderposition_id", "question_id", "answer"]
        )
        await conn.copy_records_to_table(
            "answer_options", records=chosen, columns=["answer_id", "option_id"]
        )
        for table in ("orders", "order_positions", "answers"):
            await _sync_sequence(conn, table)
        await conn.execute("ANALYZE")
        return {
            "orders": len(orders),
            "positions": len(pos_rows),
            "answers": len(answers),
            "payments": len(payments),
            "fees": len(fees),
        }
    finally:
        await conn.close()


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmHWM")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmRSS")


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

    conn = await asyncpg.connect(_dsn(url))
    try:
        row = await conn.fetchrow("SELECT started, finished FROM jobs WHERE uuid = $1", job_uuid)
    finally:
        await conn.close()
    return round((row["finished"] - row["started"]).total_seconds(), 2)


def measure(env: dict[str, str], url: str, base: str, token: str, fmt: str) -> dict:
    worker = start_worker(env)
    try:
        idle = rss_mb(worker.pid)
        result = run_export(base, token, fmt)
        peak = peak_rss_mb(worker.pid)
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
