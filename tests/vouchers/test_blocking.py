"""Vouchers that block quota: what they hold, the capacity check, and sales redeeming them."""

from __future__ import annotations

import datetime as dt

from admit.db import utcnow
from tests.factories import World, assert_field_errors, auth
from tests.vouchers import helpers as h

SOLD_OUT = (
    "You cannot create a voucher that blocks quota as the selected product or quota is "
    "currently sold out or completely reserved."
)


async def _quota_state(client, world: World, quota_id: int) -> dict:
    r = await client.get(f"{h.QUOTAS}{quota_id}/availability/", headers=auth(world.admin))
    assert r.status_code == 200, r.text
    return r.json()


async def test_blocking_voucher_holds_its_unused_usages(client, world: World, factory):
    ticket = await h.item(factory, world.event)
    q = await h.quota(factory, world.event, 10, [ticket])
    r = await client.post(
        h.VOUCHERS,
        json={"item": ticket.id, "block_quota": True, "max_usages": 3},
        headers=auth(world.admin),
    )
    assert r.status_code == 201, r.text
    state = await _quota_state(client, world, q.id)
    assert state["blocking_vouchers"] == 3 and state["available_number"] == 7
    # A quota-restricted voucher holds in that quota.
    r = await client.post(
        h.VOUCHERS, json={"quota": q.id, "block_quota": True}, headers=auth(world.admin)
    )
    assert r.status_code == 201, r.text
    assert (await _quota_state(client, world, q.id))["available_number"] == 6


async def test_blocking_needs_a_product_and_a_variation(client, world: World, factory):
    shirt = await h.item(factory, world.event, "Shirt")
    await h.variation(factory, shirt)
    plain = await h.item(factory, world.event, "No quota")
    post = lambda body: client.post(h.VOUCHERS, json=body, headers=auth(world.admin))  # noqa: E731
    r = await post({"block_quota": True})
    assert (
        "specific product or quota"
        in assert_field_errors(r, "non_field_errors")["non_field_errors"][0]
    )
    r = await post({"block_quota": True, "item": shirt.id})
    assert "variation" in assert_field_errors(r, "non_field_errors")["non_field_errors"][0]
    r = await post({"block_quota": True, "item": plain.id})
    assert "not assigned to a quota" in r.json()["non_field_errors"][0]


async def test_no_room_is_refused_and_allow_ignore_quota_skips_the_check(
    client, world: World, factory
):
    ticket = await h.item(factory, world.event)
    q = await h.quota(factory, world.event, 2, [ticket])
    body = {"item": ticket.id, "block_quota": True, "max_usages": 3}
    r = await client.post(h.VOUCHERS, json=body, headers=auth(world.admin))
    assert assert_field_errors(r, "non_field_errors")["non_field_errors"] == [SOLD_OUT]
    r = await client.post(
        h.VOUCHERS, json={**body, "allow_ignore_quota": True}, headers=auth(world.admin)
    )
    assert r.status_code == 201, r.text
    assert (await _quota_state(client, world, q.id))["available_number"] == 0


async def test_expired_voucher_holds_nothing(client, world: World, factory):
    ticket = await h.item(factory, world.event)
    q = await h.quota(factory, world.event, 5, [ticket])
    past = utcnow() - dt.timedelta(hours=1)
    await h.voucher(
        factory,
        world.event,
        "OLDIE1",
        item_id=ticket.id,
        block_quota=True,
        max_usages=5,
        valid_until=past,
    )
    assert (await _quota_state(client, world, q.id))["blocking_vouchers"] == 0


