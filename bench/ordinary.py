"""Ordinary requests: order creation and every list, on an event with 20,000 orders.

PostgreSQL, ``admit serve --workers 2``, wrk with 2 threads and 16 connections (``--connections
32`` for the other end of the issue's range), a team token, 10 s a scenario after a 2 s
warm-up. The data (``bench/seed_ordinary.py``, 15-30 s): the demo event
``democon`` with 20,000 orders (45,000 positions, 140,000 answers, payments, fees, 9,500
check-ins), 11 products (variations, an add-on category), 11 quotas, 8 questions, 300
vouchers; ``E/subevents/`` is read from ``demotours``, a series with 120 dates.

Scenarios, in the order they run (the reads first, so they see exactly the seeded data):

- ``event``: ``GET E/`` (event detail), a reference point without a target;
- ``items``, ``vouchers``, ``quotas``, ``questions``, ``subevents``: the first page of each;
- ``orders``, ``orderpositions``, ``checkins``, ``checkinlist_positions``: the first page (50
  orders with positions and answers; positions; check-ins; the Entrance list's positions);
- ``order_1``: ``POST E/orders/`` with one position, paid (``status: p``, ``banktransfer``);
- ``order_3``: ``POST E/orders/``, paid, a regular ticket with two answers (a choice and a
  number), a T-shirt (size M) as its add-on, and a student ticket;
- ``sellout``: ``order_1``'s body for a new product whose quota holds ``--sellout`` (500)
  places, for ``--seconds``; afterwards the database must hold exactly the quota (oversell 0),
  availability read 0, and every answer be 201 or 400. Where ``order_1`` ran too slowly to
  sell the quota twice over in that time, the quota is a quarter of what it sold (at least 10;
  reported as ``quota``), so the run always ends with many more attempts than places.

Orders are created without e-mail (``send_email`` false, as ``bench/rush.py``): the mail is
queued work of its own, not order creation.

Every scenario's request is sent once with urllib first and must succeed, or the benchmark
stops with the answer. Answers are counted by status code during the run (a Lua tally); any
non-2xx answer or socket error fails the scenario. After the run the sales ledger must equal
a recount (``admit recount-sales``), and each worker's RSS is reported (target <= 150 MB).
The server's log (access log on, as in production) goes to a file named in the report.

Targets (issue 17): ``order_1`` >= 1,000/s with p99 < 100 ms; ``order_3`` >= 400/s; the four
order lists >= 1,500/s; the five catalog lists >= 3,000/s; worker RSS <= 150 MB.
Prints a table, then one JSON line.
Run: .venv/bin/python bench/ordinary.py [--only orders,order_1] [--seconds 10]
     [--connections 16] [--workers 2] [--orders 20000] [--sellout 500] [--page-cache-mb 0]
     [--compete 2]

Per scenario the report gives wrk's p50, p99 and maximum, the CPU the workers and the
database's backends used per answered request (``worker_cpu_ms``, ``postgres_cpu_ms``: on a
shared machine a steadier figure than the rate), and beside wrk a probe
(``bench/stalls.py``, GET scenarios) times single requests on a connection of its own, as a
scanner polls: its p99 and maximum per second of the run (``probe_per_second``) show when a
stall happened and whether one connection waited while the others were served.
``--compete N`` runs N busy processes at nice 19 beside the scenarios (issue 34: with a
competing CPU load, no request may wait 500 ms); run >= 65 s (``--seconds 65``) to include the
periodic tasks.

The list scenarios read one page over and over, as a poller that finds nothing new does: with
the kept pages on (the default) they measure answering a proved-unchanged page; with
``--page-cache-mb 0`` every page is rendered (what a page costs right after a change).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy.engine import make_url

from bench.common import (
    ROOT,
    STATUS_TALLY,
    Served,
    admit,
    cpu_by_process,
    cpu_used,
    demo_token,
    fresh_pg_database,
    latency_ms,
    memory_mb,
    postgres_backends,
    serving,
    wrk,
)
from bench.rush import count, product_with_quota
from bench.seed_ordinary import EVENT, ORGANIZER, SERIES, Seeded, seed
from bench.stalls import Probe, RunQueueWaits, compete

EVENT_PATH = f"/api/v1/organizers/{ORGANIZER}/events/{EVENT}/"
SERIES_PATH = f"/api/v1/organizers/{ORGANIZER}/events/{SERIES}/"
RSS_TARGET_MB = 150.0
# Slow answers are measured, not dropped: wrk's default (2 s) would count them as errors.
WRK_TIMEOUT = 30


def one_position(item: int) -> dict:
    return {
        "email": "box-office@example.org",
        "status": "p",
        "payment_provider": "banktransfer",
        "send_email": False,
        "positions": [{"item": item, "attendee_name": "Ada Lovelace"}],
    }


def three_positions(s: Seeded) -> dict:
    answers = [
        {"question": s.diet_question, "options": [s.diet_vegan]},
        {"question": s.age_question, "answer": "36"},
    ]
    return {
        "email": "group@example.org",
        "status": "p",
        "payment_provider": "banktransfer",
        "send_email": False,
        "positions": [
            {"positionid": 1, "item": s.regular, "attendee_name": "Ada Lovelace",
             "answers": answers},
            {"positionid": 2, "item": s.shirt, "variation": s.shirt_m, "addon_to": 1},
            {"positionid": 3, "item": s.student, "attendee_name": "Grace Hopper"},
        ],
    }  # fmt: skip


@dataclass
class Scenario:
    name: str
    label: str
    path: Callable[[Seeded], str]
    body: Callable[[Seeded], dict] | None = None  # POSTs send it
    min_rps: float | None = None  # None: a reference point
    max_p99_ms: float | None = None
    page: int | None = None  # a list: the results its first page must hold (at least)

    @property
    def target(self) -> str:
        if self.min_rps is None:
            return "reference"
        text = f">= {self.min_rps:,.0f}/s"
        return text + (f", p99 < {self.max_p99_ms:.0f} ms" if self.max_p99_ms else "")


def _list(name: str, resource: str, min_rps: float, page: int, series: bool = False) -> Scenario:
    base = SERIES_PATH if series else EVENT_PATH
    return Scenario(name, f"GET E/{resource}", lambda s: base + resource, min_rps=min_rps,
                    page=page)  # fmt: skip


SCENARIOS = [
    Scenario("event", "GET E/ (event detail)", lambda s: EVENT_PATH),
    _list("items", "items/", 3000, 11),
    _list("vouchers", "vouchers/", 3000, 50),
    _list("quotas", "quotas/", 3000, 11),
    _list("questions", "questions/", 3000, 8),
    _list("subevents", "subevents/", 3000, 50, series=True),
    _list("orders", "orders/", 1500, 50),
    _list("orderpositions", "orderpositions/", 1500, 50),
    _list("checkins", "checkins/", 1500, 50),
    Scenario(
        "checkinlist_positions",
        "GET E/checkinlists/{id}/positions/",
        lambda s: f"{EVENT_PATH}checkinlists/{s.checkin_list}/positions/",
        min_rps=1500,
        page=50,
    ),
    Scenario(
        "order_1",
        "POST E/orders/ (1 position, paid)",
        lambda s: EVENT_PATH + "orders/",
        body=lambda s: one_position(s.regular),
        min_rps=1000,
        max_p99_ms=100,
    ),
    Scenario(
        "order_3",
        "POST E/orders/ (3 positions: add-on, 2 answers)",
        lambda s: EVENT_PATH + "orders/",
        body=three_positions,
        min_rps=400,
    ),
]
NAMES = [s.name for s in SCENARIOS] + ["sellout"]


def script_for(body: dict | None) -> str:
    """A wrk script: the POST (if a body is given) and the status tally."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        if body is not None:
            script.write(
                'wrk.method = "POST"\n'
                f"wrk.body = [==[{json.dumps(body)}]==]\n"
                'wrk.headers["Content-Type"] = "application/json"\n'
            )
        script.write(STATUS_TALLY)
    return script.name


