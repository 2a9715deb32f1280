"""bulk_create (not atomic), the list of API carts, detail, delete and permissions."""

from __future__ import annotations

import datetime as dt

from tests.carts import helpers as h
from tests.factories import auth


async def test_bulk_create_mixes_successes_and_failures(client, world, factory):
    ticket = await h.item(factory, world.event)
    quota = await h.quota(factory, world.event, 2, [ticket], name="Main")
    entries = [
        {"item": ticket.id, "price": "1", "cart_id": "a@api"},
        {"item": 999999, "price": "1"},
        "nonsense",
        {"item": ticket.id},
        {"item": ticket.id, "price": "2", "addons": [{"item": ticket.id, "price": "1"}]},
        {"item": ticket.id, "price": "3"},
    ]
    response = await client.post(
        h.url(world, suffix="bulk_create/"), json=entries, headers=auth(world.admin)
    )
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["success"] for r in results] == [True, False, False, False, False, True]
    assert results[0]["errors"] is None and results[0]["data"]["cart_id"] == "a@api"
    assert results[1]["errors"] == {"item": ['Invalid pk "999999" - object does not exist.']}
    assert results[1]["data"] is None
    assert results[2]["errors"] == {
        "non_field_errors": ["Invalid data. Expected a dictionary, but got str."]
    }
    assert results[3]["errors"] == {"price": ["This field is required."]}
    # Two positions do not fit into the one place left; the next single one does.
    assert results[4]["errors"] == {
        "non_field_errors": ['Only 1 tickets are left in the quota "Main", fewer than requested.']
    }
    assert results[5]["data"]["price"] == "3.00"
    assert await h.cart_rows(factory) == 2
    assert await h.available(factory, quota) == 0
    detail = await client.get(
        h.url(world, suffix=f"{results[5]['data']['id']}/"), headers=auth(world.admin)
    )
    assert detail.json() == results[5]["data"]


async def test_bulk_create_failure_after_a_write_is_rolled_back_alone(client, world, factory):
    ticket = await h.item(factory, world.event)
    shirt = await h.item(factory, world.event, "Shirt")
    await h.quota(factory, world.event, 5, [ticket])
    entries = [
        {"item": ticket.id, "price": "1"},
        # Passes every check but the quota one of its add-on: nothing of it may remain.
        {"item": ticket.id, "price": "1", "addons": [{"item": shirt.id, "price": "1"}]},
        {"item": ticket.id, "price": "1"},
    ]
    response = await client.post(
        h.url(world, suffix="bulk_create/"), json=entries, headers=auth(world.admin)
    )
    results = response.json()["results"]
    assert [r["success"] for r in results] == [True, False, True]
    assert results[1]["errors"] == {
        "addons": [{"non_field_errors": ['The product "Shirt" is not assigned to a quota.']}]
    }
    assert await h.cart_rows(factory) == 2


async def test_bulk_create_needs_a_list(client, world):
    response = await client.post(
        h.url(world, suffix="bulk_create/"), json={"item": 1}, headers=auth(world.admin)
    )
    assert response.status_code == 400
    assert response.json() == {
        "non_field_errors": ['Expected a list of items but got type "dict".']
    }


async def test_list_shows_api_carts_of_this_event_with_page_header(client, world, factory):
    ticket = await h.item(factory, world.event)
    await h.quota(factory, world.event, 10, [ticket])
    other_ticket = await h.item(factory, world.other_event)
    await h.stored_position(factory, world.event, "webshop-session", ticket)
    await h.stored_position(factory, world.other_event, "x@api", other_ticket)
    created = (
        await h.post(
            client,
            world,
            {"item": ticket.id, "price": "1", "addons": [{"item": ticket.id, "price": "1"}]},
        )
    ).json()
    before = dt.datetime.now(dt.UTC)
    response = await client.get(h.url(world), headers=auth(world.admin))
    assert response.status_code == 200
    generated = dt.datetime.fromisoformat(response.headers["X-Page-Generated"])
    assert before <= generated <= dt.datetime.now(dt.UTC)
    body = response.json()
    assert body["count"] == 2 and body["next"] is None
    parent, addon = body["results"]
    assert parent == created
    assert addon == created["addons"][0]


