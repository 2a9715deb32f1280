"""Vouchers for one seat: the ``seat`` guid rules, the seat held by the voucher, and only the
voucher's holder buying it."""

from __future__ import annotations

from tests.factories import World, assert_field_errors, auth
from tests.seating import helpers as seating
from tests.vouchers import helpers as h


async def _seated(factory, world: World):
    stalls = await seating.ticket(factory, world.event)
    await seating.seated_event(factory, world.event, {"Stalls": stalls.id, "Balcony": None})
    return stalls


async def test_seat_voucher_rules_and_rendering(client, world: World, factory):
    stalls = await _seated(factory, world)
    post = lambda body: client.post(h.VOUCHERS, json=body, headers=auth(world.admin))  # noqa: E731
    assert (
        "does not exist"
        in assert_field_errors(await post({"seat": "9-9", "item": stalls.id}), "seat")["seat"][0]
    )
    assert_field_errors(await post({"seat": "1-1"}), "seat")  # needs the product
    assert_field_errors(await post({"seat": "1-1", "item": stalls.id, "max_usages": 2}), "seat")
    r = await post({"seat": "1-1", "item": stalls.id, "code": "SEAT11"})
    assert r.status_code == 201, r.text
    assert r.json()["seat"] == "1-1"
    # The seat is held by that voucher now: another voucher cannot take it.
    r = await post({"seat": "1-1", "item": stalls.id})
    assert "currently unavailable" in assert_field_errors(r, "seat")["seat"][0]
    seat = await seating.seat_by_guid(factory, world.event, "1-1")
    r = await client.get(seating.seats_url(world, f"{seat.id}/"), headers=auth(world.admin))
    assert r.json()["voucher"] is not None
    r = await client.get(
        seating.seats_url(world, f"{seat.id}/?expand=voucher"), headers=auth(world.admin)
    )
    assert r.status_code == 200, r.text
    assert r.json()["voucher"]["code"] == "SEAT11" and r.json()["voucher"]["seat"] == "1-1"


async def test_only_the_voucher_buys_its_seat(client, world: World, factory):
    stalls = await _seated(factory, world)
    r = await client.post(
        h.VOUCHERS,
        json={"seat": "1-2", "item": stalls.id, "code": "MYSEAT"},
        headers=auth(world.admin),
    )
    assert r.status_code == 201, r.text
    r = await seating.order(client, world, [{"item": stalls.id, "seat": "1-2"}])
    assert r.status_code == 400, r.text
    r = await seating.order(
        client, world, [{"item": stalls.id, "seat": "1-3", "voucher": "MYSEAT"}]
    )
    assert r.json()["positions"][0]["voucher"] == [
        "The specified voucher is not valid for this seat."
    ]
    r = await seating.order(
        client, world, [{"item": stalls.id, "seat": "1-2", "voucher": "MYSEAT"}]
    )
    assert r.status_code == 201, r.text
