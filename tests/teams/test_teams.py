"""Teams: CRUD, event limits, permission lists and the deprecated ``can_*`` flags."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from admit.auth.permissions import EVENT_PERMISSIONS, LEGACY_FLAGS, ORGANIZER_PERMISSIONS
from admit.models import Team, TeamAPIToken, User
from tests.factories import World, assert_field_errors, auth

TEAMS = "/api/v1/organizers/acme/teams/"

ORGANIZER_FLAGS = [f for f, (level, _) in LEGACY_FLAGS.items() if level == "organizer"]
EVENT_FLAGS = [f for f, (level, _) in LEGACY_FLAGS.items() if level == "event"]
ALL_FLAGS = ORGANIZER_FLAGS + EVENT_FLAGS

DEFAULTS: dict[str, Any] = {
    "all_events": False,
    "limit_events": [],
    "require_2fa": False,
    "all_event_permissions": False,
    "limit_event_permissions": [],
    "all_organizer_permissions": False,
    "limit_organizer_permissions": [],
    **{flag: False for flag in ALL_FLAGS},
}


async def create(client: Any, token: str, **fields: Any) -> dict:
    fields.setdefault("name", "Crew")
    response = await client.post(TEAMS, json=fields, headers=auth(token))
    assert response.status_code == 201, response.text
    return response.json()


# -- list / detail ---------------------------------------------------------------------------


async def test_list_shows_the_organizers_teams_only(client, world: World, factory):
    await factory.team(world.other, name="Rival crew")
    response = await client.get(TEAMS, headers=auth(world.admin))
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    assert body["next"] is None and body["previous"] is None
    ids = [t["id"] for t in body["results"]]
    assert ids == sorted(ids)
    assert "Rival crew" not in [t["name"] for t in body["results"]]
    assert set(body["results"][0]) == {"id", "name", *DEFAULTS}


async def test_detail_matches_the_list_entry(client, world: World):
    listed = (await client.get(TEAMS, headers=auth(world.admin))).json()["results"]
    for entry in listed:
        response = await client.get(f"{TEAMS}{entry['id']}/", headers=auth(world.admin))
        assert response.status_code == 200
        assert response.json() == entry


async def test_detail_reads_permission_lists_written_outside_the_api(client, world: World, factory):
    team = await factory.team(
        world.org,
        name="Door",
        all_events=False,
        events=[world.event],
        event_permissions=["event.orders:checkin"],
        organizer_permissions=["organizer.devices:read"],
    )
    response = await client.get(f"{TEAMS}{team.id}/", headers=auth(world.admin))
    assert response.status_code == 200
    body = response.json()
    assert body["limit_events"] == ["summit"]
    assert body["limit_event_permissions"] == ["event.orders:checkin"]
    assert body["limit_organizer_permissions"] == ["organizer.devices:read"]
    assert body["can_checkin_orders"] is True
    assert body["can_change_organizer_settings"] is False


@pytest.mark.parametrize("pk", ["999999", "abc", "0", "-1"])
async def test_detail_of_unknown_team_is_404(client, world: World, pk):
    response = await client.get(f"{TEAMS}{pk}/", headers=auth(world.admin))
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


async def test_team_of_another_organizer_is_404_for_every_method(client, world: World, factory):
    team = await factory.team(world.other, name="Rival crew")
    url = f"{TEAMS}{team.id}/"
    for method, body in (("GET", None), ("PATCH", {"name": "x"}), ("PUT", {"name": "x"})):
        response = await client.request(method, url, json=body, headers=auth(world.admin))
        assert response.status_code == 404, (method, response.text)
    response = await client.delete(url, headers=auth(world.admin))
    assert response.status_code == 404
    async with factory.sessionmaker() as session:
        stored = await session.get(Team, team.id)
        assert stored is not None and stored.name == "Rival crew"


# -- create ----------------------------------------------------------------------------------


async def test_create_round_trip_returns_what_was_sent_plus_id(client, world: World, factory):
    await factory.event(world.org, "alpha")
    payload = {
        "name": "Box office",
        "all_events": False,
        "limit_events": ["alpha", "summit"],
        "require_2fa": True,
        "all_event_permissions": False,
        "limit_event_permissions": ["event.orders:read", "event.orders:checkin"],
        "all_organizer_permissions": False,
        "limit_organizer_permissions": ["organizer.giftcards:read", "organizer.devices:read"],
    }
    response = await client.post(TEAMS, json=payload, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    created = response.json()
    assert isinstance(created["id"], int)
    assert {k: created[k] for k in payload} == payload
    fetched = await client.get(f"{TEAMS}{created['id']}/", headers=auth(world.admin))
    assert fetched.status_code == 200
    assert fetched.json() == created
    listed = (await client.get(TEAMS, headers=auth(world.admin))).json()["results"]
    assert created in listed


async def test_create_with_only_a_name_uses_defaults(client, world: World):
    created = await create(client, world.admin, name="Minimal")
    assert created == {"id": created["id"], "name": "Minimal", **DEFAULTS}


async def test_create_ignores_id_and_unknown_fields(client, world: World):
    created = await create(client, world.admin, name="X", id=4242, colour="red")
    assert created["id"] != 4242
    assert "colour" not in created


async def test_create_requires_a_name(client, world: World):
    response = await client.post(TEAMS, json={"all_events": True}, headers=auth(world.admin))
    body = assert_field_errors(response, "name")
    assert body == {"name": ["This field is required."]}


@pytest.mark.parametrize("name", ["", "   ", "\t\n", None, 12, "x" * 191])
async def test_create_rejects_bad_names(client, world: World, name):
    response = await client.post(TEAMS, json={"name": name}, headers=auth(world.admin))
    assert list(assert_field_errors(response, "name")) == ["name"]


async def test_create_trims_surrounding_whitespace_of_the_name(client, world: World):
    created = await create(client, world.admin, name="  Box office \n")
    assert created["name"] == "Box office"


async def test_create_accepts_a_name_of_maximal_length(client, world: World):
    created = await create(client, world.admin, name="x" * 190)
    assert created["name"] == "x" * 190


@pytest.mark.parametrize(
    "field", ["all_events", "require_2fa", "all_event_permissions", "all_organizer_permissions"]
)
@pytest.mark.parametrize("value", ["maybe", None, [], {}])
async def test_create_rejects_non_boolean_flags(client, world: World, field, value):
    response = await client.post(TEAMS, json={"name": "X", field: value}, headers=auth(world.admin))
    assert list(assert_field_errors(response, field)) == [field]


@pytest.mark.parametrize(
    "body", [[{"name": "X"}], "X", 3, None], ids=["list", "string", "number", "null"]
)
async def test_create_with_a_non_object_body_is_400(client, world: World, body):
    response = await client.post(TEAMS, json=body, headers=auth(world.admin))
    if body is None:
        # ``null`` is an empty body for httpx; the name is then missing.
        assert assert_field_errors(response) == {"name": ["This field is required."]}
    else:
        assert list(assert_field_errors(response, "non_field_errors")) == ["non_field_errors"]


async def test_create_with_malformed_json_is_400(client, world: World):
    response = await client.post(
        TEAMS,
        content=b'{"name": ',
        headers={**auth(world.admin), "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("JSON parse error")


async def test_create_does_not_leak_into_other_organizer(client, world: World):
    await create(client, world.admin, name="Only acme")
    response = await client.get("/api/v1/organizers/rival/teams/", headers=auth(world.outsider))
    assert "Only acme" not in [t["name"] for t in response.json()["results"]]


# -- limit_events ----------------------------------------------------------------------------


async def test_limit_events_unknown_slug_is_400(client, world: World):
    response = await client.post(
        TEAMS,
        json={"name": "X", "limit_events": ["summit", "nope"]},
        headers=auth(world.admin),
    )
    body = assert_field_errors(response, "limit_events")
    assert list(body) == ["limit_events"]
    assert len(body["limit_events"]) == 1
    assert "nope" in body["limit_events"][0]


async def test_limit_events_of_another_organizer_is_unknown(client, world: World):
    response = await client.post(
        TEAMS, json={"name": "X", "limit_events": ["expo"]}, headers=auth(world.admin)
    )
    body = assert_field_errors(response, "limit_events")
    assert "expo" in body["limit_events"][0]
    listed = (await client.get(TEAMS, headers=auth(world.admin))).json()
    assert listed["count"] == 2  # nothing was created


@pytest.mark.parametrize("value", ["summit", [1], [None], {"a": 1}])
async def test_limit_events_must_be_a_list_of_slugs(client, world: World, value):
    response = await client.post(
        TEAMS, json={"name": "X", "limit_events": value}, headers=auth(world.admin)
    )
    assert list(assert_field_errors(response, "limit_events")) == ["limit_events"]


async def test_limit_events_duplicates_are_stored_once(client, world: World):
    created = await create(client, world.admin, limit_events=["summit", "summit"])
    assert created["limit_events"] == ["summit"]


async def test_limit_events_are_read_back_sorted_by_slug(client, world: World, factory):
    await factory.event(world.org, "zulu")
    await factory.event(world.org, "alpha")
    created = await create(client, world.admin, limit_events=["zulu", "summit", "alpha"])
    assert created["limit_events"] == ["alpha", "summit", "zulu"]


async def test_deleted_event_disappears_from_limit_events(client, world: World, factory):
    await factory.event(world.org, "gone")
    created = await create(client, world.admin, limit_events=["gone", "summit"])
    response = await client.delete(
        "/api/v1/organizers/acme/events/gone/", headers=auth(world.admin)
    )
    assert response.status_code == 204
    fetched = await client.get(f"{TEAMS}{created['id']}/", headers=auth(world.admin))
    assert fetched.json()["limit_events"] == ["summit"]


# -- permission lists ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("limit_event_permissions", ["event.orders:read", "event.bogus:read"]),
        ("limit_event_permissions", ["organizer.teams:write"]),
        ("limit_event_permissions", ["can_view_orders"]),
        ("limit_organizer_permissions", ["organizer.nope:write"]),
        ("limit_organizer_permissions", ["event.orders:read"]),
        ("limit_organizer_permissions", "organizer.teams:write"),
        ("limit_event_permissions", [1]),
        ("limit_event_permissions", None),
    ],
)
async def test_permission_lists_accept_only_known_permissions(client, world: World, field, value):
    response = await client.post(TEAMS, json={"name": "X", field: value}, headers=auth(world.admin))
    assert list(assert_field_errors(response, field)) == [field]


async def test_every_core_permission_is_accepted(client, world: World):
    created = await create(
        client,
        world.admin,
        limit_event_permissions=list(EVENT_PERMISSIONS),
        limit_organizer_permissions=list(ORGANIZER_PERMISSIONS),
    )
    assert created["limit_event_permissions"] == list(EVENT_PERMISSIONS)
    assert created["limit_organizer_permissions"] == list(ORGANIZER_PERMISSIONS)
    # Holding every permission a flag stands for reads as the flag.
    assert all(created[flag] is True for flag in ALL_FLAGS)


async def test_duplicate_permissions_are_stored_once(client, world: World):
    created = await create(
        client,
        world.admin,
        limit_event_permissions=["event.orders:read", "event.orders:read"],
    )
    assert created["limit_event_permissions"] == ["event.orders:read"]


# -- deprecated can_* flags ------------------------------------------------------------------


async def test_writing_can_change_items_grants_items_write(client, world: World):
    created = await create(client, world.admin, can_change_items=True)
    assert created["limit_event_permissions"] == ["event.items:write"]
    assert created["limit_organizer_permissions"] == []
    assert created["can_change_items"] is True
    assert [f for f in ALL_FLAGS if created[f]] == ["can_change_items"]


async def test_writing_can_view_orders_grants_orders_read(client, world: World):
    created = await create(client, world.admin, can_view_orders=True)
    assert created["limit_event_permissions"] == ["event.orders:read"]
    assert created["can_view_orders"] is True
    assert created["can_change_orders"] is False


async def test_writing_can_change_teams_grants_teams_write(client, world: World):
    created = await create(client, world.admin, can_change_teams=True)
    assert created["limit_organizer_permissions"] == ["organizer.teams:write"]
    assert created["limit_event_permissions"] == []


@pytest.mark.parametrize("flag", ALL_FLAGS)
async def test_each_flag_written_true_reads_true_alone(client, world: World, flag):
    created = await create(client, world.admin, **{flag: True})
    assert [f for f in ALL_FLAGS if created[f]] == [flag]
    granted = created["limit_event_permissions"] + created["limit_organizer_permissions"]
    assert granted, "a flag written true must grant at least one permission"
    expected_list = (
        "limit_organizer_permissions" if flag in ORGANIZER_FLAGS else "limit_event_permissions"
    )
    assert created[expected_list] == granted
    fetched = (await client.get(f"{TEAMS}{created['id']}/", headers=auth(world.admin))).json()
    assert fetched == created


@pytest.mark.parametrize("flag", ALL_FLAGS)
async def test_each_flag_written_false_revokes_its_permissions(client, world: World, flag):
    created = await create(
        client,
        world.admin,
        limit_event_permissions=list(EVENT_PERMISSIONS),
        limit_organizer_permissions=list(ORGANIZER_PERMISSIONS),
    )
    response = await client.patch(
        f"{TEAMS}{created['id']}/", json={flag: False}, headers=auth(world.admin)
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert [f for f in ALL_FLAGS if not body[f]] == [flag]
    before = set(created["limit_event_permissions"] + created["limit_organizer_permissions"])
    after = set(body["limit_event_permissions"] + body["limit_organizer_permissions"])
    assert after < before


async def test_flags_written_false_on_create_grant_nothing(client, world: World):
    created = await create(client, world.admin, **{flag: False for flag in ALL_FLAGS})
    assert created == {"id": created["id"], "name": "Crew", **DEFAULTS}


# Flags sent together with the permission lists: refused, see test_deprecated_permissions.py.


async def test_reading_flags_reflects_the_lists(client, world: World):
    created = await create(
        client,
        world.admin,
        limit_event_permissions=["event.orders:read", "event.vouchers:read", "event.orders:write"],
        limit_organizer_permissions=["organizer.giftcards:read", "organizer.giftcards:write"],
    )
    assert created["can_view_orders"] is True
    assert created["can_view_vouchers"] is True
    assert created["can_manage_gift_cards"] is True
    # can_change_orders also stands for event:cancel, which is missing.
    assert created["can_change_orders"] is False
    assert created["can_change_vouchers"] is False
    assert created["can_change_items"] is False
    assert created["can_change_teams"] is False


async def test_all_event_permissions_makes_every_event_flag_true(client, world: World):
    created = await create(client, world.admin, all_event_permissions=True)
    assert all(created[f] is True for f in EVENT_FLAGS)
    assert not any(created[f] for f in ORGANIZER_FLAGS)
    assert created["limit_event_permissions"] == []


async def test_all_organizer_permissions_makes_every_organizer_flag_true(client, world: World):
    created = await create(client, world.admin, all_organizer_permissions=True)
    assert all(created[f] is True for f in ORGANIZER_FLAGS)
    assert not any(created[f] for f in EVENT_FLAGS)


async def test_patch_with_a_flag_changes_only_that_flags_permissions(client, world: World):
    created = await create(
        client,
        world.admin,
        limit_event_permissions=["event.orders:read", "event.vouchers:read"],
        limit_organizer_permissions=["organizer.giftcards:read"],
    )
    url = f"{TEAMS}{created['id']}/"
    response = await client.patch(url, json={"can_change_items": True}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body["limit_event_permissions"]) == {
        "event.orders:read",
        "event.vouchers:read",
        "event.items:write",
    }
    assert body["limit_organizer_permissions"] == ["organizer.giftcards:read"]
    assert body["can_change_items"] is True
    assert body["can_view_orders"] is True

    response = await client.patch(url, json={"can_view_orders": False}, headers=auth(world.admin))
    body = response.json()
    assert set(body["limit_event_permissions"]) == {"event.vouchers:read", "event.items:write"}
    assert body["can_view_orders"] is False
    assert body["can_change_items"] is True
    assert body["limit_organizer_permissions"] == ["organizer.giftcards:read"]


async def test_patch_without_flags_does_not_reapply_the_read_flags(client, world: World):
    created = await create(client, world.admin, can_change_items=True)
    response = await client.patch(
        f"{TEAMS}{created['id']}/",
        json={"limit_event_permissions": []},
        headers=auth(world.admin),
    )
    body = response.json()
    assert body["limit_event_permissions"] == []
    assert body["can_change_items"] is False


async def test_flags_are_stored_as_permissions_not_flags(client, world: World, factory):
    created = await create(client, world.admin, can_checkin_orders=True)
    async with factory.sessionmaker() as session:
        team = await session.get(Team, created["id"])
        assert team is not None
        assert team.limit_event_permissions == ["event.orders:checkin"]
        assert team.limit_organizer_permissions == []


async def test_null_flag_is_ignored(client, world: World):
    created = await create(
        client, world.admin, limit_event_permissions=["event.items:write"], can_change_items=None
    )
    assert created["limit_event_permissions"] == ["event.items:write"]


async def test_non_boolean_flag_is_400(client, world: World):
    response = await client.post(
        TEAMS, json={"name": "X", "can_change_items": "yes please"}, headers=auth(world.admin)
    )
    assert list(assert_field_errors(response, "can_change_items")) == ["can_change_items"]


# -- PATCH / PUT -----------------------------------------------------------------------------


async def test_patch_changes_only_supplied_fields(client, world: World):
    created = await create(
        client,
        world.admin,
        limit_events=["summit"],
        require_2fa=True,
        limit_event_permissions=["event.orders:read"],
        limit_organizer_permissions=["organizer.devices:read"],
    )
    url = f"{TEAMS}{created['id']}/"
    response = await client.patch(url, json={"name": "Renamed"}, headers=auth(world.admin))
    assert response.status_code == 200
    assert response.json() == {**created, "name": "Renamed"}
    assert (await client.get(url, headers=auth(world.admin))).json() == {
        **created,
        "name": "Renamed",
    }


async def test_patch_with_empty_body_changes_nothing(client, world: World):
    created = await create(client, world.admin, limit_events=["summit"], can_view_orders=True)
    response = await client.patch(f"{TEAMS}{created['id']}/", json={}, headers=auth(world.admin))
    assert response.status_code == 200
    assert response.json() == created


async def test_patch_limit_events(client, world: World, factory):
    await factory.event(world.org, "alpha")
    created = await create(client, world.admin, limit_events=["summit"])
    url = f"{TEAMS}{created['id']}/"
    response = await client.patch(url, json={"limit_events": ["alpha"]}, headers=auth(world.admin))
    assert response.json()["limit_events"] == ["alpha"]
    response = await client.patch(url, json={"limit_events": []}, headers=auth(world.admin))
    assert response.json()["limit_events"] == []


async def test_patch_validates_and_changes_nothing_on_error(client, world: World):
    created = await create(client, world.admin, limit_events=["summit"])
    url = f"{TEAMS}{created['id']}/"
    for body, field in (
        ({"limit_events": ["nope"]}, "limit_events"),
        ({"name": ""}, "name"),
        ({"name": None}, "name"),
        ({"limit_event_permissions": ["bogus"], "name": "Changed"}, "limit_event_permissions"),
        ({"all_events": "sometimes"}, "all_events"),
    ):
        response = await client.patch(url, json=body, headers=auth(world.admin))
        assert list(assert_field_errors(response, field)) == [field]
    assert (await client.get(url, headers=auth(world.admin))).json() == created


async def test_put_keeps_omitted_fields(client, world: World):
    created = await create(
        client,
        world.admin,
        all_events=True,
        limit_events=["summit"],
        require_2fa=True,
        all_event_permissions=True,
        limit_event_permissions=["event.orders:read"],
        all_organizer_permissions=True,
        limit_organizer_permissions=["organizer.teams:write"],
    )
    url = f"{TEAMS}{created['id']}/"
    response = await client.put(url, json={"name": "Reset"}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    expected = {**created, "name": "Reset"}
    assert response.json() == expected
    assert (await client.get(url, headers=auth(world.admin))).json() == expected


async def test_put_with_full_object_round_trips(client, world: World):
    created = await create(client, world.admin)
    url = f"{TEAMS}{created['id']}/"
    payload = {
        "name": "Full",
        "all_events": False,
        "limit_events": ["summit"],
        "require_2fa": True,
        "all_event_permissions": False,
        "limit_event_permissions": ["event.vouchers:read"],
        "all_organizer_permissions": True,
        "limit_organizer_permissions": [],
    }
    response = await client.put(url, json=payload, headers=auth(world.admin))
    assert response.status_code == 200
    body = response.json()
    assert {k: body[k] for k in payload} == payload
    assert body["id"] == created["id"]
    assert body["can_view_vouchers"] is True


async def test_put_requires_a_name(client, world: World):
    created = await create(client, world.admin, require_2fa=True)
    url = f"{TEAMS}{created['id']}/"
    response = await client.put(url, json={"require_2fa": False}, headers=auth(world.admin))
    assert assert_field_errors(response, "name") == {"name": ["This field is required."]}
    assert (await client.get(url, headers=auth(world.admin))).json() == created


async def test_put_with_unknown_event_is_400(client, world: World):
    created = await create(client, world.admin)
    response = await client.put(
        f"{TEAMS}{created['id']}/",
        json={"name": "X", "limit_events": ["expo"]},
        headers=auth(world.admin),
    )
    assert list(assert_field_errors(response, "limit_events")) == ["limit_events"]


# -- DELETE ----------------------------------------------------------------------------------


async def test_delete_removes_team_but_keeps_members_users(client, world: World, factory):
    user = await factory.user("member@example.org")
    team = await factory.team(world.org, name="Doomed", members=[user])
    token = await factory.token(team)
    url = f"{TEAMS}{team.id}/"
    response = await client.delete(url, headers=auth(world.admin))
    assert response.status_code == 204
    assert response.content == b""
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404
    listed = (await client.get(TEAMS, headers=auth(world.admin))).json()["results"]
    assert team.id not in [t["id"] for t in listed]
    async with factory.sessionmaker() as session:
        assert await session.get(User, user.id) is not None
        tokens = (
            await session.execute(select(TeamAPIToken).where(TeamAPIToken.team_id == team.id))
        ).all()
        assert tokens == []
    # The deleted team's token no longer authenticates.
    response = await client.get("/api/v1/organizers/", headers=auth(token))
    assert response.status_code == 401


async def test_delete_twice_is_404(client, world: World):
    created = await create(client, world.admin)
    url = f"{TEAMS}{created['id']}/"
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 204
    response = await client.delete(url, headers=auth(world.admin))
    assert response.status_code == 404


async def test_a_team_may_delete_itself(client, world: World):
    listed = (await client.get(TEAMS, headers=auth(world.admin))).json()["results"]
    own = next(t for t in listed if t["limit_organizer_permissions"])
    response = await client.delete(f"{TEAMS}{own['id']}/", headers=auth(world.admin))
    assert response.status_code == 204
    response = await client.get(TEAMS, headers=auth(world.admin))
    assert response.status_code == 401


# -- effect on access ------------------------------------------------------------------------


async def _token_for(client: Any, admin: str, team_id: int) -> str:
    response = await client.post(
        f"{TEAMS}{team_id}/tokens/", json={"name": "t"}, headers=auth(admin)
    )
    assert response.status_code == 201, response.text
    return response.json()["token"]


async def test_team_limited_to_some_events_sees_only_those(client, world: World, factory):
    await factory.event(world.org, "hidden")
    await factory.event(world.org, "open")
    created = await create(
        client,
        world.admin,
        all_events=False,
        limit_events=["summit", "open"],
        limit_event_permissions=["event.orders:read"],
    )
    token = await _token_for(client, world.admin, created["id"])
    events = "/api/v1/organizers/acme/events/"
    response = await client.get(events, headers=auth(token))
    assert response.status_code == 200
    assert [e["slug"] for e in response.json()["results"]] == ["open", "summit"]
    assert response.json()["count"] == 2
    assert (await client.get(f"{events}summit/", headers=auth(token))).status_code == 200
    response = await client.get(f"{events}hidden/", headers=auth(token))
    assert response.status_code == 403
    assert response.json() == {"detail": "You do not have permission to perform this action."}

    # Widening the team to all events takes effect for the same token.
    response = await client.patch(
        f"{TEAMS}{created['id']}/", json={"all_events": True}, headers=auth(world.admin)
    )
    assert response.status_code == 200
    response = await client.get(events, headers=auth(token))
    assert [e["slug"] for e in response.json()["results"]] == ["hidden", "open", "summit"]
    assert (await client.get(f"{events}hidden/", headers=auth(token))).status_code == 200


async def test_team_with_all_events_false_and_no_limit_sees_no_event(client, world: World):
    created = await create(client, world.admin, all_events=False, all_event_permissions=True)
    token = await _token_for(client, world.admin, created["id"])
    response = await client.get("/api/v1/organizers/acme/events/", headers=auth(token))
    assert response.status_code == 200
    assert response.json()["count"] == 0
    response = await client.get("/api/v1/organizers/acme/events/summit/", headers=auth(token))
    assert response.status_code == 403


async def test_permissions_granted_through_a_flag_take_effect(client, world: World):
    created = await create(client, world.admin, all_events=True)
    token = await _token_for(client, world.admin, created["id"])
    assert (await client.get(TEAMS, headers=auth(token))).status_code == 403
    response = await client.patch(
        f"{TEAMS}{created['id']}/", json={"can_change_teams": True}, headers=auth(world.admin)
    )
    assert response.json()["limit_organizer_permissions"] == ["organizer.teams:write"]
    assert (await client.get(TEAMS, headers=auth(token))).status_code == 200


# -- ordering --------------------------------------------------------------------------------


async def test_ordering_by_name_and_id(client, world: World):
    b = await create(client, world.admin, name="bbb")
    a = await create(client, world.admin, name="aaa")
    c = await create(client, world.admin, name="ccc")
    ours = {a["id"], b["id"], c["id"]}

    async def order(param: str) -> list[int]:
        response = await client.get(TEAMS, params={"ordering": param}, headers=auth(world.admin))
        assert response.status_code == 200
        return [t["id"] for t in response.json()["results"] if t["id"] in ours]

    assert await order("name") == [a["id"], b["id"], c["id"]]
    assert await order("-name") == [c["id"], b["id"], a["id"]]
    assert await order("id") == [b["id"], a["id"], c["id"]]
    assert await order("-id") == [c["id"], a["id"], b["id"]]


async def test_ordering_ties_are_broken_by_id(client, world: World):
    first = await create(client, world.admin, name="same")
    second = await create(client, world.admin, name="same")
    response = await client.get(TEAMS, params={"ordering": "name"}, headers=auth(world.admin))
    ids = [t["id"] for t in response.json()["results"] if t["name"] == "same"]
    assert ids == [first["id"], second["id"]]


@pytest.mark.parametrize("param", ["bogus", "-bogus", "name,bogus", "organizer_id"])
async def test_unknown_ordering_is_ignored(client, world: World, param):
    response = await client.get(TEAMS, params={"ordering": param}, headers=auth(world.admin))
    assert response.status_code == 200, response.text


async def test_list_paginates(client, world: World):
    for i in range(3):
        await create(client, world.admin, name=f"t{i}")
    response = await client.get(TEAMS, params={"page_size": 2}, headers=auth(world.admin))
    body = response.json()
    assert body["count"] == 5
    assert len(body["results"]) == 2
    assert body["next"] is not None and "page=2" in body["next"]
    response = await client.get(TEAMS, params={"page": 9}, headers=auth(world.admin))
    assert response.status_code == 404
