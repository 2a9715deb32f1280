"""Seats rendered from rows (the GETs) answer byte for byte as the ORM path that PATCH
answers with (``Expansion.render`` over the seat objects): held by an order position, a cart
position, a voucher or nothing, blocked or not, with every ``expand`` and filter."""

from __future__ import annotations

import httpx
import orjson
import pytest

from tests.factories import Factory, World, auth
from tests.seating import helpers as h

EXPANDS = ("", "?expand=orderposition&expand=cartposition&expand=voucher", "?expand=voucher")


async def test_seats_render_as_the_orm_path(
    client: httpx.AsyncClient, world: World, factory: Factory
) -> None:
    a = auth(world.admin)
    stalls = await h.ticket(factory, world.event, "Stalls")
    await h.seated_event(factory, world.event, {"Stalls": stalls.id, "Balcony": None})
    sold = await h.order(
        client, world, [{"item": stalls.id, "seat": "1-1", "attendee_name": "Ada"}]
    )
    assert sold.status_code == 201, sold.text
    assert (await h.cart(client, world, stalls, "1-2")).status_code == 201
    voucher = await client.post(
        h.event_url(world.event, world.org, "vouchers/"),
        json={"code": "SEAT13", "item": stalls.id, "seat": "1-3"},
        headers=a,
    )
    assert voucher.status_code == 201, voucher.text
    seats = await h.seats(factory, world.event)
    blocked = next(s for s in seats if s.seat_guid == "2-1")
    await client.patch(h.seats_url(world, f"{blocked.id}/"), json={"blocked": True}, headers=a)
    expanded: dict[int, bytes] = {}
    for expand in EXPANDS:
        details = expanded if expand == EXPANDS[1] else {}
        for seat in seats:
            url = h.seats_url(world, f"{seat.id}/{expand}")
            rows = await client.get(url, headers=a)
            orm = await client.patch(url, json={}, headers=a)
            assert rows.status_code == orm.status_code == 200, (url, rows.text, orm.text)
            if rows.content != orm.content:
                pytest.fail(f"{url}: {rows.text} != {orm.text}")
            details[seat.id] = rows.content
        sep = "&" if expand else "?"
        for variant in (
            "",
            f"{sep}page_size=2&page=2",
            f"{sep}is_available=false",
            f"{sep}row_name=1",
        ):
            url = h.seats_url(world) + expand + variant
            listed = await client.get(url, headers=a)
            assert listed.status_code == 200, listed.text
            for result in listed.json()["results"]:
                assert orjson.dumps(result) == details[result["id"]], url
    held = [orjson.loads(expanded[s.id]) for s in seats]
    assert held[0]["orderposition"]["order"]["code"] == sold.json()["code"]
    assert held[1]["cartposition"]["seat"]["seat_guid"] == "1-2"
    assert held[2]["voucher"]["code"] == "SEAT13"
    missing = await client.get(h.seats_url(world, "99999/"), headers=a)
    assert missing.status_code == 404