def send_once(url: str, token: str, body: dict | None) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None else "POST",
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def precheck(name: str, url: str, token: str, body: dict | None, page: int | None) -> None:
    """One request before timing: a benchmark of error answers is worth nothing."""
    status, payload = send_once(url, token, body)
    if not 200 <= status < 300:
        sys.exit(f"{name}: {url} answered {status} before timing: {payload[:2000]!r}")
    if page is not None:
        results = json.loads(payload)["results"]
        if len(results) < page:
            sys.exit(f"{name}: {url} listed {len(results)} results, expected at least {page}")
        positions = [p for r in results for p in r.get("positions", [])]
        if positions and not any(p.get("answers") for p in positions):
            sys.exit(f"{name}: {url} lists positions without the seeded answers")


def figures(result: dict, seconds: int) -> dict:
    """wrk's report as the JSON line gives it; non-2xx counted from the status tally."""
    statuses = result["statuses"]
    if result["requests"] and not statuses:
        sys.exit(f"wrk's status tally is missing (did the Lua script load?):\n{result['raw']}")
    non_2xx = sum(n for code, n in statuses.items() if not 200 <= code < 300)
    return {
        "requests_per_second": result["requests_per_second"],
        "p50_ms": latency_ms(result["p50"]),
        "p99_ms": latency_ms(result["p99"]),
        "max_ms": latency_ms(result["max"]),
        "requests": result["requests"],
        "non_2xx": non_2xx if statuses else result["non_2xx"],
        "socket_errors": result["socket_errors"],
        "statuses": {str(code): n for code, n in statuses.items()},
        "seconds": seconds,
    }


