"""Quota CRUD: round trip, PATCH/PUT, validation, filters and ordering, access to writes."""

from __future__ import annotations

from sqlalchemy import func, select

from admit.models import Quota, quota_items
from tests.factories import World, auth
from tests.quotas.helpers import QUOTAS, assert_errors, item, quota, subevent, variation


async def test_round_trip(client, world: World, factory):
    ticket = await item(factory, world.event)
    shirt = await item(factory, world.event, "Shirt")
    red = await variation(factory, shirt, "Red")
    await variation(factory, shirt, "Blue")
    body = {
        "name": "Main",
        "size": 100,
        "items": [ticket.id, shirt.id],
        "variations": [red.id],
        "subevent": None,
        "close_when_sold_out": True,
        "closed": False,
        "release_after_exit": True,
        "ignore_for_event_availability": True,
        "position": 3,
    }
    created = await client.post(QUOTAS, json=body, headers=auth(world.admin))
    assert created.status_code == 201, created.text
    data = created.json()
    assert data == {**body, "id": data["id"]}
    detail = await client.get(f"{QUOTAS}{data['id']}/", headers=auth(world.admin))
    assert detail.json() == data
    listed = await client.get(QUOTAS, headers=auth(world.admin))
    assert listed.json()["results"] == [data]


async def test_defaults_and_unlimited(client, world: World, factory):
    response = await client.post(QUOTAS, json={"name": "Any"}, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    data = response.json()
    assert data["size"] is None
    assert data["items"] == [] and data["variations"] == []
    assert data["closed"] is False and data["position"] == 0
    assert "available" not in data and "available_number" not in data


async def test_patch_and_put_keep_other_fields(client, world: World, factory):
    ticket = await item(factory, world.event)
    q = await quota(factory, world.event, 50, items=[ticket], name="Q", position=5, closed=True)
    url = f"{QUOTAS}{q.id}/"
    patched = await client.patch(url, json={"size": 60}, headers=auth(world.admin))
    assert patched.status_code == 200, patched.text
    assert patched.json()["size"] == 60
    assert patched.json()["items"] == [ticket.id]
    assert patched.json()["closed"] is True and patched.json()["position"] == 5

    put = await client.put(url, json={"name": "Renamed"}, headers=auth(world.admin))
    assert put.status_code == 200, put.text
    data = put.json()
    assert data == {**patched.json(), "name": "Renamed"}
    async with factory.sessionmaker() as s:
        links = await s.scalar(select(func.count()).select_from(quota_items))
    assert links == 1


async def test_patch_items_replaces_links(client, world: World, factory):
    a = await item(factory, world.event, "A")
    b = await item(factory, world.event, "B")
    q = await quota(factory, world.event, items=[a])
    response = await client.patch(
        f"{QUOTAS}{q.id}/", json={"items": [b.id, b.id]}, headers=auth(world.admin)
    )
    assert response.status_code == 200, response.text
    assert response.json()["items"] == [b.id]


async def test_delete(client, world: World, factory):
    ticket = await item(factory, world.event)
    q = await quota(factory, world.event, items=[ticket])
    response = await client.delete(f"{QUOTAS}{q.id}/", headers=auth(world.admin))
    assert response.status_code == 204
    assert (await client.get(f"{QUOTAS}{q.id}/", headers=auth(world.admin))).status_code == 404
    async with factory.sessionmaker() as s:
        assert await s.scalar(select(func.count()).select_from(Quota)) == 0
        assert await s.scalar(select(func.count()).select_from(quota_items)) == 0


async def test_field_validation(client, world: World, factory):
    h = auth(world.admin)
    assert_errors(await client.post(QUOTAS, json={}, headers=h), "name")
    assert_errors(await client.post(QUOTAS, json={"name": "  "}, headers=h), "name")
    assert_errors(await client.post(QUOTAS, json={"name": "x" * 201}, headers=h), "name")
    for size in (-1, "many", True, 1.5, 2**31):
        body = {"name": "Q", "size": size}
        assert_errors(await client.post(QUOTAS, json=body, headers=h), "size")
    assert_errors(await client.post(QUOTAS, json={"name": "Q", "items": 5}, headers=h), "items")
    body = {"name": "Q", "items": [True]}
    assert_errors(await client.post(QUOTAS, json=body, headers=h), "items")
    body = {"name": "Q", "closed": "maybe"}
    assert_errors(await client.post(QUOTAS, json=body, headers=h), "closed")


async def test_references_must_be_in_this_event(client, world: World, factory):
    h = auth(world.admin)
    foreign = await item(factory, world.other_event, "Foreign")
    foreign_var = await variation(factory, foreign)
    body = assert_errors(
        await client.post(QUOTAS, json={"name": "Q", "items": [foreign.id, 999999]}, headers=h),
        "items",
    )
    assert body["items"] == [
        f'Invalid pk "{foreign.id}" - object does not exist.',
        'Invalid pk "999999" - object does not exist.',
    ]
    body = {"name": "Q", "variations": [foreign_var.id]}
    assert_errors(await client.post(QUOTAS, json=body, headers=h), "variations")
    body = {"name": "Q", "subevent": 12345}
    assert_errors(await client.post(QUOTAS, json=body, headers=h), "subevent")


async def test_variation_rules(client, world: World, factory):
    h = auth(world.admin)
    shirt = await item(factory, world.event, "Shirt")
    red = await variation(factory, shirt, "Red")
    mug = await item(factory, world.event, "Mug")
    blue_mug = await variation(factory, mug, "Blue")
    # A variation of an item not listed.
    body = {"name": "Q", "items": [shirt.id], "variations": [red.id, blue_mug.id]}
    errors = assert_errors(await client.post(QUOTAS, json=body, headers=h), "non_field_errors")
    assert errors["non_field_errors"] == [
        "All variations must belong to an item contained in the items list."
    ]
    # An item with variations but none of them listed.
    body = {"name": "Q", "items": [shirt.id], "variations": []}
    errors = assert_errors(await client.post(QUOTAS, json=body, headers=h), "non_field_errors")
    assert errors["non_field_errors"] == [
        "One or more items has variations but none of these are in the variations list."
    ]
    body = {"name": "Q", "items": [shirt.id], "variations": [red.id]}
    assert (await client.post(QUOTAS, json=body, headers=h)).status_code == 201


async def test_patch_validates_merged_state(client, world: World, factory):
    shirt = await item(factory, world.event, "Shirt")
    red = await variation(factory, shirt, "Red")
    q = await quota(factory, world.event, items=[shirt], variations=[red])
    response = await client.patch(
        f"{QUOTAS}{q.id}/", json={"variations": []}, headers=auth(world.admin)
    )
    assert_errors(response, "non_field_errors")


async def test_subevent_rules(client, world: World, factory):
    h = auth(world.admin)
    series = await factory.event(world.org, "series", has_subevents=True)
    other_series = await factory.event(world.org, "series2", has_subevents=True)
    date = await subevent(factory, series)
    foreign_date = await subevent(factory, other_series)
    url = "/api/v1/organizers/acme/events/series/quotas/"
    response = await client.post(url, json={"name": "Q"}, headers=h)
    errors = assert_errors(response, "non_field_errors")
    assert errors["non_field_errors"] == ["Subevent cannot be null for event series."]
    body = {"name": "Q", "subevent": foreign_date.id}
    assert_errors(await client.post(url, json=body, headers=h), "subevent")
    created = await client.post(url, json={"name": "Q", "subevent": date.id}, headers=h)
    assert created.status_code == 201, created.text
    assert created.json()["subevent"] == date.id
    # A single event takes no date at all.
    body = {"name": "Q", "subevent": date.id}
    assert_errors(await client.post(QUOTAS, json=body, headers=h), "subevent")


async def test_filters(client, world: World, factory):
    h = auth(world.admin)
    series = await factory.event(world.org, "series", has_subevents=True)
    d1 = await subevent(factory, series, "One")
    d2 = await subevent(factory, series, "Two")
    d3 = await subevent(factory, series, "Three")
    a = await item(factory, series, "A")
    b = await item(factory, series, "B")
    q1 = await quota(factory, series, subevent=d1, items=[a])
    q2 = await quota(factory, series, subevent=d2, items=[b])
    q3 = await quota(factory, series, subevent=d3, items=[a, b])
    url = "/api/v1/organizers/acme/events/series/quotas/"

    async def ids(query: str) -> list[int]:
        response = await client.get(f"{url}?{query}", headers=h)
        assert response.status_code == 200, response.text
        return sorted(r["id"] for r in response.json()["results"])

    assert await ids(f"subevent={d1.id}") == [q1.id]
    assert await ids(f"subevent__in={d1.id},{d3.id}") == [q1.id, q3.id]
    assert await ids(f"items__in={a.id}") == [q1.id, q3.id]
    assert await ids(f"items__in={a.id},{b.id}") == [q1.id, q2.id, q3.id]
    assert await ids("items__in=999999") == []
    for bad in ("subevent=x", "subevent__in=1,x", "items__in=a", "with_availability=perhaps"):
        response = await client.get(f"{url}?{bad}", headers=h)
        assert_errors(response, bad.split("=")[0])


async def test_ordering(client, world: World, factory):
    h = auth(world.admin)
    q1 = await quota(factory, world.event, position=2)
    q2 = await quota(factory, world.event, position=1)
    q3 = await quota(factory, world.event, position=1)

    async def order(query: str = "") -> list[int]:
        response = await client.get(f"{QUOTAS}?{query}", headers=h)
        assert response.status_code == 200, response.text
        return [r["id"] for r in response.json()["results"]]

    assert await order() == [q2.id, q3.id, q1.id]
    assert await order("ordering=-position") == [q1.id, q3.id, q2.id]
    assert await order("ordering=id") == [q1.id, q2.id, q3.id]
    assert await order("ordering=-id") == [q3.id, q2.id, q1.id]
    assert await order("ordering=size") == await order()  # unknown: ignored, as the reference


async def test_other_events_quotas_are_invisible(client, world: World, factory):
    foreign = await quota(factory, world.other_event)
    h = auth(world.admin)
    assert (await client.get(QUOTAS, headers=h)).json()["count"] == 0
    for method in ("GET", "PATCH", "DELETE"):
        response = await client.request(
            method, f"{QUOTAS}{foreign.id}/", json={} if method == "PATCH" else None, headers=h
        )
        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}
    response = await client.get(f"{QUOTAS}{foreign.id}/availability/", headers=h)
    assert response.status_code == 404


async def test_reading_needs_no_permission_writing_does(client, world: World, factory):
    q = await quota(factory, world.event)
    assert (await client.get(QUOTAS, headers=auth(world.nobody))).status_code == 200
    reader = await factory.token(
        await factory.team(world.org, event_permissions=["event.orders:read"])
    )
    response = await client.patch(f"{QUOTAS}{q.id}/", json={"size": 1}, headers=auth(reader))
    assert response.status_code == 403
    writer = await factory.token(
        await factory.team(world.org, event_permissions=["event.items:write"])
    )
    response = await client.patch(f"{QUOTAS}{q.id}/", json={"size": 1}, headers=auth(writer))
    assert response.status_code == 200
