"""Redeem of signed secrets against random ones (issue 29: signed >= 90 % of random).

PostgreSQL, 2 server workers. Two events of the demo organizer: ``democon`` (``random``
secrets) and a clone switched to ``pretix_sig1``, each with one check-in list and
``--tickets`` paid tickets written straight into the tables (orders of four; the signed
event's secrets signed with its own key by Admit's issuer, ``tickets/secrets/sig1.py``, so
they are what a sale there would have made: about 120 characters against 32). wrk POSTs
``checkinrpc/redeem/`` as ``bench/redeem.py`` does (every request a ticket not scanned
before, a nonce as an offline-capable scanner sends), to one event, then the other, in
``--rounds`` alternating rounds of ``--seconds`` each, after a warm-up of both; each phase
scans its own slice of the tickets. Reported: redeems/s and p50/p99 of both, the ratio
(target >= 0.9) and each round's; every answer must be a 201, and the database must hold one
successful check-in per answer (give or take the requests wrk cut off).

Run: .venv/bin/python bench/signed_redeem.py [--connections 32] [--seconds 4] [--rounds 3]
     [--tickets N]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import secrets
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cryptography.hazmat.primitives import serialization
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import create_async_engine

from admit.models import Event, EventTicketKey, Item, Order, OrderPosition, Organizer
from admit.tickets.secrets import sig1
from bench.common import (
    admit,
    demo_token,
    fresh_pg_database,
    merged,
    server,
    vacuum,
    worst_ms,
    wrk,
)
from bench.redeem import LUA, analyze, count_checkins
from bench.signed_secrets import signed_clone

THREADS = 2


async def load(url: str, slug: str, tickets: int, signed: bool) -> list[str]:
    """``tickets`` paid tickets of event ``slug``, four an order; their secrets."""
    engine = create_async_engine(url)
    now = dt.datetime.now(dt.UTC)
    found: list[str] = []
    async with engine.begin() as conn:
        org_id = await conn.scalar(select(Organizer.id).where(Organizer.slug == "demo"))
        event_id = await conn.scalar(
            select(Event.id).where(Event.organizer_id == org_id, Event.slug == slug)
        )
        item_id = await conn.scalar(
            insert(Item)
            .values(event_id=event_id, name={"en": "Bench ticket"}, admission=True)
            .returning(Item.id)
        )
        signer = None
        if signed:
            pem = await conn.scalar(
                select(EventTicketKey.private_key).where(EventTicketKey.event_id == event_id)
            )
            signer = serialization.load_pem_private_key(pem.encode("ascii"), password=None)

        def secret() -> str:
            if signer is None:
                return secrets.token_hex(16)
            seed = secrets.token_urlsafe(9)[: sig1.SEED_LENGTH]
            return sig1.sign(signer, sig1.payload(seed, item_id, None, None, None, None))

        per_order = 4
        n_orders = -(-tickets // per_order)
        for start in range(0, n_orders, 5000):
            chunk = range(start, min(start + 5000, n_orders))
            orders = [
                {"event_id": event_id, "code": f"{slug[0].upper()}{i:07d}", "status": "p",
                 "secret": secrets.token_hex(16), "email": "fan@example.org",
                 "expires": now + dt.timedelta(days=30), "total": Decimal("40.00"),
                 "datetime": now, "last_modified": now}
                for i in chunk
            ]  # fmt: skip
            ids = (await conn.execute(insert(Order).returning(Order.id), orders)).scalars().all()
            rows = []
            for order_id in ids:
                for n in range(1, per_order + 1):
                    if len(found) >= tickets:
                        break
                    found.append(secret())
                    rows.append(
                        {"order_id": order_id, "event_id": event_id, "positionid": n,
                         "item_id": item_id, "price": Decimal("10.00"), "secret": found[-1],
                         "web_secret": secrets.token_hex(16),
                         "pseudonymization_id": secrets.token_hex(5).upper(),
                         "attendee_name_parts": {"_legacy": f"Guest {len(found)}"},
                         "attendee_name_cached": f"Guest {len(found)}"}
                    )  # fmt: skip
            await conn.execute(insert(OrderPosition), rows)
    await engine.dispose()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=int, default=4, help="each phase")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--tickets", type=int, default=None, help="per event; default: 8,000 scans/s a phase"
    )
    args = parser.parse_args()
    tickets = args.tickets or 10_000 + args.rounds * args.seconds * 8_000

    url = fresh_pg_database("admit_bench_signed_redeem")
    with tempfile.TemporaryDirectory() as data_dir:
        env = {"ADMIT_DATABASE_URL": url, "ADMIT_DATA_DIR": data_dir}
        admit(env, "migrate")
        token = demo_token(env)["token"]
        headers = {"Authorization": f"Token {token}"}
        with server(env, workers=args.workers) as base:
            signed_clone(base, token)
            pools = {
                "random": asyncio.run(load(url, "democon", tickets, signed=False)),
                "signed": asyncio.run(load(url, "signed", tickets, signed=True)),
            }
            asyncio.run(vacuum(url))
            lists = {}
            for kind, slug in (("random", "democon"), ("signed", "signed")):
                created = httpx.post(
                    f"{base}/api/v1/organizers/demo/events/{slug}/checkinlists/",
                    json={"name": "Main entrance"},
                    headers=headers,
                    timeout=60,
                )
                created.raise_for_status()
                lists[kind] = created.json()["id"]
            path = "/api/v1/organizers/demo/checkinrpc/redeem/"
            warm = 10_000
            share = (tickets - warm) // args.rounds
            plan = [(kind, 2, pools[kind][:warm]) for kind in ("random", "signed")]
            for n in range(args.rounds):
                for kind in ("random", "signed"):
                    chunk = pools[kind][warm + n * share : warm + (n + 1) * share]
                    plan.append((kind, args.seconds, chunk))
            results: dict[str, list[dict]] = {"random": [], "signed": []}
            answered = 0
            for index, (kind, seconds, chunk) in enumerate(plan):
                if index == 2:
                    asyncio.run(analyze(url))  # the warm-up's check-ins, as autovacuum would
                secrets_file = Path(data_dir) / f"{index}.txt"
                secrets_file.write_text("\n".join(chunk) + "\n")
                script = Path(data_dir) / f"{index}.lua"
                script.write_text(
                    LUA
                    % {"secrets": secrets_file, "threads": THREADS, "list": lists[kind],
                       "path": path, "key": ""}
                )  # fmt: skip
                report = wrk(
                    f"{base}{path}",
                    token,
                    connections=args.connections,
                    seconds=seconds,
                    threads=THREADS,
                    script=str(script),
                )
                report.pop("raw")
                answered += report["requests"]
                if index >= 2:
                    results[kind].append(report)
        ok, failed = asyncio.run(count_checkins(url))
    plain = merged(results["random"], args.seconds)
    signed = merged(results["signed"], args.seconds)
    ratio = signed["requests_per_second"] / max(1.0, plain["requests_per_second"])
    result = {
        "benchmark": "signed_redeem",
        "workers": args.workers,
        "connections": args.connections,
        "tickets_per_event": tickets,
        "random_redeems_per_second": plain["requests_per_second"],
        "random_p50": plain["p50"],
        "random_p99": plain["p99"],
        "signed_redeems_per_second": signed["requests_per_second"],
        "signed_p50": signed["p50"],
        "signed_p99": signed["p99"],
        "non_2xx": plain["non_2xx"] + signed["non_2xx"],
        "signed_ratio": round(ratio, 3),
        "round_ratios": [
            round(s["requests_per_second"] / max(1.0, p["requests_per_second"]), 3)
            for p, s in zip(results["random"], results["signed"], strict=True)
        ],
        "worst_p99_ms": worst_ms(f"{plain['p99']} / {signed['p99']}"),
        "successful_checkins": ok,
        "failed_checkins": failed,
    }
    # wrk stops mid-request: a connection's last scan may be checked in unanswered.
    result["met"] = (
        ratio >= 0.9
        and result["non_2xx"] == 0
        and failed == 0
        and answered <= ok <= answered + len(plan) * args.connections
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
