"""Organizer list and detail: a caller sees exactly the organizer its team belongs to."""

from __future__ import annotations

from admit.events.plugins import PLUGINS
from tests.factories import World, auth

ORGS = "/api/v1/organizers/"


def _expected(slug: str, name: str, plugins: list[str]) -> dict:
    return {
        "name": name,
        "slug": slug,
        "public_url": f"http://testserver/{slug}/",
        "plugins": plugins,
    }


async def test_list_shows_only_the_callers_organizer(client, world: World):
    response = await client.get(ORGS, headers=auth(world.admin))
    assert response.status_code == 200
    assert response.json() == {
        "count": 1,
        "next": None,
        "previous": None,
        "results": [_expected("acme", "Acme", list(PLUGINS))],
    }


async def test_list_of_the_other_tenant_shows_only_its_organizer(client, world: World):
    response = await client.get(ORGS, headers=auth(world.outsider))
    assert response.status_code == 200
    assert [o["slug"] for o in response.json()["results"]] == ["rival"]


async def test_list_needs_no_permission(client, world: World):
    response = await client.get(ORGS, headers=auth(world.nobody))
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 1
    assert body["results"][0]["slug"] == "acme"


async def test_list_ignores_organizers_without_a_team_of_the_caller(client, world: World, factory):
    await factory.organizer("lonely")
    response = await client.get(ORGS, headers=auth(world.admin))
    assert [o["slug"] for o in response.json()["results"]] == ["acme"]


async def test_detail_fields(client, world: World):
    response = await client.get(f"{ORGS}acme/", headers=auth(world.admin))
    assert response.status_code == 200
    assert response.json() == _expected("acme", "Acme", list(PLUGINS))


async def test_detail_needs_no_permission(client, world: World):
    response = await client.get(f"{ORGS}acme/", headers=auth(world.nobody))
    assert response.status_code == 200
    assert response.json()["slug"] == "acme"


async def test_detail_reflects_stored_name_and_plugins(client, factory):
    org = await factory.organizer("solo", name="Solo Events Ltd.", plugins=["sendmail"])
    token = await factory.admin_token(org)
    response = await client.get(f"{ORGS}solo/", headers=auth(token))
    assert response.status_code == 200
    assert response.json() == _expected("solo", "Solo Events Ltd.", ["sendmail"])


async def test_detail_without_plugins_is_an_empty_list(client, factory):
    org = await factory.organizer("bare", plugins=[])
    token = await factory.admin_token(org)
    response = await client.get(f"{ORGS}bare/", headers=auth(token))
    assert response.json()["plugins"] == []
    listed = await client.get(ORGS, headers=auth(token))
    assert listed.json()["results"][0]["plugins"] == []
