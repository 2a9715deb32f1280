"""Seats in cart positions and orders: resolution, the rules, one holder per seat, freeing."""

from __future__ import annotations

import pytest

from tests.carts import helpers as carts
from tests.factories import assert_field_errors, auth
from tests.seating import helpers as h

SEAT_1_1 = {
    "name": "Ground floor, Row 1, Seat 1",
    "zone_name": "Ground floor",
    "row_name": "1",
    "row_label": None,
    "seat_number": "1",
    "seat_label": None,
    "seat_guid": "1-1",
}


@pytest.fixture
async def stalls(world, factory):
    item = await h.ticket(factory, world.event, "Stalls")
    await h.seated_event(factory, world.event, {"Stalls": item.id, "Balcony": None})
    return item


def _seat_errors(response, nested: str | None = None) -> list[str]:
    assert response.status_code == 400, response.text
    body = response.json()
    if nested is None:
        return body["seat"]
    return next(e["seat"] for e in body[nested] if e)


async def test_cart_position_with_a_seat(client, world, factory, stalls):
    response = await h.cart(client, world, stalls, "1-1")
    assert response.status_code == 201, response.text
    seat = await h.seat_by_guid(factory, world.event, "1-1")
    assert response.json()["seat"] == {"id": seat.id, **SEAT_1_1}
    detail = await client.get(
        carts.url(world, suffix=f"{response.json()['id']}/"), headers=auth(world.admin)
    )
    assert detail.json()["seat"] == response.json()["seat"]
    listed = await client.get(carts.url(world), headers=auth(world.admin))
    assert listed.json()["results"][0]["seat"]["seat_guid"] == "1-1"


async def test_a_seat_is_taken_once(client, world, stalls):
    assert (await h.cart(client, world, stalls, "1-1")).status_code == 201
    again = await h.cart(client, world, stalls, "1-1")
    assert _seat_errors(again) == [
        'The selected seat "Ground floor, Row 1, Seat 1" is not available.'
    ]
    order = await h.order(client, world, [{"item": stalls.id, "seat": "1-1"}])
    assert order.status_code == 400
    assert order.json() == {
        "positions": [
            {"seat": ['The selected seat "Ground floor, Row 1, Seat 1" is not available.']}
        ]
    }
    assert (await h.order(client, world, [{"item": stalls.id, "seat": "1-2"}])).status_code == 201
    assert (await h.cart(client, world, stalls, "1-2")).status_code == 400


async def test_seat_rules(client, world, factory, stalls):
    balcony_ticket = await h.ticket(factory, world.event, "Balcony ticket")
    unknown = await h.cart(client, world, stalls, "nope")
    assert _seat_errors(unknown) == ["The specified seat does not exist."]
    required = await h.cart(client, world, stalls, None)
    assert _seat_errors(required) == ['The product "Stalls" requires a seat. Please specify one.']
    wrong_product = await h.cart(client, world, stalls, "2-1")
    assert _seat_errors(wrong_product) == [
        'The seat "Ground floor, Row 2, Seat 1" is not available for this product.'
    ]
    unmapped = await h.cart(client, world, balcony_ticket, "1-1")
    assert "not available for this product" in _seat_errors(unmapped)[0]
    # A product not sold with seats needs none.
    assert (await h.cart(client, world, balcony_ticket, None)).status_code == 201

    seat = await h.seat_by_guid(factory, world.event, "1-3")
    await client.patch(
        h.seats_url(world, f"{seat.id}/"), json={"blocked": True}, headers=auth(world.admin)
    )
    blocked = await h.cart(client, world, stalls, "1-3")
    assert "is not available" in _seat_errors(blocked)[0]
    order = await h.order(client, world, [{"item": stalls.id, "seat": "1-3"}], force=True)
    assert order.status_code == 400  # force ignores quota, never seats


