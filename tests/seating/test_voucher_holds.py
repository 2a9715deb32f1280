"""Vouchers reserving a seat (the vouchers package tells seating which seats they hold)."""

from __future__ import annotations

from tests.factories import auth
from tests.seating import helpers as h


async def test_a_seat_voucher_holds_the_seat_for_its_redeemer(client, world, factory):
    stalls = await h.ticket(factory, world.event, "Stalls")
    await h.seated_event(factory, world.event, {"Stalls": stalls.id})
    created = await client.post(
        h.event_url(world.event, world.org, "vouchers/"),
        json={"code": "SEAT11", "item": stalls.id, "seat": "1-1"},
        headers=auth(world.admin),
    )
    assert created.status_code == 201, created.text
    voucher = created.json()

    listed = await client.get(
        h.seats_url(world), params={"seat_guid": "1-1"}, headers=auth(world.admin)
    )
    assert listed.json()["results"][0]["voucher"] == voucher["id"]
    expanded = await client.get(
        h.seats_url(world),
        params={"seat_guid": "1-1", "expand": "voucher"},
        headers=auth(world.admin),
    )
    assert expanded.json()["results"][0]["voucher"]["code"] == "SEAT11"
    free = await client.get(
        h.seats_url(world), params={"is_available": "true"}, headers=auth(world.admin)
    )
    assert "1-1" not in [s["seat_guid"] for s in free.json()["results"]]

    assert (await h.cart(client, world, stalls, "1-1")).status_code == 400
    redeemed = await h.cart(client, world, stalls, "1-1", voucher="SEAT11")
    assert redeemed.status_code == 201, redeemed.text
