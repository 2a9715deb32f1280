"""The authorization-code flow end to end through the pages and the token endpoint, and what
the tokens do afterwards: refresh, revocation, /me, organizer limits and scopes."""

from __future__ import annotations

from admit.models import User
from tests.factories import Factory, World
from tests.oauth.helpers import REDIRECT, App, get_code, login, make_app, pkce


async def _member(factory: Factory, world: World, user: User) -> None:
    """``user`` holds every permission in both of the world's organizers."""
    from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS

    for org in (world.org, world.other):
        await factory.team(
            org,
            members=[user],
            event_permissions=list(EVENT_PERMISSIONS),
            organizer_permissions=list(ORGANIZER_PERMISSIONS),
        )


async def _tokens(api, app: App, code: str, **extra: str) -> dict:
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, **extra}
    response = await api.post("/api/v1/oauth/token", data=data, headers=app.basic)
    assert response.status_code == 200, response.text
    return response.json()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_a_refresh_token_lasts_across_refreshes(web, api, factory, world, alice):
    """Issue 28: a client that stores only the first refresh token refreshes again and again;
    each refresh kills the access token before it at once; revocation ends the refresh token
    and its access token."""
    await _member(factory, world, alice)
    app = await make_app(factory)
    assert (await login(web, alice.email)).status_code == 303
    tokens = await _tokens(api, app, await get_code(web, app, [world.org], scope="read"))
    events = f"/api/v1/organizers/{world.org.slug}/events/"
    data = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
    previous = tokens["access_token"]
    seen = {previous}
    for _ in range(3):
        refreshed = await api.post("/api/v1/oauth/token", data=data, headers=app.basic)
        assert refreshed.status_code == 200, refreshed.text
        body = refreshed.json()
        assert body["refresh_token"] == tokens["refresh_token"]
        assert body["scope"] == "read" and body["expires_in"] == 86400
        assert body["access_token"] not in seen
        seen.add(body["access_token"])
        assert (await api.get(events, headers=bearer(previous))).status_code == 401
        assert (await api.get(events, headers=bearer(body["access_token"]))).status_code == 200
        previous = body["access_token"]
    revoke = await api.post(
        "/api/v1/oauth/revoke_token", data={"token": tokens["refresh_token"]}, headers=app.basic
    )
    assert revoke.status_code == 200
    assert (await api.get(events, headers=bearer(previous))).status_code == 401
    again = await api.post("/api/v1/oauth/token", data=data, headers=app.basic)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


async def test_code_flow_refresh_and_revocation(web, api, factory, world, alice):
    await _member(factory, world, alice)
    app = await make_app(factory)
    assert (await login(web, alice.email)).status_code == 303
    code = await get_code(web, app, [world.org], scope="read write profile")

    tokens = await _tokens(api, app, code)
    assert set(tokens) == {"access_token", "expires_in", "token_type", "scope", "refresh_token"}
    assert tokens["expires_in"] == 86400 and tokens["token_type"] == "Bearer"
    assert tokens["scope"] == "read write profile"
    access = tokens["access_token"]

    me = await api.get("/api/v1/me", headers=bearer(access))
    assert me.status_code == 200, me.text
    assert me.json() == {
        "email": "alice@example.org",
        "fullname": "Alice Doe",
        "locale": "en",
        "is_staff": False,
        "timezone": "UTC",
    }
    events = f"/api/v1/organizers/{world.org.slug}/events/"
    assert (await api.get(events, headers=bearer(access))).status_code == 200
    other = f"/api/v1/organizers/{world.other.slug}/events/"
    assert (await api.get(other, headers=bearer(access))).status_code == 403
    listed = await api.get("/api/v1/organizers/", headers=bearer(access))
    assert [o["slug"] for o in listed.json()["results"]] == [world.org.slug]

    # Refresh: a new access token, the same refresh token; the old access token dies at once.
    data = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
    refreshed = await api.post("/api/v1/oauth/token", data=data, headers=app.basic)
    assert refreshed.status_code == 200, refreshed.text
    new = refreshed.json()
    assert new["access_token"] != access and new["refresh_token"] == tokens["refresh_token"]
    assert (await api.get(events, headers=bearer(access))).status_code == 401
    assert (await api.get(events, headers=bearer(new["access_token"]))).status_code == 200

    # Revoking the access token keeps the refresh token usable.
    revoke = await api.post(
        "/api/v1/oauth/revoke_token", data={"token": new["access_token"]}, headers=app.basic
    )
    assert revoke.status_code == 200 and revoke.json() == {}
    assert (await api.get(events, headers=bearer(new["access_token"]))).status_code == 401
    data = {"grant_type": "refresh_token", "refresh_token": new["refresh_token"]}
    third = await api.post("/api/v1/oauth/token", data=data, headers=app.basic)
    assert third.status_code == 200, third.text
    third = third.json()

    # Revoking the refresh token (here by GET, as the spec declares) takes its access token.
    revoke = await api.get(
        "/api/v1/oauth/revoke_token",
        params={"token": third["refresh_token"], "token_type_hint": "refresh_token"},
        headers=app.basic,
    )
    assert revoke.status_code == 200 and revoke.json() == {}
    assert (await api.get(events, headers=bearer(third["access_token"]))).status_code == 401
    data = {"grant_type": "refresh_token", "refresh_token": third["refresh_token"]}
    assert (await api.post("/api/v1/oauth/token", data=data, headers=app.basic)).status_code == 400

    # Unknown tokens: 200 {} as well (RFC 7009).
    unknown = await api.post("/api/v1/oauth/revoke_token", data={"token": "x"}, headers=app.basic)
    assert unknown.status_code == 200 and unknown.json() == {}


async def test_public_client_with_pkce_and_client_secret_post(web, api, factory, world, alice):
    await _member(factory, world, alice)
    public = await make_app(factory, public=True)
    await login(web, alice.email)
    verifier, challenge = pkce()
    code = await get_code(
        web, public, [world.org], code_challenge=challenge, code_challenge_method="S256"
    )
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": public.client_id,
        "code_verifier": verifier,
    }
    response = await api.post("/api/v1/oauth/token", data=data)
    assert response.status_code == 200, response.text
    assert response.json()["scope"] == "read write"

    confidential = await make_app(factory)
    code = await get_code(web, confidential, [world.org])
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": confidential.client_id,
        "client_secret": confidential.secret,
    }
    response = await api.post("/api/v1/oauth/token", data=data)
    assert response.status_code == 200, response.text