async def test_one_request_cannot_name_a_seat_twice(client, world, stalls):
    response = await h.order(
        client, world, [{"item": stalls.id, "seat": "1-1"}, {"item": stalls.id, "seat": "1-1"}]
    )
    assert response.status_code == 400
    assert response.json()["positions"][0] == {}
    assert "selected more than once" in response.json()["positions"][1]["seat"][0]

    addon = await h.cart(
        client, world, stalls, "1-1", addons=[{"item": stalls.id, "price": "1.00", "seat": "1-1"}]
    )
    assert "selected more than once" in _seat_errors(addon, "addons")[0]


async def test_nested_positions_take_seats(client, world, factory, stalls):
    response = await h.cart(
        client, world, stalls, "1-1", addons=[{"item": stalls.id, "price": "1.00", "seat": "1-2"}]
    )
    assert response.status_code == 201, response.text
    assert response.json()["addons"][0]["seat"]["seat_guid"] == "1-2"
    listed = await client.get(carts.url(world), headers=auth(world.admin))
    assert listed.json()["results"][0]["addons"][0]["seat"]["seat_guid"] == "1-2"
    taken = await h.cart(
        client, world, stalls, "1-3", addons=[{"item": stalls.id, "price": "1.00", "seat": "1-2"}]
    )
    assert "is not available" in _seat_errors(taken, "addons")[0]


async def test_order_positions_show_their_seat(client, world, factory, stalls):
    response = await h.order(client, world, [{"item": stalls.id, "seat": "1-1"}])
    assert response.status_code == 201, response.text
    seat = await h.seat_by_guid(factory, world.event, "1-1")
    position = response.json()["positions"][0]
    assert position["seat"] == {"id": seat.id, **SEAT_1_1}
    code = response.json()["code"]
    detail = await client.get(
        h.event_url(world.event, world.org, f"orders/{code}/"), headers=auth(world.admin)
    )
    assert detail.json()["positions"][0]["seat"] == position["seat"]
    one = await client.get(
        h.event_url(world.event, world.org, f"orderpositions/{position['id']}/"),
        headers=auth(world.admin),
    )
    assert one.json()["seat"] == position["seat"]
    listed = await client.get(
        h.event_url(world.event, world.org, "orders/"), headers=auth(world.admin)
    )
    assert listed.json()["results"][0]["positions"][0]["seat"] == position["seat"]


async def test_canceling_frees_the_seat_and_reactivation_needs_it(client, world, stalls):
    first = await h.order(client, world, [{"item": stalls.id, "seat": "1-1"}])
    code = first.json()["code"]
    actions = h.event_url(world.event, world.org, f"orders/{code}/")
    canceled = await client.post(actions + "mark_canceled/", headers=auth(world.admin))
    assert canceled.status_code == 200, canceled.text
    again = await h.order(client, world, [{"item": stalls.id, "seat": "1-1"}])
    assert again.status_code == 201, again.text

    refused = await client.post(actions + "reactivate/", headers=auth(world.admin))
    assert refused.status_code == 400
    assert "is not available" in refused.json()["detail"]

    # Once the new holder lets go, the first order can come back.
    await client.post(
        h.event_url(world.event, world.org, f"orders/{again.json()['code']}/mark_canceled/"),
        headers=auth(world.admin),
    )
    assert (
        await client.post(actions + "reactivate/", headers=auth(world.admin))
    ).status_code == 200
    assert (await h.cart(client, world, stalls, "1-1")).status_code == 400


async def test_expired_order_paid_later_needs_its_seat(client, world, stalls):
    first = await h.order(client, world, [{"item": stalls.id, "seat": "1-1"}])
    actions = h.event_url(world.event, world.org, f"orders/{first.json()['code']}/")
    assert (
        await client.post(actions + "mark_expired/", headers=auth(world.admin))
    ).status_code == 200
    assert (await h.cart(client, world, stalls, "1-1")).status_code == 201
    refused = await client.post(actions + "mark_paid/", headers=auth(world.admin))
    assert refused.status_code == 400
    refused = await client.post(
        actions + "extend/", json={"expires": "2031-01-01"}, headers=auth(world.admin)
    )
    assert refused.status_code == 400