async def test_list_takes_a_fixed_number_of_queries(client, world, factory, count_queries):
    ticket = await h.item(factory, world.event)
    text = await h.question(factory, world.event, "S", [ticket])
    await h.quota(factory, world.event, None, [ticket])
    request = {
        "item": ticket.id,
        "price": "1",
        "answers": [{"question": text.id, "answer": "x"}],
        "addons": [{"item": ticket.id, "price": "1"}],
    }
    await h.post(client, world, request)
    await client.get(h.url(world), headers=auth(world.admin))  # warm the connection pool
    with count_queries() as few:
        await client.get(h.url(world), headers=auth(world.admin))
    for _ in range(5):
        await h.post(client, world, request)
    with count_queries() as many:
        response = await client.get(h.url(world), headers=auth(world.admin))
    assert response.json()["count"] == 12
    # (len + fast, not .count: the latter keeps counting fast reads after the block ends)
    assert len(many.statements) + many.fast == len(few.statements) + few.fast


async def test_detail_of_unknown_or_foreign_position_is_404(client, world, factory):
    ticket = await h.item(factory, world.event)
    web = await h.stored_position(factory, world.event, "webshop", ticket)
    other_item = await h.item(factory, world.other_event)
    foreign = await h.stored_position(factory, world.other_event, "x@api", other_item)
    for pk in (web, foreign, 999999, "abc"):
        response = await client.get(h.url(world, suffix=f"{pk}/"), headers=auth(world.admin))
        assert response.status_code == 404, pk
        assert response.json() == {"detail": "Not found."}
        response = await client.delete(h.url(world, suffix=f"{pk}/"), headers=auth(world.admin))
        assert response.status_code == 404, pk
    assert await h.cart_rows(factory) == 2


async def test_delete_removes_addons_and_answers_and_frees_quota(client, world, factory):
    ticket = await h.item(factory, world.event)
    text = await h.question(factory, world.event, "S", [ticket])
    quota = await h.quota(factory, world.event, 3, [ticket])
    request = {
        "item": ticket.id,
        "price": "1",
        "addons": [{"item": ticket.id, "price": "1"}],
        "bundled": [
            {"item": ticket.id, "price": "1", "answers": [{"question": text.id, "answer": "y"}]}
        ],
    }
    created = (await h.post(client, world, request)).json()
    assert await h.available(factory, quota) == 0
    response = await client.delete(
        h.url(world, suffix=f"{created['id']}/"), headers=auth(world.admin)
    )
    assert response.status_code == 204
    assert await h.cart_rows(factory) == 0
    assert await h.answer_rows(factory) == 0
    assert await h.available(factory, quota) == 3
    response = await client.get(h.url(world, suffix=f"{created['id']}/"), headers=auth(world.admin))
    assert response.status_code == 404


async def test_deleting_an_addon_keeps_the_parent(client, world, factory):
    ticket = await h.item(factory, world.event)
    await h.quota(factory, world.event, 3, [ticket])
    request = {"item": ticket.id, "price": "1", "addons": [{"item": ticket.id, "price": "1"}]}
    created = (await h.post(client, world, request)).json()
    addon_id = created["addons"][0]["id"]
    response = await client.delete(h.url(world, suffix=f"{addon_id}/"), headers=auth(world.admin))
    assert response.status_code == 204
    detail = await client.get(h.url(world, suffix=f"{created['id']}/"), headers=auth(world.admin))
    assert detail.json()["addons"] == []


async def test_read_permission_may_list_but_not_write(client, world, factory):
    ticket = await h.item(factory, world.event)
    await h.quota(factory, world.event, 3, [ticket])
    created = (await h.post(client, world, {"item": ticket.id, "price": "1"})).json()
    reader = await factory.token(
        await factory.team(world.org, event_permissions=["event.orders:read"])
    )
    assert (await client.get(h.url(world), headers=auth(reader))).status_code == 200
    detail = h.url(world, suffix=f"{created['id']}/")
    assert (await client.get(detail, headers=auth(reader))).status_code == 200
    body = {"item": ticket.id, "price": "1"}
    assert (await client.post(h.url(world), json=body, headers=auth(reader))).status_code == 403
    bulk = h.url(world, suffix="bulk_create/")
    assert (await client.post(bulk, json=[body], headers=auth(reader))).status_code == 403
    assert (await client.delete(detail, headers=auth(reader))).status_code == 403
    writer = await factory.token(
        await factory.team(world.org, event_permissions=["event.orders:write"])
    )
    assert (await client.post(h.url(world), json=body, headers=auth(writer))).status_code == 201
    assert (await client.delete(detail, headers=auth(writer))).status_code == 204
