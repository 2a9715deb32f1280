"""Seats in order changes: moving a position to another seat, swapping seats within the order,
a seat held elsewhere refused (nothing changed), new positions with seats, seats freed."""

from __future__ import annotations

import pytest

from tests.factories import auth
from tests.orders import helpers as oh
from tests.seating import helpers as h

TAKEN = 'The selected seat "Ground floor, Row 1, Seat {n}" is not available.'


@pytest.fixture
async def stalls(world, factory):
    item = await h.ticket(factory, world.event, "Stalls")
    await h.seated_event(factory, world.event, {"Stalls": item.id, "Balcony": None})
    return item


def _guids(order: dict) -> list[str | None]:
    return [p["seat"]["seat_guid"] if p["seat"] else None for p in order["positions"]]


async def _change(client, world, code: str, body: dict):
    return await client.post(f"{oh.url(world)}{code}/change/", json=body, headers=auth(world.admin))


async def test_move_swap_and_refuse_seats(client, world, stalls):
    r = await h.order(
        client, world, [{"item": stalls.id, "seat": "1-1"}, {"item": stalls.id, "seat": "1-2"}]
    )
    assert r.status_code == 201, r.text
    order = r.json()
    a, b = (p["id"] for p in order["positions"])
    moved = await _change(
        client,
        world,
        order["code"],
        {"patch_positions": [{"position": a, "body": {"seat": "1-3"}}]},
    )
    assert moved.status_code == 200, moved.text
    assert _guids(moved.json()) == ["1-3", "1-2"]
    # 1-1 is free again: someone else can buy it.
    other = await h.order(client, world, [{"item": stalls.id, "seat": "1-1"}])
    assert other.status_code == 201, other.text
    swapped = await _change(
        client,
        world,
        order["code"],
        {
            "patch_positions": [
                {"position": a, "body": {"seat": "1-2"}},
                {"position": b, "body": {"seat": "1-3"}},
            ]
        },
    )
    assert swapped.status_code == 200, swapped.text
    assert _guids(swapped.json()) == ["1-2", "1-3"]
    refused = await _change(
        client,
        world,
        order["code"],
        {
            "cancel_positions": [{"position": b}],
            "patch_positions": [{"position": a, "body": {"seat": "1-1"}}],
        },
    )
    assert refused.status_code == 400
    assert refused.json() == {"non_field_errors": [TAKEN.format(n=1)]}
    detail = await client.get(f"{oh.url(world)}{order['code']}/", headers=auth(world.admin))
    assert _guids(detail.json()) == ["1-2", "1-3"]
    assert not any(p["canceled"] for p in detail.json()["positions"])


async def test_new_positions_and_seat_rules(client, world, stalls):
    r = await h.order(client, world, [{"item": stalls.id, "seat": "1-1"}])
    order = r.json()
    pid = order["positions"][0]["id"]
    needs_seat = await _change(
        client, world, order["code"], {"create_positions": [{"item": stalls.id}]}
    )
    assert needs_seat.status_code == 400
    assert "seat" in needs_seat.json()["create_positions"][0]
    unknown = await _change(
        client,
        world,
        order["code"],
        {"patch_positions": [{"position": pid, "body": {"seat": "9-9"}}]},
    )
    assert unknown.json() == {
        "patch_positions": [{"body": {"seat": ["The specified seat does not exist."]}}]
    }
    added = await _change(
        client, world, order["code"], {"create_positions": [{"item": stalls.id, "seat": "1-2"}]}
    )
    assert added.status_code == 200, added.text
    assert _guids(added.json()) == ["1-1", "1-2"]
    twice = await _change(
        client, world, order["code"], {"create_positions": [{"item": stalls.id, "seat": "1-2"}]}
    )
    assert twice.json() == {"non_field_errors": [TAKEN.format(n=2)]}
    canceled = await _change(
        client, world, order["code"], {"cancel_positions": [{"position": pid}]}
    )
    assert canceled.status_code == 200
    again = await h.order(client, world, [{"item": stalls.id, "seat": "1-1"}])
    assert again.status_code == 201, again.text
