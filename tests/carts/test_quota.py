"""Cart positions take quota: exhaustion, expiry, all-or-nothing requests, purging."""

from __future__ import annotations

import datetime as dt

from admit.carts.service import purge_expired
from tests.carts import helpers as h


async def test_third_position_in_a_quota_of_two_is_refused(client, world, factory):
    ticket = await h.item(factory, world.event)
    quota = await h.quota(factory, world.event, 2, [ticket], name="Main")
    for _ in range(2):
        response = await h.post(client, world, {"item": ticket.id, "price": "1"})
        assert response.status_code == 201, response.text
    assert await h.available(factory, quota) == 0
    response = await h.post(client, world, {"item": ticket.id, "price": "1"})
    body = h.errors(response, "non_field_errors")
    assert body["non_field_errors"] == ['There are no more tickets available in the quota "Main".']
    assert await h.cart_rows(factory) == 2


async def test_expired_positions_free_capacity_at_once(client, world, factory):
    ticket = await h.item(factory, world.event)
    quota = await h.quota(factory, world.event, 2, [ticket])
    ids = []
    for _ in range(2):
        response = await h.post(client, world, {"item": ticket.id, "price": "1"})
        ids.append(response.json()["id"])
    assert (await h.post(client, world, {"item": ticket.id, "price": "1"})).status_code == 400
    await h.expire(factory, ids[0])
    assert await h.available(factory, quota) == 1
    response = await h.post(client, world, {"item": ticket.id, "price": "1"})
    assert response.status_code == 201, response.text
    assert await h.cart_rows(factory) == 3  # the expired row is still there until purged


async def test_parent_with_addons_is_all_or_nothing(client, world, factory):
    ticket = await h.item(factory, world.event, "Ticket")
    shirt = await h.item(factory, world.event, "Shirt")
    tickets = await h.quota(factory, world.event, 5, [ticket], name="Tickets")
    shirts = await h.quota(factory, world.event, 1, [shirt], name="Shirts")
    two_shirts = {
        "item": ticket.id,
        "price": "10",
        "addons": [{"item": shirt.id, "price": "1"}, {"item": shirt.id, "price": "1"}],
    }
    body = h.errors(await h.post(client, world, two_shirts), "non_field_errors")
    assert body["non_field_errors"] == [
        'Only 1 tickets are left in the quota "Shirts", fewer than requested.'
    ]
    assert await h.cart_rows(factory) == 0
    assert await h.available(factory, tickets) == 5
    one_shirt = {**two_shirts, "addons": two_shirts["addons"][:1]}
    assert (await h.post(client, world, one_shirt)).status_code == 201
    assert await h.available(factory, tickets) == 4
    assert await h.available(factory, shirts) == 0
    # The ticket quota has room, the shirt quota not: nothing of the request is written.
    assert (await h.post(client, world, one_shirt)).status_code == 400
    assert await h.available(factory, tickets) == 4
    assert await h.cart_rows(factory) == 2


async def test_item_in_two_quotas_needs_both(client, world, factory):
    ticket = await h.item(factory, world.event)
    await h.quota(factory, world.event, 10, [ticket], name="Big")
    await h.quota(factory, world.event, 1, [ticket], name="Small")
    assert (await h.post(client, world, {"item": ticket.id, "price": "1"})).status_code == 201
    response = await h.post(client, world, {"item": ticket.id, "price": "1"})
    assert h.errors(response, "non_field_errors")["non_field_errors"][0].endswith('"Small".')


async def test_product_without_quota(client, world, factory):
    ticket = await h.item(factory, world.event, "Ticket")
    loose = await h.item(factory, world.event, "Loose")
    await h.quota(factory, world.event, 5, [ticket])
    body = h.errors(
        await h.post(client, world, {"item": loose.id, "price": "1"}), "non_field_errors"
    )
    assert body["non_field_errors"] == ['The product "Loose" is not assigned to a quota.']
    request = {
        "item": ticket.id,
        "price": "1",
        "addons": [{"item": ticket.id, "price": "1"}, {"item": loose.id, "price": "1"}],
    }
    body = h.errors(await h.post(client, world, request), "addons")
    assert body["addons"] == [
        {},
        {"non_field_errors": ['The product "Loose" is not assigned to a quota.']},
    ]
    assert await h.cart_rows(factory) == 0


async def test_quota_of_another_date_does_not_count(client, world, factory):
    series = await factory.event(world.org, "series", has_subevents=True)
    ticket = await h.item(factory, series)
    first, second = await h.subevent(factory, series), await h.subevent(factory, series)
    await h.quota(factory, series, 1, [ticket], subevent_=first)
    body = {"item": ticket.id, "price": "1", "subevent": second.id}
    response = await h.post(client, world, body, series)
    assert h.errors(response, "non_field_errors")["non_field_errors"][0].endswith(
        "is not assigned to a quota."
    )
    body["subevent"] = first.id
    assert (await h.post(client, world, body, series)).status_code == 201


async def test_unlimited_quota(client, world, factory):
    ticket = await h.item(factory, world.event)
    quota = await h.quota(factory, world.event, None, [ticket])
    for _ in range(3):
        assert (await h.post(client, world, {"item": ticket.id, "price": "1"})).status_code == 201
    assert await h.available(factory, quota) is None


async def test_purge_expired_deletes_only_expired_rows(client, world, factory):
    ticket = await h.item(factory, world.event)
    text = await h.question(factory, world.event, "S", [ticket])
    quota = await h.quota(factory, world.event, 5, [ticket])
    request = {
        "item": ticket.id,
        "price": "1",
        "answers": [{"question": text.id, "answer": "x"}],
        "addons": [{"item": ticket.id, "price": "1"}],
    }
    old = (await h.post(client, world, request)).json()
    fresh = (await h.post(client, world, {"item": ticket.id, "price": "1"})).json()
    await h.expire(factory, old["id"])
    assert await h.available(factory, quota) == 4
    async with factory.sessionmaker() as session:
        purged = await purge_expired(session, dt.datetime.now(dt.UTC))
        await session.commit()
    assert purged == 2
    assert await h.cart_rows(factory) == 1
    assert await h.answer_rows(factory) == 0
    assert await h.available(factory, quota) == 4
    async with factory.sessionmaker() as session:
        assert await purge_expired(session, dt.datetime.now(dt.UTC)) == 0
    left = await h.post(client, world, {"item": ticket.id, "price": "1"})
    assert left.status_code == 201 and fresh["id"] != left.json()["id"]
