"""An event's or date's ``seating_plan`` / ``seat_category_mapping``: validation and the seats
generated from the plan (ids kept where the guid stays, sold seats never removed)."""

from __future__ import annotations

from tests.factories import assert_field_errors, auth
from tests.seating import helpers as h


async def _patch_event(client, world, event=None, **body):
    event = event or world.event
    return await client.patch(h.event_url(event, world.org), json=body, headers=auth(world.admin))


async def test_setting_a_plan_generates_the_seats(client, world, factory):
    stalls = await h.ticket(factory, world.event, "Stalls")
    plan = await h.plan(factory, world.org)
    response = await _patch_event(
        client,
        world,
        seating_plan=plan.id,
        seat_category_mapping={"Stalls": stalls.id, "Balcony": None},
    )
    assert response.status_code == 200, response.text
    assert response.json()["seating_plan"] == plan.id
    assert response.json()["seat_category_mapping"] == {"Stalls": stalls.id, "Balcony": None}
    seats = await h.seats(factory, world.event)
    assert [s.seat_guid for s in seats] == ["1-1", "1-2", "1-3", "2-1", "2-2"]
    assert [s.product_id for s in seats] == [stalls.id] * 3 + [None] * 2
    first = seats[0]
    assert (first.zone_name, first.row_name, first.seat_number) == ("Ground floor", "1", "1")
    assert first.row_label is None and first.seat_label is None and first.blocked is False


async def test_mapping_change_updates_products_and_keeps_ids(client, world, factory):
    stalls = await h.ticket(factory, world.event, "Stalls")
    balcony = await h.ticket(factory, world.event, "Balcony")
    plan = await h.plan(factory, world.org)
    await _patch_event(client, world, seating_plan=plan.id, seat_category_mapping={})
    before = {s.seat_guid: s.id for s in await h.seats(factory, world.event)}
    assert all(s.product_id is None for s in await h.seats(factory, world.event))

    response = await _patch_event(
        client, world, seat_category_mapping={"Stalls": stalls.id, "Balcony": balcony.id}
    )
    assert response.status_code == 200, response.text
    after = await h.seats(factory, world.event)
    assert {s.seat_guid: s.id for s in after} == before
    assert {s.seat_guid: s.product_id for s in after}["2-1"] == balcony.id


async def test_switching_plans_keeps_shared_guids_and_drops_the_rest(client, world, factory):
    stalls = await h.ticket(factory, world.event, "Stalls")
    first = await h.plan(factory, world.org)
    second = await h.plan(factory, world.org, h.layout({"1": ["1:Stalls", "9:Stalls"]}))
    await _patch_event(
        client, world, seating_plan=first.id, seat_category_mapping={"Stalls": stalls.id}
    )
    old = {s.seat_guid: s.id for s in await h.seats(factory, world.event)}
    response = await _patch_event(client, world, seating_plan=second.id)
    assert response.status_code == 200, response.text
    new = {s.seat_guid: s.id for s in await h.seats(factory, world.event)}
    assert set(new) == {"1-1", "1-9"}
    assert new["1-1"] == old["1-1"] and new["1-9"] not in old.values()


async def test_removing_a_sold_seat_is_refused(client, world, factory):
    stalls = await h.ticket(factory, world.event, "Stalls")
    plan = await h.plan(factory, world.org)
    smaller = await h.plan(factory, world.org, h.layout({"1": ["1:Stalls"]}))
    await _patch_event(
        client, world, seating_plan=plan.id, seat_category_mapping={"Stalls": stalls.id}
    )
    sold = await h.order(client, world, [{"item": stalls.id, "seat": "1-2"}])
    assert sold.status_code == 201, sold.text

    response = await _patch_event(client, world, seating_plan=smaller.id)
    body = assert_field_errors(response, "seating_plan")
    assert "Ground floor, Row 1, Seat 2" in body["seating_plan"][0]
    assert len(await h.seats(factory, world.event)) == 5  # nothing changed
    unset = await _patch_event(client, world, seating_plan=None, seat_category_mapping={})
    assert_field_errors(unset, "seating_plan")

    # Once the order is canceled the seat is free and may go.
    code = sold.json()["code"]
    canceled = await client.post(
        h.event_url(world.event, world.org, f"orders/{code}/mark_canceled/"),
        headers=auth(world.admin),
    )
    assert canceled.status_code == 200, canceled.text
    response = await _patch_event(client, world, seating_plan=smaller.id)
    assert response.status_code == 200, response.text
    assert [s.seat_guid for s in await h.seats(factory, world.event)] == ["1-1"]


async def test_removing_a_seat_in_a_cart_is_refused(client, world, factory):
    stalls = await h.ticket(factory, world.event, "Stalls")
    await h.seated_event(factory, world.event, {"Stalls": stalls.id})
    held = await h.cart(client, world, stalls, "1-1")
    assert held.status_code == 201, held.text
    response = await _patch_event(client, world, seating_plan=None, seat_category_mapping={})
    assert_field_errors(response, "seating_plan")


