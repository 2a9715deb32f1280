"""Organizer meta properties (``O/meta_properties/``) and how events' meta_data obeys them."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.factories import Factory, World, auth
from tests.subevents.helpers import meta_property, series, subevent

PROPS = "/api/v1/organizers/acme/meta_properties/"
EVENTS = "/api/v1/organizers/acme/events/"
SUMMIT = f"{EVENTS}summit/"


async def test_crud_round_trip(client: httpx.AsyncClient, world: World):
    body = {
        "name": "Format_x-1",
        "default": "talk",
        "required": True,
        "allowed_values": ["talk", "workshop", "talk"],
    }
    r = await client.post(PROPS, json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    created = r.json()
    assert created == {**body, "id": created["id"], "allowed_values": ["talk", "workshop"]}
    url = f"{PROPS}{created['id']}/"
    assert (await client.get(url, headers=auth(world.admin))).json() == created
    r = await client.patch(url, json={"required": False}, headers=auth(world.admin))
    assert r.json() == {**created, "required": False}
    r = await client.put(url, json={"name": "Format_x-1"}, headers=auth(world.admin))
    assert r.json() == {**created, "name": "Format_x-1", "required": False}
    listing = (await client.get(PROPS, headers=auth(world.admin))).json()
    assert listing["count"] == 1
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 204
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404


async def test_members_read_but_need_settings_permission_to_write(
    client: httpx.AsyncClient, world: World, factory: Factory
):
    await meta_property(factory, world.org, "type")
    assert (await client.get(PROPS, headers=auth(world.nobody))).json()["count"] == 1
    r = await client.post(PROPS, json={"name": "x"}, headers=auth(world.nobody))
    assert r.status_code == 403
    # Another organizer's properties are invisible.
    r = await client.get("/api/v1/organizers/rival/meta_properties/", headers=auth(world.outsider))
    assert r.json()["count"] == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "has space"}, "name"),
        ({"name": "dot.ted"}, "name"),
        ({"name": "x" * 51}, "name"),
        ({}, "name"),
        ({"name": "a", "default": "c", "allowed_values": ["a", "b"]}, "default"),
        ({"name": "a", "allowed_values": []}, "allowed_values"),
        ({"name": "a", "allowed_values": ["a", ""]}, "allowed_values"),
        ({"name": "a", "allowed_values": "a"}, "allowed_values"),
        ({"name": "a", "required": "sure"}, "required"),
    ],
)
async def test_validation(client: httpx.AsyncClient, world: World, body: dict, field: str):
    r = await client.post(PROPS, json=body, headers=auth(world.admin))
    assert r.status_code == 400, r.text
    assert list(r.json()) == [field]


async def test_name_unique_per_organizer(client: httpx.AsyncClient, world: World, factory):
    await meta_property(factory, world.other, "type")
    assert (
        await client.post(PROPS, json={"name": "type"}, headers=auth(world.admin))
    ).status_code == 201
    r = await client.post(PROPS, json={"name": "type"}, headers=auth(world.admin))
    assert r.status_code == 400
    assert list(r.json()) == ["name"]


async def test_rename_refused_while_in_use(client: httpx.AsyncClient, world: World, factory):
    prop = await meta_property(factory, world.org, "type")
    unused = await meta_property(factory, world.org, "spare")
    r = await client.patch(
        f"{PROPS}{unused.id}/", json={"name": "spare2"}, headers=auth(world.admin)
    )
    assert r.status_code == 200
    tour = await series(factory, world.org, "tour")
    await subevent(factory, tour, meta_data={"spare2": "x"})
    r = await client.patch(
        f"{PROPS}{unused.id}/", json={"name": "spare3"}, headers=auth(world.admin)
    )
    assert r.status_code == 400 and list(r.json()) == ["name"]
    await client.patch(SUMMIT, json={"meta_data": {"type": "a"}}, headers=auth(world.admin))
    r = await client.patch(f"{PROPS}{prop.id}/", json={"name": "kind"}, headers=auth(world.admin))
    assert r.status_code == 400 and list(r.json()) == ["name"]
    r = await client.patch(f"{PROPS}{prop.id}/", json={"default": "a"}, headers=auth(world.admin))
    assert r.status_code == 200


async def test_delete_removes_values(client: httpx.AsyncClient, world: World, factory):
    prop = await meta_property(factory, world.org, "type")
    await meta_property(factory, world.org, "keep")
    tour = await series(factory, world.org, "tour")
    sub = await subevent(factory, tour, meta_data={"type": "x", "keep": "y"})
    await client.patch(
        SUMMIT, json={"meta_data": {"type": "a", "keep": "b"}}, headers=auth(world.admin)
    )
    assert (await client.delete(f"{PROPS}{prop.id}/", headers=auth(world.admin))).status_code == 204
    assert (await client.get(SUMMIT, headers=auth(world.admin))).json()["meta_data"] == {
        "keep": "b"
    }
    url = f"{EVENTS}tour/subevents/{sub.id}/"
    assert (await client.get(url, headers=auth(world.admin))).json()["meta_data"] == {"keep": "y"}


# -- events' meta_data --------------------------------------------------------------------------


def new_event(**extra: Any) -> dict[str, Any]:
    return {"name": "New", "slug": "new", "date_from": "2031-01-01T10:00:00Z", **extra}


async def test_event_meta_data_is_validated(client: httpx.AsyncClient, world: World, factory):
    await meta_property(factory, world.org, "genre", allowed_values=["rock", "jazz"])
    await meta_property(factory, world.org, "city", required=True)
    await meta_property(factory, world.org, "hall", required=True, default="main")
    post = lambda body: client.post(EVENTS, json=body, headers=auth(world.admin))  # noqa: E731
    r = await post(new_event())
    assert r.status_code == 400
    assert r.json() == {"meta_data": ["Meta data property 'city' is required."]}
    r = await post(new_event(meta_data={"city": "Rome", "genre": "pop"}))
    assert r.json() == {"meta_data": ["Meta data property 'genre' does not allow value 'pop'."]}
    r = await post(new_event(meta_data={"city": "Rome", "x": "1"}))
    assert r.json() == {"meta_data": ["Meta data property 'x' does not exist."]}
    r = await post(new_event(meta_data={"city": "", "genre": ""}))
    assert r.json() == {"meta_data": ["Meta data property 'city' is required."]}
    r = await post(new_event(meta_data={"city": "Rome", "genre": "jazz"}))
    assert r.status_code == 201, r.text
    # Detail shows what is stored: no defaults injected.
    assert r.json()["meta_data"] == {"city": "Rome", "genre": "jazz"}


async def test_event_patch_and_put_validate_meta(client: httpx.AsyncClient, world: World, factory):
    await meta_property(factory, world.org, "genre", allowed_values=["rock"])
    r = await client.patch(SUMMIT, json={"meta_data": {"genre": "jazz"}}, headers=auth(world.admin))
    assert r.status_code == 400 and list(r.json()) == ["meta_data"]
    r = await client.patch(SUMMIT, json={"meta_data": {"genre": "rock"}}, headers=auth(world.admin))
    assert r.status_code == 200
    await meta_property(factory, world.org, "city", required=True)
    # A PATCH not naming meta_data keeps working after a property became required...
    r = await client.patch(SUMMIT, json={"testmode": True}, headers=auth(world.admin))
    assert r.status_code == 200
    # ...and so does a PUT not naming it (PUT keeps what it omits); one writing it does not.
    body = {"name": "S", "slug": "summit", "date_from": "2030-05-01T10:00:00Z"}
    r = await client.put(SUMMIT, json=body, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    assert r.json()["meta_data"] == {"genre": "rock"}
    r = await client.put(SUMMIT, json={**body, "meta_data": {}}, headers=auth(world.admin))
    assert r.status_code == 400 and list(r.json()) == ["meta_data"]
    r = await client.put(
        SUMMIT, json={**body, "meta_data": {"city": "Oslo"}}, headers=auth(world.admin)
    )
    assert r.status_code == 200


async def test_event_list_attr_honours_defaults(client: httpx.AsyncClient, world: World, factory):
    await meta_property(factory, world.org, "type", default="conference")
    await meta_property(factory, world.org, "tag")
    await factory.event(world.org, "fest", meta_data={"type": "festival", "tag": "x"})
    await factory.event(world.org, "conf", meta_data={"type": "conference"})
    await factory.event(world.org, "blank", meta_data={"type": ""})

    async def slugs(**params: str) -> list[str]:
        r = await client.get(EVENTS, params=params, headers=auth(world.admin))
        assert r.status_code == 200
        return [e["slug"] for e in r.json()["results"]]

    assert await slugs(**{"attr[type]": "conference"}) == ["blank", "conf", "summit"]
    assert await slugs(**{"attr[type]": "festival"}) == ["fest"]
    assert await slugs(**{"attr[type]": ""}) == []
    assert await slugs(**{"attr[tag]": ""}) == ["blank", "conf", "summit"]
    assert await slugs(**{"attr[tag]": "x", "attr[type]": "festival"}) == ["fest"]
    assert await slugs(**{"attr[other]": ""}) == ["blank", "conf", "fest", "summit"]
