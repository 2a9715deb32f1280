"""``O/membershiptypes/`` and ``O/memberships/``."""

from __future__ import annotations

from typing import Any

from tests.factories import World, assert_field_errors, auth

TYPES = "/api/v1/organizers/acme/membershiptypes/"
MEMBERSHIPS = "/api/v1/organizers/acme/memberships/"
WEEK = {"date_start": "2030-04-19T00:00:00+02:00", "date_end": "2030-04-26T00:00:00+02:00"}


async def new_type(client: Any, world: World, **fields: Any) -> dict:
    fields.setdefault("name", {"en": "Week pass", "de": "Wochenkarte"})
    response = await client.post(TYPES, json=fields, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    return response.json()


async def new_customer(client: Any, world: World) -> str:
    response = await client.post(
        "/api/v1/organizers/acme/customers/", json={}, headers=auth(world.admin)
    )
    return response.json()["identifier"]


async def new_membership(client: Any, world: World, **fields: Any) -> Any:
    return await client.post(MEMBERSHIPS, json={**WEEK, **fields}, headers=auth(world.admin))


async def test_membership_type_crud(client, world: World):
    body = await new_type(client, world, max_usages=7)
    assert body == {
        "id": body["id"],
        "name": {"en": "Week pass", "de": "Wochenkarte"},
        "transferable": False,
        "allow_parallel_usage": False,
        "max_usages": 7,
    }
    url = f"{TYPES}{body['id']}/"
    patched = await client.patch(url, json={"max_usages": 3}, headers=auth(world.admin))
    assert patched.json()["max_usages"] == 3 and patched.json()["name"]["de"] == "Wochenkarte"
    put = await client.put(url, json={"name": "Day pass"}, headers=auth(world.admin))
    assert put.json()["max_usages"] == 3 and put.json()["name"] == {"en": "Day pass"}
    assert (await client.get(TYPES, headers=auth(world.admin))).json()["count"] == 1
    assert_field_errors(await client.post(TYPES, json={}, headers=auth(world.admin)), "name")
    zero = await client.post(TYPES, json={"name": "x", "max_usages": 0}, headers=auth(world.admin))
    assert_field_errors(zero, "max_usages")
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 204
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404


async def test_membership_type_in_use_cannot_be_deleted(client, world: World):
    used = await new_type(client, world)
    customer = await new_customer(client, world)
    assert (
        await new_membership(client, world, customer=customer, membership_type=used["id"])
    ).status_code == 201
    response = await client.delete(f"{TYPES}{used['id']}/", headers=auth(world.admin))
    assert response.status_code == 403
    assert "in use" in response.json()["detail"]
    assert (await client.get(f"{TYPES}{used['id']}/", headers=auth(world.admin))).status_code == 200


async def test_membership_lifecycle(client, world: World):
    week = await new_type(client, world)
    day = await new_type(client, world, name="Day")
    customer = await new_customer(client, world)
    response = await new_membership(
        client,
        world,
        customer=customer,
        membership_type=week["id"],
        testmode=True,
        attendee_name_parts={"_scheme": "full", "full_name": "John Doe"},
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body == {
        "id": body["id"],
        "customer": customer,
        "membership_type": week["id"],
        "testmode": True,
        "date_start": "2030-04-18T22:00:00Z",
        "date_end": "2030-04-25T22:00:00Z",
        "attendee_name_parts": {"_scheme": "full", "full_name": "John Doe"},
        "canceled": False,
    }
    url = f"{MEMBERSHIPS}{body['id']}/"
    other = await new_customer(client, world)
    patched = await client.patch(
        url,
        json={"membership_type": day["id"], "customer": other, "testmode": False, "canceled": True},
        headers=auth(world.admin),
    )
    assert patched.status_code == 200
    # customer and testmode are fixed at creation.
    assert patched.json()["customer"] == customer and patched.json()["testmode"] is True
    assert patched.json()["membership_type"] == day["id"] and patched.json()["canceled"] is True
    put = await client.put(
        url, json={**WEEK, "membership_type": week["id"]}, headers=auth(world.admin)
    )
    assert put.status_code == 200 and put.json()["canceled"] is True  # kept when omitted
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 405


async def test_membership_validation(client, world: World):
    week = await new_type(client, world)
    customer = await new_customer(client, world)
    missing = await new_membership(client, world, membership_type=week["id"])
    assert_field_errors(missing, "customer")
    unknown = await new_membership(client, world, customer="NOPE", membership_type=week["id"])
    assert_field_errors(unknown, "customer")
    bad_type = await new_membership(client, world, customer=customer, membership_type=999)
    assert_field_errors(bad_type, "membership_type")
    backwards = await client.post(
        MEMBERSHIPS,
        json={
            "customer": customer,
            "membership_type": week["id"],
            "date_start": "2030-02-01T00:00:00Z",
            "date_end": "2030-01-01T00:00:00Z",
        },
        headers=auth(world.admin),
    )
    assert_field_errors(backwards, "date_end")
    no_dates = await client.post(
        MEMBERSHIPS,
        json={"customer": customer, "membership_type": week["id"]},
        headers=auth(world.admin),
    )
    assert_field_errors(no_dates, "date_start", "date_end")
    # Another organizer's type is as unknown as a missing one.
    rival_type = await client.post(
        "/api/v1/organizers/rival/membershiptypes/",
        json={"name": "R"},
        headers=auth(world.outsider),
    )
    foreign = await new_membership(
        client, world, customer=customer, membership_type=rival_type.json()["id"]
    )
    assert_field_errors(foreign, "membership_type")


async def test_membership_filters(client, world: World):
    week = await new_type(client, world)
    day = await new_type(client, world, name="Day")
    alice = await new_customer(client, world)
    bob = await new_customer(client, world)
    await new_membership(client, world, customer=alice, membership_type=week["id"])
    await new_membership(client, world, customer=bob, membership_type=day["id"], testmode=True)
    for query, expected in (
        (f"customer={alice}", [alice]),
        (f"membership_type={day['id']}", [bob]),
        ("testmode=true", [bob]),
        ("testmode=false", [alice]),
        ("", [alice, bob]),
    ):
        body = (await client.get(f"{MEMBERSHIPS}?{query}", headers=auth(world.admin))).json()
        assert [m["customer"] for m in body["results"]] == expected, query
    bad = await client.get(f"{MEMBERSHIPS}?membership_type=x", headers=auth(world.admin))
    assert_field_errors(bad, "membership_type")
    rival = await client.get("/api/v1/organizers/rival/memberships/", headers=auth(world.outsider))
    assert rival.json()["count"] == 0