async def test_patch_growth_needs_room_shrinking_does_not(client, world: World, factory):
    ticket = await h.item(factory, world.event)
    q = await h.quota(factory, world.event, 4, [ticket])
    r = await client.post(
        h.VOUCHERS,
        json={"item": ticket.id, "block_quota": True, "max_usages": 3},
        headers=auth(world.admin),
    )
    url = f"{h.VOUCHERS}{r.json()['id']}/"
    # Its own block counts as its own: growing from 3 to 4 needs one more unit.
    r = await client.patch(url, json={"max_usages": 4}, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    r = await client.patch(url, json={"max_usages": 5}, headers=auth(world.admin))
    assert assert_field_errors(r, "non_field_errors")["non_field_errors"] == [SOLD_OUT]
    r = await client.patch(url, json={"max_usages": 1}, headers=auth(world.admin))
    assert r.status_code == 200
    assert (await _quota_state(client, world, q.id))["available_number"] == 3
    r = await client.patch(url, json={"block_quota": False}, headers=auth(world.admin))
    assert (await _quota_state(client, world, q.id))["available_number"] == 4


async def test_batch_is_all_or_nothing(client, world: World, factory):
    ticket = await h.item(factory, world.event)
    q = await h.quota(factory, world.event, 3, [ticket])
    entry = {"item": ticket.id, "block_quota": True, "max_usages": 2}
    r = await client.post(
        f"{h.VOUCHERS}batch_create/", json=[entry, entry], headers=auth(world.admin)
    )
    assert r.status_code == 400, r.text
    assert r.json() == [{}, {"non_field_errors": [SOLD_OUT]}]
    assert (await client.get(h.VOUCHERS, headers=auth(world.admin))).json()["count"] == 0
    r = await client.post(
        f"{h.VOUCHERS}batch_create/",
        json=[entry, {**entry, "max_usages": 1}],
        headers=auth(world.admin),
    )
    assert r.status_code == 201, r.text
    assert len(r.json()) == 2
    assert (await _quota_state(client, world, q.id))["available_number"] == 0


async def test_batch_rejects_duplicate_codes_and_lists_errors(client, world: World, factory):
    await h.voucher(factory, world.event, "TAKEN1")
    body = [{"code": "NEWONE"}, {"code": "newone"}, {"code": "taken1"}, {"max_usages": "x"}, 5]
    r = await client.post(f"{h.VOUCHERS}batch_create/", json=body, headers=auth(world.admin))
    assert r.status_code == 400, r.text
    errors = r.json()
    assert errors[0] == {}
    assert "max_usages" in errors[3] and "non_field_errors" in errors[4]
    body = body[:3]
    r = await client.post(f"{h.VOUCHERS}batch_create/", json=body, headers=auth(world.admin))
    assert r.json() == [
        {},
        {"code": ["This code is used by another voucher in this request."]},
        {"code": ["A voucher with this code already exists."]},
    ]
    r = await client.post(f"{h.VOUCHERS}batch_create/", json={}, headers=auth(world.admin))
    assert r.status_code == 400


async def test_order_with_blocking_voucher_moves_the_unit(client, world: World, factory):
    ticket = await h.item(factory, world.event)
    q = await h.quota(factory, world.event, 2, [ticket])
    r = await client.post(
        h.VOUCHERS,
        json={"code": "HOLDME", "item": ticket.id, "block_quota": True, "max_usages": 2},
        headers=auth(world.admin),
    )
    assert r.status_code == 201
    # Sold out for everyone else ...
    r = await client.post(h.ORDERS, json=h.order_body(ticket.id), headers=auth(world.admin))
    assert r.status_code == 400
    # ... but the voucher's holder gets in.
    r = await client.post(
        h.ORDERS, json=h.order_body(ticket.id, voucher="holdme"), headers=auth(world.admin)
    )
    assert r.status_code == 201, r.text
    state = await _quota_state(client, world, q.id)
    assert state["pending_orders"] == 1 and state["blocking_vouchers"] == 1
    assert state["available_number"] == 0
    r = await client.post(
        h.CARTS,
        json={"item": ticket.id, "price": "5.00", "voucher": "HOLDME"},
        headers=auth(world.admin),
    )
    assert r.status_code == 201, r.text
    state = await _quota_state(client, world, q.id)
    assert state["cart_positions"] == 1 and state["blocking_vouchers"] == 0
    assert state["available_number"] == 0


async def test_allow_ignore_quota_sells_past_the_quota(client, world: World, factory):
    ticket = await h.item(factory, world.event)
    q = await h.quota(factory, world.event, 0, [ticket])
    await h.voucher(factory, world.event, "VIPVIP", allow_ignore_quota=True, max_usages=2)
    r = await client.post(
        h.ORDERS, json=h.order_body(ticket.id, 2, voucher="VIPVIP"), headers=auth(world.admin)
    )
    assert r.status_code == 201, r.text
    assert (await _quota_state(client, world, q.id))["pending_orders"] == 2


async def test_series_needs_a_date_to_block(client, world: World, factory):
    series = await factory.event(world.org, "series", has_subevents=True)
    ticket = await h.item(factory, series)
    date = await h.subevent(factory, series)
    await h.quota(factory, series, 5, [ticket], subevent_=date)
    url = "/api/v1/organizers/acme/events/series/vouchers/"
    body = {"item": ticket.id, "block_quota": True}
    r = await client.post(url, json=body, headers=auth(world.admin))
    assert "specific date" in assert_field_errors(r, "non_field_errors")["non_field_errors"][0]
    r = await client.post(url, json={**body, "subevent": date.id}, headers=auth(world.admin))
    assert r.status_code == 201, r.text
