"""Resources nested under a team: members, invites and API tokens."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from admit.models import OutgoingMail, TeamAPIToken, TeamInvite, User, team_members
from tests.factories import World, assert_field_errors, auth

TEAMS = "/api/v1/organizers/acme/teams/"


async def _mails(factory: Any) -> list[OutgoingMail]:
    async with factory.sessionmaker() as session:
        return list(
            (await session.execute(select(OutgoingMail).order_by(OutgoingMail.id))).scalars()
        )


async def _member_ids(factory: Any, team_id: int) -> set[int]:
    async with factory.sessionmaker() as session:
        rows = await session.execute(
            select(team_members.c.user_id).where(team_members.c.team_id == team_id)
        )
        return set(rows.scalars())


# -- members ---------------------------------------------------------------------------------


async def test_members_list_and_detail(client, world: World, factory):
    alice = await factory.user("alice@example.org", fullname="Alice Adams", require_2fa=True)
    bob = await factory.user("bob@example.org")
    outsider = await factory.user("carol@example.org")
    team = await factory.team(world.org, members=[alice, bob])
    await factory.team(world.org, members=[outsider])
    url = f"{TEAMS}{team.id}/members/"

    response = await client.get(url, headers=auth(world.admin))
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    assert body["results"] == [
        {
            "id": alice.id,
            "email": "alice@example.org",
            "fullname": "Alice Adams",
            "require_2fa": True,
        },
        {"id": bob.id, "email": "bob@example.org", "fullname": None, "require_2fa": False},
    ]

    response = await client.get(f"{url}{alice.id}/", headers=auth(world.admin))
    assert response.status_code == 200
    assert response.json() == body["results"][0]


async def test_members_of_an_empty_team(client, world: World, factory):
    team = await factory.team(world.org)
    response = await client.get(f"{TEAMS}{team.id}/members/", headers=auth(world.admin))
    assert response.status_code == 200
    assert response.json() == {"count": 0, "next": None, "previous": None, "results": []}


async def test_delete_member_removes_membership_but_keeps_the_user(client, world: World, factory):
    alice = await factory.user("alice@example.org")
    bob = await factory.user("bob@example.org")
    team = await factory.team(world.org, members=[alice, bob])
    other_team = await factory.team(world.org, members=[alice])
    url = f"{TEAMS}{team.id}/members/"

    response = await client.delete(f"{url}{alice.id}/", headers=auth(world.admin))
    assert response.status_code == 204
    assert response.content == b""

    listed = (await client.get(url, headers=auth(world.admin))).json()
    assert [m["id"] for m in listed["results"]] == [bob.id]
    response = await client.get(f"{url}{alice.id}/", headers=auth(world.admin))
    assert response.status_code == 404
    async with factory.sessionmaker() as session:
        assert await session.get(User, alice.id) is not None
    assert await _member_ids(factory, team.id) == {bob.id}
    assert await _member_ids(factory, other_team.id) == {alice.id}

    # Removing again: the user is no longer a member.
    response = await client.delete(f"{url}{alice.id}/", headers=auth(world.admin))
    assert response.status_code == 404


async def test_member_of_another_team_is_404(client, world: World, factory):
    alice = await factory.user("alice@example.org")
    team = await factory.team(world.org)
    await factory.team(world.org, members=[alice])
    url = f"{TEAMS}{team.id}/members/{alice.id}/"
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404
    response = await client.delete(url, headers=auth(world.admin))
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_unknown_member_is_404(client, world: World, factory, method):
    team = await factory.team(world.org)
    for pk in ("999999", "abc"):
        url = f"{TEAMS}{team.id}/members/{pk}/"
        response = await client.request(method, url, headers=auth(world.admin))
        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}


@pytest.mark.parametrize("kind", ["members", "invites", "tokens"])
async def test_nested_lists_of_unknown_team_are_404(client, world: World, factory, kind):
    rival_team = await factory.team(world.other)
    for team_id in ("999999", "abc", str(rival_team.id)):
        response = await client.get(f"{TEAMS}{team_id}/{kind}/", headers=auth(world.admin))
        assert response.status_code == 404, (team_id, response.text)
        assert response.json() == {"detail": "Not found."}
        response = await client.get(f"{TEAMS}{team_id}/{kind}/1/", headers=auth(world.admin))
        assert response.status_code == 404


async def test_members_of_another_organizers_team_are_not_reachable(client, world: World, factory):
    alice = await factory.user("alice@example.org")
    rival_team = await factory.team(world.other, members=[alice])
    url = f"{TEAMS}{rival_team.id}/members/{alice.id}/"
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 404
    assert await _member_ids(factory, rival_team.id) == {alice.id}


# -- invites ---------------------------------------------------------------------------------


async def test_invite_new_address_creates_invite_and_queues_mail(client, world: World, factory):
    team = await factory.team(world.org, name="Door staff")
    url = f"{TEAMS}{team.id}/invites/"
    response = await client.post(url, json={"email": "new@example.org"}, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"id", "email"}
    assert body["email"] == "new@example.org"
    assert isinstance(body["id"], int)

    mails = await _mails(factory)
    assert len(mails) == 1
    mail = mails[0]
    assert mail.to == ["new@example.org"]
    assert mail.organizer_id == world.org.id
    assert mail.status == "queued"
    assert "Door staff" in mail.subject
    async with factory.sessionmaker() as session:
        invite = await session.get(TeamInvite, body["id"])
        assert invite is not None and invite.team_id == team.id
        assert f"http://testserver/invite/{invite.token}/" in mail.body

    listed = await client.get(url, headers=auth(world.admin))
    assert listed.json()["results"] == [body]
    detail = await client.get(f"{url}{body['id']}/", headers=auth(world.admin))
    assert detail.status_code == 200
    assert detail.json() == body
    # Nobody joined the team yet.
    members = await client.get(f"{TEAMS}{team.id}/members/", headers=auth(world.admin))
    assert members.json()["count"] == 0


async def test_invite_existing_user_adds_member_directly(client, world: World, factory):
    alice = await factory.user("alice@example.org", fullname="Alice")
    team = await factory.team(world.org)
    response = await client.post(
        f"{TEAMS}{team.id}/invites/", json={"email": "alice@example.org"}, headers=auth(world.admin)
    )
    assert response.status_code == 201, response.text
    assert response.json() == {"email": "alice@example.org"}

    members = (await client.get(f"{TEAMS}{team.id}/members/", headers=auth(world.admin))).json()
    assert [m["id"] for m in members["results"]] == [alice.id]
    invites = (await client.get(f"{TEAMS}{team.id}/invites/", headers=auth(world.admin))).json()
    assert invites["count"] == 0


async def test_invite_matches_existing_user_case_insensitively(client, world: World, factory):
    alice = await factory.user("alice@example.org")
    team = await factory.team(world.org)
    response = await client.post(
        f"{TEAMS}{team.id}/invites/", json={"email": "ALICE@example.org"}, headers=auth(world.admin)
    )
    assert response.status_code == 201
    assert "id" not in response.json()
    assert await _member_ids(factory, team.id) == {alice.id}


async def test_inviting_the_same_address_twice_is_400(client, world: World, factory):
    team = await factory.team(world.org)
    url = f"{TEAMS}{team.id}/invites/"
    first = await client.post(url, json={"email": "new@example.org"}, headers=auth(world.admin))
    assert first.status_code == 201
    for email in ("new@example.org", "NEW@example.org"):
        response = await client.post(url, json={"email": email}, headers=auth(world.admin))
        assert list(assert_field_errors(response, "email")) == ["email"]
    assert (await client.get(url, headers=auth(world.admin))).json()["count"] == 1
    assert len(await _mails(factory)) == 1


async def test_inviting_an_existing_member_again_is_400(client, world: World, factory):
    alice = await factory.user("alice@example.org")
    team = await factory.team(world.org, members=[alice])
    response = await client.post(
        f"{TEAMS}{team.id}/invites/", json={"email": "alice@example.org"}, headers=auth(world.admin)
    )
    assert list(assert_field_errors(response, "email")) == ["email"]
    assert await _member_ids(factory, team.id) == {alice.id}


async def test_same_address_may_be_invited_to_two_teams(client, world: World, factory):
    first = await factory.team(world.org)
    second = await factory.team(world.org)
    for team in (first, second):
        response = await client.post(
            f"{TEAMS}{team.id}/invites/",
            json={"email": "new@example.org"},
            headers=auth(world.admin),
        )
        assert response.status_code == 201
    assert len(await _mails(factory)) == 2


@pytest.mark.parametrize(
    "email", ["not-an-email", "", "a@", "@example.org", "a b@example.org", None, 5, ["a@b.org"]]
)
async def test_invite_with_invalid_email_is_400(client, world: World, factory, email):
    team = await factory.team(world.org)
    response = await client.post(
        f"{TEAMS}{team.id}/invites/", json={"email": email}, headers=auth(world.admin)
    )
    assert list(assert_field_errors(response, "email")) == ["email"]
    assert await _mails(factory) == []


async def test_invalid_email_message_reads_like_the_reference(client, world: World, factory):
    team = await factory.team(world.org)
    response = await client.post(
        f"{TEAMS}{team.id}/invites/", json={"email": "not-an-email"}, headers=auth(world.admin)
    )
    assert assert_field_errors(response) == {"email": ["Enter a valid email address."]}


async def test_invite_email_longer_than_stored_is_400_not_500(client, world: World, factory):
    team = await factory.team(world.org)
    # Valid by RFC (64-character local part, 211 characters) but wider than the column.
    email = "a" * 64 + "@" + "b" * 60 + "." + "c" * 60 + "." + "d" * 20 + ".org"
    response = await client.post(
        f"{TEAMS}{team.id}/invites/", json={"email": email}, headers=auth(world.admin)
    )
    assert list(assert_field_errors(response, "email")) == ["email"]
    assert await _mails(factory) == []


async def test_invite_email_is_normalised(client, world: World, factory):
    team = await factory.team(world.org)
    response = await client.post(
        f"{TEAMS}{team.id}/invites/",
        json={"email": "  New.Person@EXAMPLE.org "},
        headers=auth(world.admin),
    )
    assert response.status_code == 201
    assert response.json()["email"] == "New.Person@example.org"
    assert (await _mails(factory))[0].to == ["New.Person@example.org"]


async def test_invite_without_email_is_400(client, world: World, factory):
    team = await factory.team(world.org)
    response = await client.post(f"{TEAMS}{team.id}/invites/", json={}, headers=auth(world.admin))
    assert assert_field_errors(response, "email") == {"email": ["This field is required."]}


async def test_delete_invite(client, world: World, factory):
    team = await factory.team(world.org)
    url = f"{TEAMS}{team.id}/invites/"
    created = (
        await client.post(url, json={"email": "new@example.org"}, headers=auth(world.admin))
    ).json()
    response = await client.delete(f"{url}{created['id']}/", headers=auth(world.admin))
    assert response.status_code == 204
    assert response.content == b""
    assert (
        await client.get(f"{url}{created['id']}/", headers=auth(world.admin))
    ).status_code == 404
    assert (await client.get(url, headers=auth(world.admin))).json()["count"] == 0
    assert (
        await client.delete(f"{url}{created['id']}/", headers=auth(world.admin))
    ).status_code == 404
    # Once revoked, the address may be invited again.
    again = await client.post(url, json={"email": "new@example.org"}, headers=auth(world.admin))
    assert again.status_code == 201
    assert again.json()["id"] != created["id"]


async def test_invite_of_another_team_is_404(client, world: World, factory):
    team = await factory.team(world.org)
    other = await factory.team(world.org)
    created = (
        await client.post(
            f"{TEAMS}{other.id}/invites/",
            json={"email": "x@example.org"},
            headers=auth(world.admin),
        )
    ).json()
    url = f"{TEAMS}{team.id}/invites/{created['id']}/"
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 404
    listed = await client.get(f"{TEAMS}{other.id}/invites/", headers=auth(world.admin))
    assert listed.json()["count"] == 1


@pytest.mark.parametrize("team_id", ["999999", "abc"])
async def test_invite_to_unknown_team_is_404(client, world: World, factory, team_id):
    response = await client.post(
        f"{TEAMS}{team_id}/invites/", json={"email": "x@example.org"}, headers=auth(world.admin)
    )
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}
    assert await _mails(factory) == []


async def test_invite_to_another_organizers_team_is_404(client, world: World, factory):
    rival_team = await factory.team(world.other)
    response = await client.post(
        f"{TEAMS}{rival_team.id}/invites/",
        json={"email": "x@example.org"},
        headers=auth(world.admin),
    )
    assert response.status_code == 404
    async with factory.sessionmaker() as session:
        assert (await session.execute(select(TeamInvite))).first() is None


# -- tokens ----------------------------------------------------------------------------------


async def test_create_token_returns_the_secret_once(client, world: World, factory):
    team = await factory.team(world.org)
    url = f"{TEAMS}{team.id}/tokens/"
    response = await client.post(url, json={"name": "Scanner"}, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"id", "name", "active", "token"}
    assert body["name"] == "Scanner"
    assert body["active"] is True
    assert isinstance(body["token"], str) and len(body["token"]) >= 32

    listed = await client.get(url, headers=auth(world.admin))
    assert listed.json()["results"] == [{"id": body["id"], "name": "Scanner", "active": True}]
    detail = await client.get(f"{url}{body['id']}/", headers=auth(world.admin))
    assert detail.json() == {"id": body["id"], "name": "Scanner", "active": True}
    assert body["token"] not in listed.text + detail.text
    # Only a hash is stored.
    async with factory.sessionmaker() as session:
        stored = await session.get(TeamAPIToken, body["id"])
        assert stored is not None and body["token"] not in stored.token_hash


async def test_two_tokens_have_different_secrets(client, world: World, factory):
    team = await factory.team(world.org)
    url = f"{TEAMS}{team.id}/tokens/"
    first = (await client.post(url, json={"name": "a"}, headers=auth(world.admin))).json()
    second = (await client.post(url, json={"name": "a"}, headers=auth(world.admin))).json()
    assert first["token"] != second["token"]
    assert first["id"] != second["id"]


async def test_new_token_authenticates_with_the_teams_rights(client, world: World):
    created = await client.post(
        TEAMS,
        json={"name": "Team admins", "limit_organizer_permissions": ["organizer.teams:write"]},
        headers=auth(world.admin),
    )
    team_id = created.json()["id"]
    response = await client.post(
        f"{TEAMS}{team_id}/tokens/", json={"name": "ci"}, headers=auth(world.admin)
    )
    token = response.json()["token"]
    orgs = await client.get("/api/v1/organizers/", headers=auth(token))
    assert orgs.status_code == 200
    assert [o["slug"] for o in orgs.json()["results"]] == ["acme"]
    assert (await client.get(TEAMS, headers=auth(token))).status_code == 200
    # No event permission was granted, and all_events defaults to false.
    events = await client.get("/api/v1/organizers/acme/events/", headers=auth(token))
    assert events.json()["count"] == 0


async def test_delete_token_deactivates_it(client, world: World, factory):
    team = await factory.team(world.org)
    url = f"{TEAMS}{team.id}/tokens/"
    created = (await client.post(url, json={"name": "Old"}, headers=auth(world.admin))).json()
    secret = created["token"]
    assert (await client.get("/api/v1/organizers/", headers=auth(secret))).status_code == 200

    response = await client.delete(f"{url}{created['id']}/", headers=auth(world.admin))
    assert response.status_code == 200
    assert response.json() == {"id": created["id"], "name": "Old", "active": False}

    response = await client.get("/api/v1/organizers/", headers=auth(secret))
    assert response.status_code == 401
    assert response.json() == {"detail": "Token inactive or deleted."}
    # The token stays listed, inactive.
    detail = await client.get(f"{url}{created['id']}/", headers=auth(world.admin))
    assert detail.json()["active"] is False
    listed = await client.get(url, headers=auth(world.admin))
    assert listed.json()["results"] == [{"id": created["id"], "name": "Old", "active": False}]
    # Deleting again keeps it inactive.
    again = await client.delete(f"{url}{created['id']}/", headers=auth(world.admin))
    assert again.status_code == 200
    assert again.json()["active"] is False


async def test_a_token_may_deactivate_itself(client, world: World):
    created = await client.post(
        TEAMS,
        json={"name": "Self", "limit_organizer_permissions": ["organizer.teams:write"]},
        headers=auth(world.admin),
    )
    team_id = created.json()["id"]
    url = f"{TEAMS}{team_id}/tokens/"
    token = (await client.post(url, json={"name": "me"}, headers=auth(world.admin))).json()
    response = await client.delete(f"{url}{token['id']}/", headers=auth(token["token"]))
    assert response.status_code == 200
    assert response.json()["active"] is False
    response = await client.get(url, headers=auth(token["token"]))
    assert response.status_code == 401


@pytest.mark.parametrize(
    "body", [{}, {"name": ""}, {"name": "   "}, {"name": None}, {"name": "x" * 191}]
)
async def test_token_name_is_required(client, world: World, factory, body):
    team = await factory.team(world.org)
    url = f"{TEAMS}{team.id}/tokens/"
    response = await client.post(url, json=body, headers=auth(world.admin))
    assert list(assert_field_errors(response, "name")) == ["name"]
    assert (await client.get(url, headers=auth(world.admin))).json()["count"] == 0


async def test_token_cannot_be_created_inactive(client, world: World, factory):
    team = await factory.team(world.org)
    response = await client.post(
        f"{TEAMS}{team.id}/tokens/",
        json={"name": "x", "active": False, "token": "chosen-by-client"},
        headers=auth(world.admin),
    )
    assert response.status_code == 201
    body = response.json()
    assert body["active"] is True
    assert body["token"] != "chosen-by-client"


async def test_token_of_another_team_is_404(client, world: World, factory):
    team = await factory.team(world.org)
    other = await factory.team(world.org)
    created = (
        await client.post(
            f"{TEAMS}{other.id}/tokens/", json={"name": "x"}, headers=auth(world.admin)
        )
    ).json()
    url = f"{TEAMS}{team.id}/tokens/{created['id']}/"
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 404
    assert (
        await client.get("/api/v1/organizers/", headers=auth(created["token"]))
    ).status_code == 200


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_unknown_token_is_404(client, world: World, factory, method):
    team = await factory.team(world.org)
    for pk in ("999999", "abc"):
        response = await client.request(
            method, f"{TEAMS}{team.id}/tokens/{pk}/", headers=auth(world.admin)
        )
        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}


async def test_create_token_for_unknown_team_is_404(client, world: World, factory):
    rival_team = await factory.team(world.other)
    for team_id in ("999999", str(rival_team.id)):
        response = await client.post(
            f"{TEAMS}{team_id}/tokens/", json={"name": "x"}, headers=auth(world.admin)
        )
        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}
    async with factory.sessionmaker() as session:
        rows = await session.execute(
            select(TeamAPIToken).where(TeamAPIToken.team_id == rival_team.id)
        )
        assert rows.first() is None


@pytest.mark.parametrize("kind", ["members", "invites", "tokens"])
async def test_nested_unknown_ordering_is_ignored(client, world: World, factory, kind):
    team = await factory.team(world.org)
    response = await client.get(
        f"{TEAMS}{team.id}/{kind}/", params={"ordering": "bogus"}, headers=auth(world.admin)
    )
    assert response.status_code == 200, response.text
