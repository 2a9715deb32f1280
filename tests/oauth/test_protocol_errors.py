"""Every error path of RFC 6749 §4.1 (authorization endpoint) and §5.2 (token endpoint), PKCE
and redirect URI mismatches, code reuse, and the revocation endpoint's refusals."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select, update

from admit.models import OAuthCode, OAuthToken
from tests.oauth.helpers import (
    REDIRECT,
    consent,
    get_code,
    login,
    make_app,
    pkce,
    redirect_params,
)
from tests.oauth.helpers import authorize_url as url_for

TOKEN = "/api/v1/oauth/token"


@pytest.fixture
async def client_app(factory):
    return await make_app(factory, uris=[REDIRECT, "https://client.example/other"])


@pytest.fixture
async def member(factory, world, alice):
    await factory.team(world.org, members=[alice], event_permissions=["event.orders:read"])
    return alice


async def _code(web, client_app, world, member, **params):
    await login(web, member.email)
    return await get_code(web, client_app, [world.org], **params)


def _exchange(code, **extra):
    return {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, **extra}


def _assert_error(response, error, status=400):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == error, body
    assert response.headers["cache-control"] == "no-store"
    return body


# -- §4.1.2.1: errors at the authorization endpoint ------------------------------------------


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"client_id": ""}, "invalid_client"),
        ({"client_id": "nope"}, "invalid_client"),
        ({"redirect_uri": "https://client.example/callback/extra"}, "invalid_request"),
        ({"redirect_uri": "https://evil.example/callback"}, "invalid_request"),
        ({"redirect_uri": ""}, "invalid_request"),  # several registered: one must be named
        ({"redirect_uri": 'https://client.example/"quoted"'}, "invalid_request"),
    ],
)
async def test_errors_never_redirect_to_an_unverified_uri(web, client_app, member, params, reason):
    await login(web, member.email)
    response = await web.get(url_for(client_app, state="s1", **params))
    assert response.status_code == 400, response.text
    assert "location" not in response.headers
    assert "text/html" in response.headers["content-type"]
    assert "Authorization failed" in response.text
    if reason != "invalid_request" or '"' not in params.get("redirect_uri", ""):
        assert reason in response.text


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"response_type": ""}, "unsupported_response_type"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"scope": "read admin"}, "invalid_scope"),
        ({"code_challenge": "short"}, "invalid_request"),
        ({"code_challenge": "a" * 43, "code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge": "a" * 43}, "invalid_request"),  # method must be named: S256
    ],
)
async def test_errors_redirect_to_the_client_with_state(web, client_app, member, params, error):
    # Refused before login: the request itself is wrong.
    response = await web.get(url_for(client_app, state="s2", **params))
    values = redirect_params(response)
    assert values["error"] == error and values["state"] == "s2"
    assert response.headers["location"].startswith(REDIRECT + "?")


async def test_duplicate_parameters_are_refused(web, client_app, member):
    # Authlib checks these before the redirect URI counts as verified: a page, no redirect.
    response = await web.get(url_for(client_app, state="s3") + "&scope=read&scope=write")
    assert response.status_code == 400 and "location" not in response.headers
    assert "Multiple &#39;scope&#39;" in response.text


async def test_public_client_needs_pkce(web, factory, member):
    public = await make_app(factory, public=True)
    response = await web.get(url_for(public, state="s4"))
    values = redirect_params(response)
    assert values["error"] == "invalid_request" and values["state"] == "s4"


async def test_denied_consent_is_access_denied(web, client_app, world, member):
    await login(web, member.email)
    response = await consent(web, url_for(client_app, state="s5"), [world.org], decision="deny")
    values = redirect_params(response)
    assert values == {
        "error": "access_denied",
        "error_description": values["error_description"],
        "state": "s5",
    }


async def test_consent_needs_an_organizer(web, client_app, member):
    await login(web, member.email)
    response = await consent(web, url_for(client_app, state="s6"), [])
    assert response.status_code == 400
    assert "Choose at least one organizer" in response.text


async def test_consent_only_grants_own_organizers(web, api, client_app, world, member):
    """An organizer id the user does not belong to is ignored, not granted."""
    await login(web, member.email)
    response = await consent(web, url_for(client_app, state="s7"), [world.other])
    assert response.status_code == 400  # nothing valid chosen


async def test_login_comes_first_and_returns_to_the_request(web, client_app, member):
    response = await web.get(url_for(client_app, state="s8"))
    assert response.status_code == 303
    assert response.headers["location"].startswith("/login?next=%2Fapi%2Fv1%2Foauth%2Fauthorize")


# -- §5.2: errors at the token endpoint -----------------------------------------------------


async def test_client_authentication_failures_are_401(web, api, client_app, world, member):
    code = await _code(web, client_app, world, member)
    cases = [
        {},  # no client authentication at all
        {"Authorization": "Basic " + "bm9wZTpub3Bl"},  # unknown client (nope:nope)
        {
            **client_app.basic,
            "Authorization": client_app.basic["Authorization"][:-4] + "AAAA",
        },  # bad secret
    ]
    for headers in cases:
        response = await api.post(TOKEN, data=_exchange(code), headers=headers)
        _assert_error(response, "invalid_client", 401)
        assert response.headers["www-authenticate"].startswith("Basic")
    response = await api.post(
        TOKEN, data=_exchange(code, client_id=client_app.client_id, client_secret="wrong")
    )
    _assert_error(response, "invalid_client", 401)
    # A confidential client may not pretend to be public.
    response = await api.post(TOKEN, data=_exchange(code, client_id=client_app.client_id))
    _assert_error(response, "invalid_client", 401)
    # None of this spent the code.
    assert (
        await api.post(TOKEN, data=_exchange(code), headers=client_app.basic)
    ).status_code == 200


async def test_invalid_requests(api, client_app):
    cases = [
        ({"grant_type": "authorization_code", "redirect_uri": REDIRECT}, "invalid_request"),
        ({"grant_type": "refresh_token"}, "invalid_request"),
        ({"grant_type": "password", "username": "a", "password": "b"}, "unsupported_grant_type"),
        ({"grant_type": "client_credentials"}, "unsupported_grant_type"),
        ({}, "unsupported_grant_type"),
    ]
    for data, error in cases:
        _assert_error(await api.post(TOKEN, data=data, headers=client_app.basic), error)
    response = await api.post(
        TOKEN, json={"grant_type": "authorization_code"}, headers=client_app.basic
    )
    _assert_error(response, "invalid_request")
    response = await api.get(TOKEN, headers=client_app.basic)
    assert response.status_code == 405


async def test_invalid_grants(web, api, factory, client_app, world, member):
    code = await _code(web, client_app, world, member)
    other = await make_app(factory)
    cases = [
        (_exchange("not-a-code"), client_app),
        (_exchange(code, redirect_uri="https://client.example/other"), client_app),  # other URI
        (_exchange(code, redirect_uri=""), client_app),  # the authorization request named one
        (_exchange(code), other),  # issued to another client
    ]
    for data, client in cases:
        _assert_error(await api.post(TOKEN, data=data, headers=client.basic), "invalid_grant")
    # An expired code.
    async with factory.sessionmaker() as session:
        await session.execute(
            update(OAuthCode).values(expires=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1))
        )
        await session.commit()
    response = await api.post(TOKEN, data=_exchange(code), headers=client_app.basic)
    _assert_error(response, "invalid_grant")


async def test_code_reuse_revokes_the_tokens_issued_from_it(
    web, api, factory, client_app, world, member
):
    code = await _code(web, client_app, world, member)
    first = await api.post(TOKEN, data=_exchange(code), headers=client_app.basic)
    assert first.status_code == 200
    tokens = first.json()
    refreshed = await api.post(
        TOKEN,
        data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
        headers=client_app.basic,
    )
    assert refreshed.status_code == 200
    again = await api.post(TOKEN, data=_exchange(code), headers=client_app.basic)
    _assert_error(again, "invalid_grant")
    async with factory.sessionmaker() as session:
        rows = (await session.execute(select(OAuthToken))).scalars().all()
    assert len(rows) == 1 and all(r.access_revoked and r.refresh_revoked for r in rows)
    me = await api.get(
        f"/api/v1/organizers/{world.org.slug}/events/",
        headers={"Authorization": f"Bearer {refreshed.json()['access_token']}"},
    )
    assert me.status_code == 401


async def test_pkce_mismatch_and_missing_verifier(web, api, factory, client_app, world, member):
    verifier, challenge = pkce()
    params = {"code_challenge": challenge, "code_challenge_method": "S256"}
    code = await _code(web, client_app, world, member, **params)
    wrong = pkce()[0]
    response = await api.post(
        TOKEN, data=_exchange(code, code_verifier=wrong), headers=client_app.basic
    )
    body = _assert_error(response, "invalid_grant")
    assert "challenge" in body["error_description"].lower()
    code = await get_code(web, client_app, [world.org], **params)
    response = await api.post(TOKEN, data=_exchange(code), headers=client_app.basic)
    _assert_error(response, "invalid_request")
    # A verifier for a code that had no challenge is refused too (RFC 9700 §4.8).
    code = await get_code(web, client_app, [world.org])
    response = await api.post(
        TOKEN, data=_exchange(code, code_verifier=verifier), headers=client_app.basic
    )
    _assert_error(response, "invalid_request")
    code = await get_code(web, client_app, [world.org], **params)
    response = await api.post(
        TOKEN, data=_exchange(code, code_verifier=verifier), headers=client_app.basic
    )
    assert response.status_code == 200, response.text


async def test_public_client_must_send_the_verifier(web, api, factory, world, member):
    public = await make_app(factory, public=True)
    _, challenge = pkce()
    await login(web, member.email)
    code = await get_code(
        web, public, [world.org], code_challenge=challenge, code_challenge_method="S256"
    )
    response = await api.post(TOKEN, data=_exchange(code, client_id=public.client_id))
    _assert_error(response, "invalid_request")


async def test_refresh_errors(web, api, factory, client_app, world, member):
    code = await _code(web, client_app, world, member, scope="read")
    tokens = (await api.post(TOKEN, data=_exchange(code), headers=client_app.basic)).json()
    refresh = tokens["refresh_token"]
    other = await make_app(factory)
    data = {"grant_type": "refresh_token", "refresh_token": refresh}
    _assert_error(await api.post(TOKEN, data=data, headers=other.basic), "invalid_grant")
    wider = {**data, "scope": "read write"}
    _assert_error(await api.post(TOKEN, data=wider, headers=client_app.basic), "invalid_scope")
    unknown = {**data, "refresh_token": "unknown"}
    _assert_error(await api.post(TOKEN, data=unknown, headers=client_app.basic), "invalid_grant")
    # Still good after the refused attempts.
    assert (await api.post(TOKEN, data=data, headers=client_app.basic)).status_code == 200


async def test_revocation_errors(web, api, factory, client_app, world, member):
    code = await _code(web, client_app, world, member)
    tokens = (await api.post(TOKEN, data=_exchange(code), headers=client_app.basic)).json()
    revoke = "/api/v1/oauth/revoke_token"
    _assert_error(await api.post(revoke, data={}, headers=client_app.basic), "invalid_request")
    response = await api.post(revoke, data={"token": tokens["access_token"]})
    _assert_error(response, "invalid_client", 401)
    other = await make_app(factory)
    response = await api.post(revoke, data={"token": tokens["access_token"]}, headers=other.basic)
    _assert_error(response, "invalid_grant")
    response = await api.post(
        revoke,
        data={"token": tokens["access_token"], "token_type_hint": "id_token"},
        headers=client_app.basic,
    )
    assert response.status_code == 401 and response.json()["error"] == "unsupported_token_type"
    # A wrong hint is only a hint.
    response = await api.post(
        revoke,
        data={"token": tokens["refresh_token"], "token_type_hint": "access_token"},
        headers=client_app.basic,
    )
    assert response.status_code == 200
    data = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
    _assert_error(await api.post(TOKEN, data=data, headers=client_app.basic), "invalid_grant")