def cpu_per_request(database: str, workers: list[int]) -> Callable[[int], dict]:
    """Starts counting the CPU of the workers and of PostgreSQL's backends for ``database``;
    the function returned gives each one's milliseconds per answered request since."""
    before = cpu_by_process(workers), cpu_by_process(postgres_backends(database))

    def per_request(requests: int) -> dict:
        after = cpu_by_process(workers), cpu_by_process(postgres_backends(database))
        used = [cpu_used(b, a) for b, a in zip(before, after, strict=True)]
        per = [round(1000 * u / max(requests, 1), 2) for u in used]
        return {"worker_cpu_ms": per[0], "postgres_cpu_ms": per[1]}

    return per_request


def run_scenario(
    scenario: Scenario,
    base: str,
    token: str,
    seeded: Seeded,
    args,
    workers: list[int],
    database: str,
) -> dict:
    url = base + scenario.path(seeded)
    body = scenario.body(seeded) if scenario.body else None
    precheck(scenario.name, url, token, body, scenario.page)
    script = script_for(body)
    probe = None
    try:
        if args.warmup:
            wrk(url, token, connections=args.connections, seconds=args.warmup, script=script,
                timeout=WRK_TIMEOUT)  # fmt: skip
        # A probe times single requests beside wrk, second by second (GETs only: a POST
        # scenario's probe would add orders of its own).
        with (
            Probe(url, token) if body is None else contextlib.nullcontext() as probe,
            RunQueueWaits(workers) as waits,
        ):
            # The probe's requests (a few a second) are in the CPU too.
            cpu = cpu_per_request(database, workers)
            result = wrk(url, token, connections=args.connections, seconds=args.seconds,
                         script=script, timeout=WRK_TIMEOUT)  # fmt: skip
            used = cpu(result["requests"])
    finally:
        Path(script).unlink()
    out = figures(result, args.seconds)
    out.update(used)
    if probe is not None:
        out.update(probe.report(waits))
    met = (
        out["non_2xx"] == 0
        and out["socket_errors"] == 0
        and (scenario.min_rps is None or out["requests_per_second"] >= scenario.min_rps)
        and (scenario.max_p99_ms is None or (out["p99_ms"] or 0) < scenario.max_p99_ms)
    )
    out.update(label=scenario.label, target=scenario.target, met=met)
    if scenario.min_rps is None:
        out["met"] = None if met else False  # a reference point: only errors fail it
    return out


def sellout_size(wanted: int, order_rate: float | None, seconds: int) -> int:
    """The sell-out quota: ``wanted``, unless the measured order rate would not sell it
    twice over in the run; then a quarter of what that rate sells (at least 10), so the run
    ends with many more attempts than places even when the machine slows down meanwhile."""
    if order_rate is None or order_rate * seconds >= 2 * wanted:
        return wanted
    return max(10, int(order_rate * seconds / 4))


