"""Gift card transactions racing against a real server process with two workers (PostgreSQL).

Each request runs in its own API process and database connection; only the guarded UPDATE
keeps a card from going below zero and the history in step with the value.
"""

from __future__ import annotations

import random
from collections import Counter
from decimal import Decimal

from tests.factories import auth
from tests.giftcards.helpers import card, cards_url, ledger
from tests.live import LiveServer, gather_limited

CLIENTS = 64


async def test_64_debits_on_a_card_of_50_succeed_exactly_50_times(live_server: LiveServer):
    live = live_server
    gc = await card(live.factory, live.world.org, "50.00")
    url = cards_url(live.world.org, f"{gc.id}/transact/")
    headers = auth(live.world.admin)

    async with live.client(connections=CLIENTS) as client:
        responses = await gather_limited(
            [lambda: client.post(url, json={"value": "-1.00"}, headers=headers)] * 64, CLIENTS
        )

    statuses = Counter(r.status_code for r in responses)
    assert statuses == {200: 50, 409: 14}, statuses
    assert all(
        r.json() == {"value": ["The gift card does not have sufficient credit for this operation."]}
        for r in responses
        if r.status_code == 409
    )
    # Every success saw a distinct value on its way down from 49.00 to 0.00.
    seen = sorted(Decimal(r.json()["value"]) for r in responses if r.status_code == 200)
    assert seen == [Decimal(n) for n in range(50)]
    value, total, count = await ledger(live.factory, gc.id)
    assert value == Decimal("0.00") and total == Decimal("0.00")
    debits = await live.scalar(
        "SELECT count(*) FROM gift_card_transactions WHERE card_id = :id AND value < 0", id=gc.id
    )
    assert debits == 50 and count == 51  # 50 debits and the card's opening credit


async def test_mixed_credits_and_debits_stay_in_step(live_server: LiveServer):
    """Credits and debits of random sizes at once: the final value is the initial value plus
    the successful deltas, equals the sum of the history, and never went below zero."""
    live = live_server
    gc = await card(live.factory, live.world.org, "20.00")
    url = cards_url(live.world.org, f"{gc.id}/transact/")
    headers = auth(live.world.admin)
    rng = random.Random(6)
    deltas = [
        Decimal(rng.choice(["-7.50", "-3.25", "-1.00", "-0.01", "0.99", "2.00", "5.55"]))
        for _ in range(300)
    ]

    async with live.client(connections=CLIENTS) as client:

        def call(delta: Decimal):
            return lambda: client.post(url, json={"value": str(delta)}, headers=headers)

        responses = await gather_limited([call(d) for d in deltas], CLIENTS)

    statuses = Counter(r.status_code for r in responses)
    assert set(statuses) <= {200, 409}, statuses
    assert statuses[200] > 0 and statuses[409] > 0, statuses  # the race was real
    assert all(d < 0 for d, r in zip(deltas, responses, strict=True) if r.status_code == 409)
    assert all(Decimal(r.json()["value"]) >= 0 for r in responses if r.status_code == 200)
    applied = sum(
        (d for d, r in zip(deltas, responses, strict=True) if r.status_code == 200), Decimal(0)
    )
    value, total, count = await ledger(live.factory, gc.id)
    assert value == Decimal("20.00") + applied
    assert total == value
    assert count == 1 + statuses[200]