async def test_cart_expiry_and_deletion_free_the_seat(client, world, factory, stalls):
    held = await h.cart(client, world, stalls, "1-1")
    await carts.expire(factory, held.json()["id"])
    again = await h.cart(client, world, stalls, "1-1")
    assert again.status_code == 201, again.text
    deleted = await client.delete(
        carts.url(world, suffix=f"{again.json()['id']}/"), headers=auth(world.admin)
    )
    assert deleted.status_code == 204
    assert (await h.order(client, world, [{"item": stalls.id, "seat": "1-1"}])).status_code == 201


async def test_canceling_one_position_frees_its_seat(client, world, stalls):
    order = await h.order(
        client, world, [{"item": stalls.id, "seat": "1-1"}, {"item": stalls.id, "seat": "1-2"}]
    )
    position = order.json()["positions"][1]["id"]
    response = await client.delete(
        h.event_url(world.event, world.org, f"orderpositions/{position}/"),
        headers=auth(world.admin),
    )
    assert response.status_code == 204, response.text
    assert (await h.cart(client, world, stalls, "1-2")).status_code == 201
    assert (await h.cart(client, world, stalls, "1-1")).status_code == 400


async def test_bulk_create_gives_a_seat_to_one_entry(client, world, stalls):
    entry = {"item": stalls.id, "price": "30.00", "seat": "1-1"}
    response = await client.post(
        carts.url(world, suffix="bulk_create/"),
        json=[entry, entry, {**entry, "seat": "1-2"}],
        headers=auth(world.admin),
    )
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["success"] for r in results] == [True, False, True]
    assert "is not available" in results[1]["errors"]["seat"][0]
    assert results[2]["data"]["seat"]["seat_guid"] == "1-2"


async def test_dates_sell_their_own_seats(client, world, factory):
    series = await factory.event(world.org, "tour", has_subevents=True)
    ticket = await h.ticket(factory, series, "Stalls")
    plan = await h.plan(factory, world.org)
    one = await h.subevent(factory, series, "One")
    two = await h.subevent(factory, series, "Two")
    plain = await h.subevent(factory, series, "No plan")
    for date in (one, two):
        await client.patch(
            h.event_url(series, world.org, f"subevents/{date.id}/"),
            json={"seating_plan": plan.id, "seat_category_mapping": {"Stalls": ticket.id}},
            headers=auth(world.admin),
        )
    for date in (one, two):
        await factory.quota(series, 10, items=[ticket], subevent=date)
    await factory.quota(series, 10, items=[ticket], subevent=plain)
    url = h.event_url(series, world.org, "cartpositions/")

    async def cart(date, seat):
        body = {"item": ticket.id, "price": "1.00", "subevent": date.id, "seat": seat}
        return await client.post(url, json=body, headers=auth(world.admin))

    assert (await cart(one, "1-1")).status_code == 201
    assert (await cart(two, "1-1")).status_code == 201  # the same guid on another date
    assert (await cart(one, "1-1")).status_code == 400
    assert (await cart(plain, None)).status_code == 201  # no plan on that date: no seat needed
    missing = await cart(plain, "1-1")
    assert missing.json()["seat"] == ["The specified seat does not exist."]
    required = await cart(two, None)
    assert "requires a seat" in required.json()["seat"][0]


async def test_seat_input_must_be_a_string(client, world, stalls):
    response = await h.cart(client, world, stalls, 11)
    assert_field_errors(response, "seat")
    response = await h.order(client, world, [{"item": stalls.id, "seat": ["1-1"]}])
    assert response.status_code == 400


async def test_simulated_order_shows_the_seat_but_keeps_it_free(client, world, stalls):
    response = await h.order(client, world, [{"item": stalls.id, "seat": "1-1"}], simulate=True)
    assert response.status_code == 201, response.text
    assert response.json()["positions"][0]["seat"]["seat_guid"] == "1-1"
    assert (await h.cart(client, world, stalls, "1-1")).status_code == 201