def sellout(base: str, token: str, url: str, args, size: int) -> dict:
    """A quota of ``size`` places hit for ``--seconds``: exactly the quota is sold."""
    item, quota = product_with_quota(base, token, size, "Sell-out")
    target = base + EVENT_PATH + "orders/"
    body = one_position(item)
    precheck("sellout", target, token, body, None)
    script = script_for(body)
    try:
        result = wrk(target, token, connections=args.connections, seconds=args.seconds,
                     script=script, timeout=WRK_TIMEOUT)  # fmt: skip
    finally:
        Path(script).unlink()
    out = figures(result, args.seconds)
    sold = count(
        url,
        "SELECT count(*) FROM order_positions p JOIN orders o ON o.id = p.order_id "
        f"WHERE p.item_id = {int(item)} AND o.status IN ('n', 'p') AND NOT p.canceled",
    )
    status, payload = send_once(f"{base}{EVENT_PATH}quotas/{quota}/availability/", token, None)
    available = json.loads(payload)["available_number"] if status == 200 else None
    unexpected = {c: n for c, n in out["statuses"].items() if c not in ("201", "400")}
    out.update(
        label=f"POST E/orders/ sell-out (quota {size})",
        target="sold = quota, oversell 0",
        quota=size,
        quota_asked=args.sellout,
        sold=sold,
        oversell=max(0, sold - size),
        # +1: the precheck's order; wrk may stop before the last answers arrive
        created_answers_seen=out["statuses"].get("201", 0) + 1,
        rejected=out["statuses"].get("400", 0),
        available_number=available,
        unexpected_statuses=unexpected,
    )
    out["met"] = sold == size and available == 0 and not unexpected and out["socket_errors"] == 0
    return out


def server_log_summary(log: str) -> dict:
    """What the server's log says went wrong: answers >= 500 by status (the access log),
    tracebacks, and PostgreSQL refusing connections (its max_connections is shared with
    whatever else runs on the machine: the server answers those requests 503)."""
    statuses = re.findall(r" admit\.access .* (5\d\d) [\d.]+ms$", log, re.M)
    return {
        "server_5xx": {code: statuses.count(code) for code in sorted(set(statuses))},
        "server_tracebacks": log.count("Traceback (most recent call last)"),
        # lines, not refusals: a refusal logs a few (503 warnings are limited to one a second)
        "server_too_many_clients": log.count("too many clients"),
    }


