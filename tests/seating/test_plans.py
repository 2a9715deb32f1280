"""Seating plans ``O/seatingplans/``: CRUD, layout validation, permissions, in-use guards."""

from __future__ import annotations

import copy

import pytest

from tests.factories import assert_field_errors, auth
from tests.seating import helpers as h


async def test_create_read_update_delete(client, world):
    created = await client.post(
        h.plans_url(world),
        json={"name": "Main hall", "layout": h.layout()},
        headers=auth(world.admin),
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert set(body) == {"id", "name", "layout"}
    assert body["name"] == "Main hall" and body["layout"] == h.layout()

    listed = await client.get(h.plans_url(world), headers=auth(world.admin))
    assert listed.json()["count"] == 1 and listed.json()["results"] == [body]
    detail = await client.get(h.plans_url(world, f"{body['id']}/"), headers=auth(world.admin))
    assert detail.json() == body

    patched = await client.patch(
        h.plans_url(world, f"{body['id']}/"), json={"name": "Old hall"}, headers=auth(world.admin)
    )
    assert patched.status_code == 200 and patched.json()["name"] == "Old hall"
    assert patched.json()["layout"] == h.layout()

    new_layout = h.layout({"A": ["1:Stalls"]})
    put = await client.put(
        h.plans_url(world, f"{body['id']}/"),
        json={"name": "Tiny", "layout": new_layout},
        headers=auth(world.admin),
    )
    assert put.status_code == 200 and put.json()["layout"] == new_layout

    deleted = await client.delete(h.plans_url(world, f"{body['id']}/"), headers=auth(world.admin))
    assert deleted.status_code == 204
    gone = await client.get(h.plans_url(world, f"{body['id']}/"), headers=auth(world.admin))
    assert gone.status_code == 404


def _broken(mutate) -> dict:
    data = copy.deepcopy(h.layout())
    mutate(data)
    return data


def _set_seat(key: str, value: object):
    def mutate(data: dict) -> None:
        data["zones"][0]["rows"][0]["seats"][0][key] = value

    return mutate


def _drop_seat_key(key: str):
    def mutate(data: dict) -> None:
        del data["zones"][0]["rows"][0]["seats"][0][key]

    return mutate


@pytest.mark.parametrize(
    ("layout", "fragment"),
    [
        ([], "Expected a dictionary"),
        ({}, "zones: This field is required."),
        (_broken(lambda d: d.pop("categories")), "categories: This field is required."),
        (_broken(lambda d: d.update(zones="x")), "zones: Expected a list."),
        (_broken(_drop_seat_key("seat_guid")), "seats[0].seat_guid: This field is required."),
        (_broken(_set_seat("seat_guid", "")), "seat_guid: This field may not be blank."),
        (_broken(_set_seat("seat_number", 7)), "seat_number: Expected a string."),
        (_broken(_set_seat("category", "Box")), 'Unknown category "Box".'),
        (_broken(_set_seat("seat_guid", "1-2")), 'The seat_guid "1-2" is used for more than one'),
        (_broken(_set_seat("position", {"x": "1"})), 'numbers "x" and "y"'),
        (_broken(_set_seat("seat_label", "x" * 191)), "at most 190 characters"),
        (
            _broken(lambda d: d["categories"].append({"name": "Stalls"})),
            'The category "Stalls" is defined twice.',
        ),
        (
            _broken(lambda d: d["zones"][0]["rows"][0].pop("row_number")),
            "rows[0].row_number: This field is required.",
        ),
    ],
)
async def test_layout_is_validated(client, world, layout, fragment):
    response = await client.post(
        h.plans_url(world), json={"name": "Bad", "layout": layout}, headers=auth(world.admin)
    )
    body = assert_field_errors(response, "layout")
    assert any(fragment in message for message in body["layout"]), body


async def test_name_and_layout_are_required(client, world):
    response = await client.post(h.plans_url(world), json={}, headers=auth(world.admin))
    assert_field_errors(response, "name", "layout")
    response = await client.post(
        h.plans_url(world), json={"name": "  ", "layout": h.layout()}, headers=auth(world.admin)
    )
    assert_field_errors(response, "name")


async def test_extra_drawing_attributes_are_kept(client, world):
    data = h.layout()
    data["zones"][0]["rows"][0]["seats"][0]["radius"] = 5
    data["zones"][0]["areas"] = [{"shape": "rectangle", "text": {"text": "Stage"}}]
    data["zones"][0]["rows"][0]["row_label"] = "Front row"
    response = await client.post(
        h.plans_url(world), json={"name": "Hall", "layout": data}, headers=auth(world.admin)
    )
    assert response.status_code == 201, response.text
    assert response.json()["layout"] == data


async def test_writing_needs_the_seatingplans_permission(client, world, factory):
    reader = await factory.token(await factory.team(world.org))
    writer = await factory.token(
        await factory.team(world.org, organizer_permissions=["organizer.seatingplans:write"])
    )
    plan = await h.plan(factory, world.org)
    assert (await client.get(h.plans_url(world), headers=auth(reader))).status_code == 200
    denied = await client.post(
        h.plans_url(world), json={"name": "X", "layout": h.layout()}, headers=auth(reader)
    )
    assert denied.status_code == 403
    allowed = await client.post(
        h.plans_url(world), json={"name": "X", "layout": h.layout()}, headers=auth(writer)
    )
    assert allowed.status_code == 201
    denied = await client.delete(h.plans_url(world, f"{plan.id}/"), headers=auth(reader))
    assert denied.status_code == 403


async def test_other_organizers_plans_are_invisible(client, world, factory):
    theirs = await h.plan(factory, world.other)
    response = await client.get(h.plans_url(world, f"{theirs.id}/"), headers=auth(world.admin))
    assert response.status_code == 404
    listed = await client.get(h.plans_url(world), headers=auth(world.admin))
    assert listed.json()["count"] == 0


async def test_plan_in_use_cannot_be_deleted_or_redrawn_but_renamed(client, world, factory):
    ticket = await h.ticket(factory, world.event)
    plan = await h.seated_event(factory, world.event, {"Stalls": ticket.id})
    url = h.plans_url(world, f"{plan.id}/")
    deleted = await client.delete(url, headers=auth(world.admin))
    assert deleted.status_code == 403 and "in use" in deleted.json()["detail"]
    redrawn = await client.patch(
        url, json={"layout": h.layout({"9": ["1:Stalls"]})}, headers=auth(world.admin)
    )
    assert redrawn.status_code == 403
    renamed = await client.patch(url, json={"name": "Renamed"}, headers=auth(world.admin))
    assert renamed.status_code == 200 and renamed.json()["name"] == "Renamed"

    # Once the event lets go of it, it can be deleted.
    released = await client.patch(
        h.event_url(world.event, world.org),
        json={"seating_plan": None, "seat_category_mapping": {}},
        headers=auth(world.admin),
    )
    assert released.status_code == 200, released.text
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 204


async def test_plan_used_by_a_date_cannot_be_deleted(client, world, factory):
    series = await factory.event(world.org, "tour", has_subevents=True)
    date = await h.subevent(factory, series)
    plan = await h.plan(factory, world.org)
    response = await client.patch(
        h.event_url(series, world.org, f"subevents/{date.id}/"),
        json={"seating_plan": plan.id},
        headers=auth(world.admin),
    )
    assert response.status_code == 200, response.text
    deleted = await client.delete(h.plans_url(world, f"{plan.id}/"), headers=auth(world.admin))
    assert deleted.status_code == 403