async def test_unsetting_the_plan_removes_free_seats(client, world, factory):
    stalls = await h.ticket(factory, world.event, "Stalls")
    await h.seated_event(factory, world.event, {"Stalls": stalls.id})
    response = await _patch_event(client, world, seating_plan=None, seat_category_mapping={})
    assert response.status_code == 200, response.text
    assert await h.seats(factory, world.event) == []


async def test_assignment_is_validated(client, world, factory):
    foreign_plan = await h.plan(factory, world.other)
    foreign_item = await h.ticket(factory, world.other_event)
    plan = await h.plan(factory, world.org)

    response = await _patch_event(client, world, seating_plan=foreign_plan.id)
    assert assert_field_errors(response, "seating_plan")["seating_plan"] == [
        f'Invalid pk "{foreign_plan.id}" - object does not exist.'
    ]
    response = await _patch_event(client, world, seating_plan=2**40)
    assert_field_errors(response, "seating_plan")
    response = await _patch_event(
        client, world, seating_plan=plan.id, seat_category_mapping={"Boxes": None}
    )
    body = assert_field_errors(response, "seat_category_mapping")
    assert body["seat_category_mapping"] == ['The seating plan has no category "Boxes".']
    response = await _patch_event(
        client, world, seating_plan=plan.id, seat_category_mapping={"Stalls": foreign_item.id}
    )
    body = assert_field_errors(response, "seat_category_mapping")
    assert body["seat_category_mapping"] == [
        f'Invalid pk "{foreign_item.id}" - object does not exist.'
    ]
    response = await _patch_event(client, world, seat_category_mapping={"Stalls": None})
    assert_field_errors(response, "seat_category_mapping")
    assert await h.seats(factory, world.event) == []


async def test_event_created_with_a_plan_has_its_seats(client, world, factory):
    plan = await h.plan(factory, world.org)
    response = await client.post(
        f"/api/v1/organizers/{world.org.slug}/events/",
        json={
            "name": {"en": "Gala"},
            "slug": "gala",
            "date_from": "2030-01-01T19:00:00Z",
            "seating_plan": plan.id,
        },
        headers=auth(world.admin),
    )
    assert response.status_code == 201, response.text
    assert response.json()["seating_plan"] == plan.id
    event = await factory.event(world.org)  # a fresh event has none
    assert await h.seats(factory, event) == []
    listed = await client.get(
        f"/api/v1/organizers/{world.org.slug}/events/gala/seats/", headers=auth(world.admin)
    )
    assert listed.status_code == 200 and listed.json()["count"] == 5
    assert all(s["product"] is None for s in listed.json()["results"])


async def test_dates_have_their_own_seats(client, world, factory):
    series = await factory.event(world.org, "tour", has_subevents=True)
    stalls = await h.ticket(factory, series, "Stalls")
    plan = await h.plan(factory, world.org)
    created = await client.post(
        h.event_url(series, world.org, "subevents/"),
        json={
            "name": {"en": "Night one"},
            "date_from": "2030-06-01T19:00:00Z",
            "seating_plan": plan.id,
            "seat_category_mapping": {"Stalls": stalls.id},
        },
        headers=auth(world.admin),
    )
    assert created.status_code == 201, created.text
    first = created.json()["id"]
    other = await h.subevent(factory, series, "Night two")
    response = await client.patch(
        h.event_url(series, world.org, f"subevents/{other.id}/"),
        json={"seating_plan": plan.id},
        headers=auth(world.admin),
    )
    assert response.status_code == 200, response.text
    one = await client.get(
        h.event_url(series, world.org, f"subevents/{first}/seats/"), headers=auth(world.admin)
    )
    two = await client.get(
        h.event_url(series, world.org, f"subevents/{other.id}/seats/"), headers=auth(world.admin)
    )
    assert one.json()["count"] == two.json()["count"] == 5
    assert {s["subevent"] for s in one.json()["results"]} == {first}
    assert {s["product"] for s in one.json()["results"]} == {stalls.id, None}
    assert {s["product"] for s in two.json()["results"]} == {None}
    assert not {s["id"] for s in one.json()["results"]} & {s["id"] for s in two.json()["results"]}

    bad = await client.patch(
        h.event_url(series, world.org, f"subevents/{other.id}/"),
        json={"seat_category_mapping": {"Nope": stalls.id}},
        headers=auth(world.admin),
    )
    assert_field_errors(bad, "seat_category_mapping")


async def test_a_deleted_item_does_not_block_unrelated_edits(client, world, factory):
    from sqlalchemy import delete

    from admit.models import Item

    stalls = await h.ticket(factory, world.event, "Stalls", quota=None)
    await h.seated_event(factory, world.event, {"Stalls": stalls.id})
    async with factory.sessionmaker() as session:
        await session.execute(delete(Item).where(Item.id == stalls.id))
        await session.commit()
    assert {s.product_id for s in await h.seats(factory, world.event)} == {None}
    response = await _patch_event(client, world, name={"en": "Renamed"})
    assert response.status_code == 200, response.text
    # Changing the mapping checks it again.
    response = await _patch_event(
        client, world, seat_category_mapping={"Stalls": stalls.id, "Balcony": None}
    )
    assert_field_errors(response, "seat_category_mapping")