def ledger_matches(env: dict[str, str]) -> tuple[bool, str]:
    """``admit recount-sales``: exit 0 when the sales ledger equals a recount."""
    done = subprocess.run(
        [sys.executable, "-m", "admit", "recount-sales"],
        env={**os.environ, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return done.returncode == 0, (done.stdout + done.stderr).strip()


def workers_memory(served: Served) -> list[dict]:
    return [
        {"pid": pid, "rss_mb": memory_mb(pid), "peak_rss_mb": memory_mb(pid, "VmHWM")}
        for pid in served.worker_pids()
    ]


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


def _cpu(result: dict) -> str:
    if "worker_cpu_ms" not in result:
        return "-"
    return f"{result['worker_cpu_ms']:.2f} + {result['postgres_cpu_ms']:.2f} ms"


def table(report: dict) -> str:
    rows = [("scenario", "req/s", "p50", "p99", "max", "probe max", "CPU/req worker+db",
             "non-2xx", "target", "met")]  # fmt: skip
    for name, r in report["scenarios"].items():
        errors = f" (+{r['socket_errors']} socket)" if r["socket_errors"] else ""
        met = {True: "yes", False: "NO", None: "-"}[r["met"]]
        rows.append((f"{name}: {r['label']}", f"{r['requests_per_second']:,.1f}",
                     _ms(r["p50_ms"]), _ms(r["p99_ms"]), _ms(r["max_ms"]),
                     _ms(r.get("probe_max_ms")), _cpu(r), f"{r['non_2xx']}{errors}",
                     r["target"], met))  # fmt: skip
    rss = report["worker_rss_mb"]
    rss_met = "yes" if rss and max(rss) <= RSS_TARGET_MB else "NO"
    rows.append(("worker RSS after the run (MB)", ", ".join(f"{m:.1f}" for m in rss), "", "",
                 "", "", "", "", f"<= {RSS_TARGET_MB:.0f} MB", rss_met))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="", help=f"comma-separated: {','.join(NAMES)}")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2, help="seconds per scenario; 0: none")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--orders", type=int, default=20_000)
    parser.add_argument(
        "--compete",
        type=int,
        default=0,
        help="busy processes at nice 19 beside the scenarios (the issue's competing load: "
        "one per core)",
    )
    parser.add_argument("--sellout", type=int, default=500)
    parser.add_argument(
        "--pool-size", type=int, help="ADMIT_DB_POOL_SIZE of the server (default: its own)"
    )
    parser.add_argument(
        "--page-cache-mb",
        type=float,
        help="ADMIT_PAGE_CACHE_MB of the server (default: its own; 0 renders every page)",
    )
    args = parser.parse_args()
    chosen = [n for n in args.only.split(",") if n] or NAMES
    if unknown := set(chosen) - set(NAMES):
        parser.error(f"unknown scenario(s) {sorted(unknown)}; known: {','.join(NAMES)}")

    url = fresh_pg_database("admit_bench_ordinary")
    database = make_url(url).database or ""
    data_dir = tempfile.mkdtemp(prefix="admit-bench-ordinary-")
    env = {"ADMIT_DATABASE_URL": url, "ADMIT_DATA_DIR": data_dir}
    if args.pool_size:
        env["ADMIT_DB_POOL_SIZE"] = str(args.pool_size)
    if args.page_cache_mb is not None:
        env["ADMIT_PAGE_CACHE_MB"] = str(args.page_cache_mb)
    admit(env, "migrate")
    token = demo_token(env)["token"]
    started = os.times().elapsed
    seeded = asyncio.run(seed(url, args.orders))
    admit(env, "recount-sales", "--fix")  # the COPY left the ledger behind
    report: dict = {
        "benchmark": "ordinary",
        "workers": args.workers,
        "connections": args.connections,
        "seconds": args.seconds,
        "pool_size": args.pool_size,
        "page_cache_mb": args.page_cache_mb,
        "seeded": {**seeded.counts, "seconds": round(os.times().elapsed - started, 1)},
        "loadavg_before": [round(x, 2) for x in os.getloadavg()],
        "scenarios": {},
    }
    log_path = Path(data_dir) / "server.log"
    print(f"seeded {report['seeded']}; server log {log_path}", file=sys.stderr)
    report["compete"] = args.compete
    with (
        log_path.open("w") as log,
        serving(env, args.workers, log=log) as served,
        compete(args.compete),
    ):
        for scenario in SCENARIOS:
            if scenario.name in chosen:
                result = run_scenario(
                    scenario, served.base, token, seeded, args, served.worker_pids(), database
                )
                report["scenarios"][scenario.name] = result
                print(f"{scenario.name}: {result['requests_per_second']}/s", file=sys.stderr)
        if "sellout" in chosen:
            rate = report["scenarios"].get("order_1", {}).get("requests_per_second")
            size = sellout_size(args.sellout, rate, args.seconds)
            report["scenarios"]["sellout"] = sellout(served.base, token, url, args, size)
        memory = workers_memory(served)
    report["worker_rss_mb"] = [m["rss_mb"] for m in memory]
    report["worker_peak_rss_mb"] = [m["peak_rss_mb"] for m in memory]
    report["ledger_matches_recount"], ledger_text = ledger_matches(env)
    if not report["ledger_matches_recount"]:
        report["ledger_drift"] = ledger_text
    report.update(server_log_summary(log_path.read_text()), server_log=str(log_path))
    report["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    report["met"] = (
        all(r["met"] is not False for r in report["scenarios"].values())
        and max(report["worker_rss_mb"], default=0) <= RSS_TARGET_MB
        and report["ledger_matches_recount"]
    )
    print(table(report))
    if "sellout" in report["scenarios"]:
        s = report["scenarios"]["sellout"]
        print(f"sell-out: quota {s['quota']}, sold {s['sold']}, oversell {s['oversell']}, "
              f"availability {s['available_number']}, answers {s['statuses']}")  # fmt: skip
    print(f"ledger equals a recount: {report['ledger_matches_recount']}; server answers >= 500: "
          f"{report['server_5xx']}, tracebacks: {report['server_tracebacks']}; load average "
          f"before {report['loadavg_before']}, after {report['loadavg_after']}")  # fmt: skip
    if report["server_too_many_clients"]:
        print("PostgreSQL refused connections (\"too many clients\" in "
              f"{report['server_too_many_clients']} log lines: max_connections is shared with "
              "other processes); the server answered those requests 503. Lower --pool-size or "
              "run on a quieter server.")  # fmt: skip
    print(json.dumps(report))


if __name__ == "__main__":
    main()
