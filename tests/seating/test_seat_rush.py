"""Seat rushes against a real server process with two workers (PostgreSQL only).

Clients in separate API processes, each with its own database connection, all want the same
seat: only the seat row lock taken before the holder check keeps it from being sold twice.
"""

from __future__ import annotations

import random
from collections import Counter

from admit.models import Item, ItemVariation
from tests.factories import auth
from tests.live import LiveServer, gather_limited
from tests.seating import helpers as h

CLIENTS = 50


def _url(live: LiveServer, suffix: str) -> str:
    return f"/api/v1/organizers/{live.world.org.slug}/events/{live.world.event.slug}/{suffix}"


async def _holders(live: LiveServer, guid: str) -> int:
    """Live holders of a seat, counted straight from the database."""
    return await live.scalar(
        "SELECT (SELECT count(*) FROM order_positions p JOIN orders o ON o.id = p.order_id "
        "        WHERE p.seat_id = s.id AND o.status IN ('n', 'p') AND NOT p.canceled)"
        "     + (SELECT count(*) FROM cart_positions c"
        "        WHERE c.seat_id = s.id AND c.expires >= now())"
        " FROM seats s WHERE s.event_id = :event AND s.seat_guid = :guid",
        event=live.world.event.id,
        guid=guid,
    )


async def _two_quota_ticket(
    live: LiveServer, layout: dict | None = None
) -> tuple[Item, list[ItemVariation]]:
    """A seated ticket whose two variations count against two different quotas: buyers of
    the same seat then lock different quota rows, and only the seat lock stands between them."""
    factory, event = live.factory, live.world.event
    ticket = await factory._add(Item(event_id=event.id, name={"en": "Stalls"}))
    variations = [
        await factory._add(ItemVariation(item_id=ticket.id, value={"en": v}))
        for v in ("Adult", "Child")
    ]
    for variation in variations:
        await factory.quota(event, 1000, items=[ticket], variations=[variation])
    await h.seated_event(factory, event, {"Stalls": ticket.id}, layout)
    return ticket, variations  # type: ignore[return-value]


async def _rush(
    live: LiveServer, client, item: Item, variations: list[ItemVariation], guid: str
) -> tuple[Counter, list]:
    headers = auth(live.world.admin)

    def request(i: int):
        position = {"item": item.id, "variation": variations[(i // 2) % 2].id, "seat": guid}
        if i % 2:
            cart = {**position, "price": "30.00"}
            return lambda: client.post(_url(live, "cartpositions/"), json=cart, headers=headers)
        order = {"email": "fan@example.org", "positions": [position]}
        return lambda: client.post(_url(live, "orders/"), json=order, headers=headers)

    responses = await gather_limited([request(i) for i in range(CLIENTS)], CLIENTS)
    return Counter(r.status_code for r in responses), responses


async def test_50_buyers_of_one_seat_one_wins_and_a_canceled_seat_sells_again(
    live_server: LiveServer,
):
    live = live_server
    ticket, variations = await _two_quota_ticket(live)

    async with live.client(connections=CLIENTS) as client:
        statuses, responses = await _rush(live, client, ticket, variations, "1-1")
        assert statuses == {201: 1, 400: CLIENTS - 1}, statuses
        assert await _holders(live, "1-1") == 1
        [winner] = [r for r in responses if r.status_code == 201]
        if "code" in winner.json():  # an order won: cancel it
            code = winner.json()["code"]
            response = await client.post(
                _url(live, f"orders/{code}/mark_canceled/"), headers=auth(live.world.admin)
            )
        else:  # a cart won: delete it
            response = await client.delete(
                _url(live, f"cartpositions/{winner.json()['id']}/"),
                headers=auth(live.world.admin),
            )
        assert response.status_code in (200, 204), response.text
        assert await _holders(live, "1-1") == 0

        statuses, _ = await _rush(live, client, ticket, variations, "1-1")
        assert statuses == {201: 1, 400: CLIENTS - 1}, statuses
        assert await _holders(live, "1-1") == 1


async def test_overlapping_multi_seat_orders_never_double_sell_or_deadlock(
    live_server: LiveServer,
):
    """Orders for two seats each, named in random order, over few seats: seats are locked in
    id order, so no deadlock (no 5xx, no 409), and no seat ends up with two holders."""
    live = live_server
    rows = {"1": [f"{n}:Stalls" for n in range(1, 7)]}
    ticket, variations = await _two_quota_ticket(live, h.layout(rows))
    guids = [f"1-{n}" for n in range(1, 7)]
    rng = random.Random(7)
    headers = auth(live.world.admin)

    async with live.client(connections=CLIENTS) as client:

        def request():
            pair = rng.sample(guids, 2)
            body = {
                "email": "fan@example.org",
                "positions": [
                    {"item": ticket.id, "variation": rng.choice(variations).id, "seat": g}
                    for g in pair
                ],
            }
            return lambda: client.post(_url(live, "orders/"), json=body, headers=headers)

        responses = await gather_limited([request() for _ in range(80)], CLIENTS)

    statuses = Counter(r.status_code for r in responses)
    assert set(statuses) <= {201, 400}, statuses
    assert 1 <= statuses[201] <= 3, statuses
    for guid in guids:
        assert await _holders(live, guid) <= 1
    sold = await live.scalar("SELECT count(*) FROM order_positions WHERE seat_id IS NOT NULL")
    assert sold == 2 * statuses[201]
