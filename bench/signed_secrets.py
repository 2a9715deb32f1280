"""Signed ticket secrets: what signing costs at order creation, and offline verification.

PostgreSQL, 2 server workers. Two events of the demo organizer: ``democon`` (``random``
secrets) and a clone switched to ``pretix_sig1``, each with a product on a quota far bigger
than the run sells. wrk POSTs paid orders of one position (``status: p``) to one event, then
the other, in ``--rounds`` alternating rounds (so a machine whose speed drifts weighs on both
alike); the report gives orders/s and p50/p99 for both and the ratio (target: signed >= 90 %
of random, i.e. signing costs < 10 %).

Then offline, as a scanner would: 10,000 signed tickets (``--verify``; those sold, topped up
with tickets written straight into the event and signed by Admit's issuer when fewer sold) are
checked with the stand-alone verifier of the tests (``tests/signed/decoder.py``, written from
the wire format, not from Admit's code) against the public key of ``valid_keys``, after one
order's secrets were regenerated and one ticket blocked through the API; the revocation and
block lists are synced from ``revokedsecrets/`` and ``blockedsecrets/``. Every current secret
must verify, and a flipped byte, a stranger's key, a revoked and a blocked secret must each be
refused for their own reason.

Run: .venv/bin/python bench/signed_secrets.py [--connections 16] [--seconds 12] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from tests.signed import decoder

from admit.tickets.secrets.keys import new_pair
from bench.common import admit, demo_token, fresh_pg_database, merged, server, wrk
from bench.rush import product_with_quota

POST_SCRIPT = """
wrk.method = "POST"
wrk.body = [[%s]]
wrk.headers["Content-Type"] = "application/json"
"""


def signed_clone(base: str, token: str) -> str:
    """A clone of the demo event that signs its secrets; returns its public key."""
    headers = {"Authorization": f"Token {token}"}
    events = f"{base}/api/v1/organizers/demo/events"
    cloned = httpx.post(
        f"{events}/democon/clone/",
        json={"slug": "signed", "name": {"en": "Signed"}, "date_from": "2031-06-01T10:00:00Z"},
        headers=headers,
        timeout=60,
    )
    cloned.raise_for_status()
    httpx.patch(
        f"{events}/signed/settings/",
        json={"ticket_secret_generator": "pretix_sig1"},
        headers=headers,
        timeout=60,
    ).raise_for_status()
    detail = httpx.get(f"{events}/signed/", headers=headers, timeout=60).json()
    return str(detail["valid_keys"]["pretix_sig1"][0])


def phase(base: str, token: str, event: str, item_id: int, connections: int, seconds: int) -> dict:
    body = json.dumps({"email": "fan@example.org", "status": "p", "payment_provider": "manual",
                       "positions": [{"item": item_id}], "send_email": False})  # fmt: skip
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(POST_SCRIPT % body)
    target = f"{base}/api/v1/organizers/demo/events/{event}/orders/"
    result = wrk(target, token, connections=connections, seconds=seconds, script=script.name)
    Path(script.name).unlink()
    result.pop("raw")
    result["successes"] = result["requests"] - result["non_2xx"]
    result["successes_per_second"] = round(result["successes"] / seconds, 1)
    return result


def secrets_of(url: str, event: str, limit: int) -> list[tuple[str, int, str]]:
    """(order code, position id, secret) of up to ``limit`` live tickets of ``event``."""

    async def work() -> list[tuple[str, int, str]]:
        engine = create_async_engine(url)
        async with engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT o.code, p.id, p.secret FROM order_positions p "
                    "JOIN orders o ON o.id = p.order_id JOIN events e ON e.id = p.event_id "
                    "WHERE e.slug = :slug AND NOT p.canceled ORDER BY p.id LIMIT :n"
                ),
                {"slug": event, "n": limit},
            )
            found = [(r[0], r[1], r[2]) for r in rows]
        await engine.dispose()
        return found

    return asyncio.run(work())


def synced(base: str, token: str, name: str, field: str) -> set[str]:
    """Every secret of a sync list (``field`` true for blocked, any for revoked)."""
    headers = {"Authorization": f"Token {token}"}
    url = f"{base}/api/v1/organizers/demo/events/signed/{name}/"
    found: set[str] = set()
    while url:
        page = httpx.get(url, headers=headers, timeout=60).json()
        found |= {r["secret"] for r in page["results"] if r.get(field, True)}
        url = page["next"]
    return found


def verify_offline(base: str, token: str, url: str, key: str, limit: int) -> dict:
    headers = {"Authorization": f"Token {token}"}
    event = f"{base}/api/v1/organizers/demo/events/signed"
    sold = secrets_of(url, "signed", limit)
    topped_up = 0
    if len(sold) < limit:
        # A slow machine sells fewer than asked for in the run's time: the rest are written
        # straight into the event, signed by Admit's issuer with the event's key (as a sale
        # would sign them), so that every run verifies ``limit`` tickets.
        from bench.signed_redeem import load

        topped_up = limit - len(sold)
        asyncio.run(load(url, "signed", topped_up, signed=True))
        sold = secrets_of(url, "signed", limit)
    (code, _, revoked_secret), (block_code, block_id, blocked_secret) = sold[0], sold[1]
    httpx.post(f"{event}/orders/{code}/regenerate_secrets/", headers=headers).raise_for_status()
    httpx.post(
        f"{event}/orders/{block_code}/change/",
        json={"add_block": [{"position": block_id}]},
        headers=headers,
    ).raise_for_status()
    current = [s for _, _, s in secrets_of(url, "signed", limit)]
    revoked, blocked = (
        synced(base, token, "revokedsecrets", "secret"),
        synced(base, token, "blockedsecrets", "blocked"),
    )
    public = decoder.public_key(key)

    def verdict(secret: str, with_key=public) -> str:
        try:
            decoder.decode(secret, with_key)
        except decoder.Rejected as exc:
            return exc.reason
        return "revoked" if secret in revoked else "blocked" if secret in blocked else "ok"

    started = time.perf_counter()
    results = [verdict(s) for s in current]
    seconds = time.perf_counter() - started
    raw = bytearray(base64.b64decode(current[-1][::-1]))
    raw[9] ^= 0x01
    stranger = decoder.public_key(new_pair()[0])
    return {
        "verified": len(results),
        "verified_written_directly": topped_up,
        "verified_ok": results.count("ok"),
        "verified_blocked": results.count("blocked"),
        "verify_ms_per_ticket": round(seconds * 1000 / max(1, len(results)), 3),
        "flipped_byte": verdict(base64.b64encode(bytes(raw)).decode()[::-1]),
        "wrong_key": verdict(current[-1], stranger),
        "revoked_secret": verdict(revoked_secret),
        "blocked_secret": verdict(blocked_secret),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seconds", type=int, default=12, help="per kind, over all rounds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--verify", type=int, default=10_000)
    args = parser.parse_args()

    url = fresh_pg_database("admit_bench_signed")
    with tempfile.TemporaryDirectory() as data_dir:
        env = {"ADMIT_DATABASE_URL": url, "ADMIT_DATA_DIR": data_dir}
        admit(env, "migrate")
        token = demo_token(env)["token"]
        with server(env, workers=args.workers) as base:
            key = signed_clone(base, token)
            plain_item, _ = product_with_quota(base, token, 10**7, "Random")
            signed_item = _signed_product(base, token)
            seconds = max(2, args.seconds // args.rounds)
            for event, item in (("democon", plain_item), ("signed", signed_item)):  # warm-up
                phase(base, token, event, item, args.connections, 2)
            rounds = [
                (
                    phase(base, token, "democon", plain_item, args.connections, seconds),
                    phase(base, token, "signed", signed_item, args.connections, seconds),
                )
                for _ in range(args.rounds)
            ]
            plain = merged([p for p, _ in rounds], seconds)
            signed = merged([s for _, s in rounds], seconds)
            offline = verify_offline(base, token, url, key, args.verify)
    ratio = signed["successes_per_second"] / max(1.0, plain["successes_per_second"])
    result = {
        "benchmark": "signed_secrets",
        "workers": args.workers,
        "connections": args.connections,
        "random_orders_per_second": plain["successes_per_second"],
        "random_p50": plain["p50"],
        "random_p99": plain["p99"],
        "signed_orders_per_second": signed["successes_per_second"],
        "signed_p50": signed["p50"],
        "signed_p99": signed["p99"],
        "failed_requests": plain["non_2xx"] + signed["non_2xx"],
        "signed_ratio": round(ratio, 3),
        "round_ratios": [
            round(s["successes_per_second"] / max(1.0, p["successes_per_second"]), 3)
            for p, s in rounds
        ],
        **offline,
    }
    result["met"] = (
        ratio >= 0.9
        and result["failed_requests"] == 0
        and offline["verified_ok"] + offline["verified_blocked"] == offline["verified"]
        and offline["flipped_byte"] == "signature"
        and offline["wrong_key"] == "signature"
        and offline["revoked_secret"] == "revoked"
        and offline["blocked_secret"] == "blocked"
    )
    print(json.dumps(result))


def _signed_product(base: str, token: str) -> int:
    """A product with a big quota in the signed event."""
    headers = {"Authorization": f"Token {token}"}
    event = f"{base}/api/v1/organizers/demo/events/signed"
    item = httpx.post(
        f"{event}/items/",
        json={"name": {"en": "Signed"}, "default_price": "10.00", "admission": True},
        headers=headers,
        timeout=60,
    )
    item.raise_for_status()
    item_id = int(item.json()["id"])
    httpx.post(
        f"{event}/quotas/",
        json={"name": "Signed", "size": 10**7, "items": [item_id], "variations": []},
        headers=headers,
        timeout=60,
    ).raise_for_status()
    return item_id


if __name__ == "__main__":
    main()
