"""Deprecated ``can_*`` flags and the permission lists are two ways to say the same thing:
a request may use either, never both (the reference refuses the mix with one message)."""

from __future__ import annotations

from typing import Any

import pytest

from admit.auth.permissions import LEGACY_FLAGS
from tests.factories import World, auth

TEAMS = "/api/v1/organizers/acme/teams/"
MIXED = {
    "non_field_errors": [
        "You cannot set deprecated and current permission attributes at the same time."
    ]
}
CURRENT = {
    "all_event_permissions": True,
    "limit_event_permissions": ["event.orders:read"],
    "all_organizer_permissions": False,
    "limit_organizer_permissions": [],
}


async def _create(client: Any, token: str, **fields: Any) -> dict:
    response = await client.post(TEAMS, json={"name": "Crew", **fields}, headers=auth(token))
    assert response.status_code == 201, response.text
    return response.json()


@pytest.mark.parametrize("flag", sorted(LEGACY_FLAGS))
@pytest.mark.parametrize("current", sorted(CURRENT))
async def test_create_with_both_is_refused(client, world: World, flag, current):
    body = {"name": "Crew", flag: True, current: CURRENT[current]}
    response = await client.post(TEAMS, json=body, headers=auth(world.admin))
    assert response.status_code == 400, response.text
    assert response.json() == MIXED
    listed = (await client.get(TEAMS, headers=auth(world.admin))).json()
    assert "Crew" not in [t["name"] for t in listed["results"]]


async def test_a_false_flag_counts_as_set_too(client, world: World):
    body = {"name": "Crew", "can_view_orders": False, "limit_event_permissions": []}
    response = await client.post(TEAMS, json=body, headers=auth(world.admin))
    assert response.status_code == 400
    assert response.json() == MIXED


@pytest.mark.parametrize("method", ["PATCH", "PUT"])
async def test_update_with_both_is_refused_and_changes_nothing(client, world: World, method):
    team = await _create(client, world.admin, limit_event_permissions=["event.orders:read"])
    url = f"{TEAMS}{team['id']}/"
    body = {"name": "Renamed", "can_change_items": True, "limit_event_permissions": []}
    response = await client.request(method, url, json=body, headers=auth(world.admin))
    assert response.status_code == 400, response.text
    assert response.json() == MIXED
    assert (await client.get(url, headers=auth(world.admin))).json() == team


async def test_flags_alone_still_work(client, world: World):
    created = await _create(client, world.admin, can_change_items=True, can_view_orders=True)
    assert created["limit_event_permissions"] == ["event.items:write", "event.orders:read"]
    url = f"{TEAMS}{created['id']}/"
    response = await client.patch(url, json={"can_change_items": False}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json()["limit_event_permissions"] == ["event.orders:read"]


async def test_lists_alone_still_work(client, world: World):
    created = await _create(
        client, world.admin, limit_organizer_permissions=["organizer.teams:write"]
    )
    assert created["can_change_teams"] is True
    url = f"{TEAMS}{created['id']}/"
    body = {"all_event_permissions": True}
    response = await client.patch(url, json=body, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json()["can_change_items"] is True
    # The flags the team reads back are not "set" by a PATCH that does not send them.
    assert response.json()["limit_organizer_permissions"] == ["organizer.teams:write"]


async def test_other_fields_mix_with_either_style(client, world: World):
    created = await _create(
        client, world.admin, all_events=True, require_2fa=True, can_checkin_orders=True
    )
    assert created["can_checkin_orders"] is True and created["require_2fa"] is True
    created = await _create(client, world.admin, all_events=True, all_event_permissions=True)
    assert created["all_event_permissions"] is True
