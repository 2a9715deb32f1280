"""Door rushes against a real server process with two workers (PostgreSQL only).

Scanners in separate API processes, each with its own database connections: only the
``(position, list, seq)`` uniqueness keeps two of them from admitting one ticket twice.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from tests.checkin import helpers as h
from tests.factories import auth
from tests.live import LiveServer

SCANNERS = 32
# Each round is one ticket scanned by every scanner at once: a second admission needs two of
# the 32 scans to overlap across the two processes, as they do in most rounds. 40 rounds (there
# were 100) keep many chances for it at less than half the time.
ROUNDS = 40


def _redeem_url(live: LiveServer) -> str:
    return f"/api/v1/organizers/{live.world.org.slug}/checkinrpc/redeem/"


def _outcome(response) -> str:
    body = response.json()
    return body["status"] if body["status"] != "error" else body["reason"]


async def test_32_scanners_one_ticket_40_rounds(live_server: LiveServer):
    live = live_server
    item = await h.ticket(live.factory, live.world.event)
    clist = await h.checkin_list(live.factory, live.world.event)
    _, positions = await h.order(live.factory, live.world.event, item, n=ROUNDS)
    headers = auth(live.world.admin)
    async with live.client(connections=SCANNERS) as client:
        for pos in positions:
            body = {"secret": pos.secret, "lists": [clist.id]}
            responses = await asyncio.gather(
                *(
                    client.post(_redeem_url(live), json=body, headers=headers)
                    for _ in range(SCANNERS)
                )
            )
            outcomes = Counter(_outcome(r) for r in responses)
            assert outcomes == {"ok": 1, "already_redeemed": SCANNERS - 1}, outcomes
            assert sorted(r.status_code for r in responses)[-1] == 201
    admitted = await live.scalar("SELECT count(*) FROM checkins WHERE successful")
    failed = await live.scalar("SELECT count(*) FROM checkins WHERE NOT successful")
    assert admitted == ROUNDS and failed == ROUNDS * (SCANNERS - 1)


async def test_repeated_nonce_creates_one_checkin(live_server: LiveServer):
    live = live_server
    item = await h.ticket(live.factory, live.world.event)
    clist = await h.checkin_list(live.factory, live.world.event)
    _, positions = await h.order(live.factory, live.world.event, item, n=10)
    headers = auth(live.world.admin)
    async with live.client(connections=SCANNERS) as client:
        for n, pos in enumerate(positions):
            body = {"secret": pos.secret, "lists": [clist.id], "nonce": f"retry-{n}"}
            responses = await asyncio.gather(
                *(
                    client.post(_redeem_url(live), json=body, headers=headers)
                    for _ in range(SCANNERS)
                )
            )
            assert Counter(_outcome(r) for r in responses) == {"ok": SCANNERS}
            assert {r.status_code for r in responses} == {201}
    admitted = await live.scalar("SELECT count(*) FROM checkins WHERE successful")
    assert admitted == len(positions)
    assert await live.scalar("SELECT count(*) FROM checkins") == len(positions)


async def test_ticket_admitted_once_per_list_in_multi_event_scans(live_server: LiveServer):
    live = live_server
    other_event = await live.factory.event(live.world.org, "afterparty")
    item = await h.ticket(live.factory, live.world.event)
    door = await h.checkin_list(live.factory, live.world.event, "Door")
    hall = await h.checkin_list(live.factory, live.world.event, "Hall")
    party = await h.checkin_list(live.factory, other_event, "Party")
    _, positions = await h.order(live.factory, live.world.event, item, n=20)
    headers = auth(live.world.admin)
    async with live.client(connections=SCANNERS) as client:
        for pos in positions:
            calls = []
            for i in range(SCANNERS):
                lists = [door.id, party.id] if i % 2 else [party.id, hall.id]
                body = {"secret": pos.secret, "lists": lists}
                calls.append(client.post(_redeem_url(live), json=body, headers=headers))
            responses = await asyncio.gather(*calls)
            by_list: dict[int, Counter] = {}
            for response in responses:
                by_list.setdefault(response.json()["list"]["id"], Counter())[
                    _outcome(response)
                ] += 1
            half = SCANNERS // 2
            assert by_list == {
                door.id: Counter({"ok": 1, "already_redeemed": half - 1}),
                hall.id: Counter({"ok": 1, "already_redeemed": half - 1}),
            }, by_list
    per_list = await live.scalar(
        "SELECT count(DISTINCT (position_id, list_id)) FROM checkins WHERE successful"
    )
    assert per_list == 2 * len(positions)
    assert await live.scalar("SELECT count(*) FROM checkins WHERE successful") == 2 * len(positions)
