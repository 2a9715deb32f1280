"""Access rules for every API route, generated from the routes themselves so none can skip them.

For each route: no credentials -> 401; a token of another organizer -> 403; a token of the
same organizer lacking the route's permission -> 403 (or not 401/403 when the route needs none);
an unknown organizer or event -> 403 even for an all-powerful token. Device tokens: a revoked
one is 401 everywhere; a device is held to its fixed grant (no team management, no writes to
the catalog or orders), to its event limits and to its security profile's allow-list. The one
route without credentials (device initialization) is skipped where credentials are the point.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.routing import APIRoute

from admit.auth.authenticate import BEARER_REFUSED
from admit.auth.devices import (
    CHECKIN_CALLS,
    DEVICE_EVENT_PERMISSIONS,
    DEVICE_ORGANIZER_PERMISSIONS,
    SECURITY_PROFILES,
    profile_allows,
)
from admit.devices.access import DeviceAccess, NoCredentials
from admit.kit.http.context import Authenticated, EventAccess, OrganizerAccess, implied
from admit.kit.http.routing import API_PREFIX
from admit.shop.routes import PUBLIC_ROUTERS
from tests.devices.helpers import device_auth, make_device
from tests.factories import Factory, World, auth
from tests.routes import API_ROUTES, client, factory, openapi_document, world  # noqa: F401

ACCESS_TYPES = (Authenticated, OrganizerAccess, EventAccess, NoCredentials)


@pytest.fixture(scope="module")
async def elsewhere(factory: Factory, world: World):
    """An event of the same organizer that a limited device is allowed, not the URL's."""
    return await factory.event(world.org, "elsewhere")


FORBIDDEN = {"detail": "You do not have permission to perform this action."}


def _access_of(route: APIRoute) -> Any:
    stack = [route.dependant]
    found = []
    while stack:
        dep = stack.pop()
        if isinstance(dep.call, ACCESS_TYPES):
            found.append(dep.call)
        stack.extend(dep.dependencies)
    return found


def _api_routes() -> list[tuple[str, str, Any]]:
    return [
        (method, route.path, _access_of(route))
        for route in API_ROUTES
        for method in sorted(route.methods)
    ]


def test_openapi_lists_exactly_the_enumerated_routes():
    """The document holds the credentialed API routes and the shop's public ones, nothing
    else; the public ones take no credentials and so are not among the routes checked here."""
    paths = openapi_document()["paths"]
    documented = {(method.upper(), path) for path, ops in paths.items() for method in ops}
    public = {(m, r.path) for router in PUBLIC_ROUTERS for r in router.routes for m in r.methods}  # type: ignore[attr-defined]
    assert all(path.startswith("/api/v1/public/") for _, path in public)
    assert documented == {(m, p) for m, p, _ in ROUTES} | public


ROUTES = _api_routes()
IDS = [f"{m} {p}" for m, p, _ in ROUTES]


def test_every_api_route_declares_exactly_one_access_check():
    missing = [f"{m} {p}" for m, p, access in ROUTES if len(access) != 1]
    assert not missing, f"routes without exactly one access dependency: {missing}"
    assert len(ROUTES) > 20


def _skip_public(access: list[Any]) -> None:
    if isinstance(access[0], NoCredentials):
        pytest.skip("takes no credentials: a one-time secret in the body authenticates it")


def _url(path: str, world: World, organizer: str | None = None, event: str | None = None) -> str:
    return (
        path.replace("{organizer}", organizer or world.org.slug)
        .replace("{event}", event or world.event.slug)
        .replace("{team}", "1")
        .replace("{id}", "1")
        .replace("{subevent_id}", "1")
        .replace("{list}", "1")
    )


async def _call(client, method: str, url: str, token: str | None, *, device: bool = False):
    headers = (device_auth(token) if device else auth(token)) if token else {}
    body = None if method in ("GET", "DELETE") else {}
    return await client.request(method, url, json=body, headers=headers)


@pytest.mark.parametrize(("method", "path", "access"), ROUTES, ids=IDS)
async def test_anonymous_is_401(client, world: World, method, path, access):
    _skip_public(access)
    response = await _call(client, method, _url(path, world), None)
    assert response.status_code == 401, response.text
    assert response.json() == {"detail": "Authentication credentials were not provided."}
    assert response.headers["www-authenticate"] == "Token"


@pytest.mark.parametrize(("method", "path", "access"), ROUTES, ids=IDS)
async def test_invalid_token_is_401(client, world: World, method, path, access):
    _skip_public(access)
    response = await _call(client, method, _url(path, world), "x" * 64)
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}


@pytest.mark.parametrize(("method", "path", "access"), ROUTES, ids=IDS)
async def test_other_tenant_is_403(client, world: World, method, path, access):
    _skip_public(access)
    if isinstance(access[0], Authenticated):
        pytest.skip("not scoped to an organizer")
    response = await _call(client, method, _url(path, world), world.outsider)
    assert response.status_code == 403, response.text
    assert response.json() == {"detail": "You do not have permission to perform this action."}


@pytest.mark.parametrize(("method", "path", "access"), ROUTES, ids=IDS)
async def test_missing_permission_is_403(client, world: World, method, path, access):
    response = await _call(client, method, _url(path, world), world.nobody)
    if access[0].permission:
        assert response.status_code == 403, response.text
        assert response.json() == {"detail": "You do not have permission to perform this action."}
    else:
        assert response.status_code not in (401, 403), response.text


@pytest.mark.parametrize(("method", "path", "access"), ROUTES, ids=IDS)
async def test_unknown_organizer_or_event_is_403(client, world: World, method, path, access):
    _skip_public(access)
    if isinstance(access[0], Authenticated):
        pytest.skip("not scoped to an organizer")
    response = await _call(client, method, _url(path, world, organizer="nope"), world.admin)
    assert response.status_code == 403
    if isinstance(access[0], EventAccess):
        response = await _call(client, method, _url(path, world, event="nope"), world.admin)
        assert response.status_code == 403
        # Another organizer's event is as unknown as a missing one.
        url = _url(path, world, event=world.other_event.slug)
        response = await _call(client, method, url, world.admin)
        assert response.status_code == 403


@pytest.mark.parametrize(("method", "path", "access"), ROUTES, ids=IDS)
async def test_inactive_token_is_401(client, world: World, factory, method, path, access):
    _skip_public(access)
    team = await factory.team(world.org)
    token = await factory.token(team, active=False)
    response = await _call(client, method, _url(path, world), token)
    assert response.status_code == 401
    assert response.json() == {"detail": "Token inactive or deleted."}


# -- device tokens ---------------------------------------------------------------------------


def _device_holds(permission: str) -> bool:
    granted = (
        DEVICE_EVENT_PERMISSIONS if permission.startswith("event") else DEVICE_ORGANIZER_PERMISSIONS
    )
    return implied(granted, permission)


def _device_may_pass(access: Any) -> bool:
    """Whether the fixed device grant satisfies the route's access check."""
    if isinstance(access, DeviceAccess | NoCredentials) or type(access) is Authenticated:
        return True
    any_of = getattr(access, "permissions", None)  # checks that accept one of several
    if any_of and not any(_device_holds(p) for p in any_of):
        return False
    if isinstance(access, EventAccess):
        required = [access.event_permission, access.organizer_permission]
    else:
        required = [access.permission]
    return all(_device_holds(p) for p in required if p)


def _assert_passed_access(response: Any) -> None:
    assert response.status_code != 401, response.text
    if response.status_code == 403:
        # A 403 for another reason (a plugin not enabled, an object in use) is the route's
        # own business; the access check's refusal has this exact body.
        assert response.json() != FORBIDDEN, response.text


@pytest.mark.parametrize(("method", "path", "access"), ROUTES, ids=IDS)
async def test_device_credentials(client, world: World, factory, elsewhere, method, path, access):
    _skip_public(access)
    url = _url(path, world)
    _, revoked = await make_device(factory, world.org, revoked=True)
    response = await _call(client, method, url, revoked, device=True)
    assert response.status_code == 401, response.text
    assert response.json() == {"detail": "Device access has been revoked."}
    assert response.headers["www-authenticate"] == "Token"

    response = await _call(client, method, url, "x" * 64, device=True)
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}

    if isinstance(access[0], OrganizerAccess | EventAccess):
        _, foreign = await make_device(factory, world.other)
        response = await _call(client, method, url, foreign, device=True)
        assert response.status_code == 403, response.text
        assert response.json() == FORBIDDEN
    if isinstance(access[0], EventAccess):
        _, limited = await make_device(factory, world.org, all_events=False, events=[elsewhere])
        response = await _call(client, method, url, limited, device=True)
        assert response.status_code == 403, response.text
        assert response.json() == FORBIDDEN


@pytest.mark.parametrize(("method", "path", "access"), ROUTES, ids=IDS)
async def test_device_grant_and_security_profiles(
    client, world: World, factory, method, path, access
):
    _skip_public(access)
    url = _url(path, world)
    for profile in SECURITY_PROFILES:
        _, token = await make_device(factory, world.org, profile=profile)
        response = await _call(client, method, url, token, device=True)
        if _device_may_pass(access[0]) and profile_allows(profile, method, path):
            _assert_passed_access(response)
        else:
            assert response.status_code == 403, (profile, response.text)
            assert response.json() == FORBIDDEN


def test_security_profiles_name_existing_routes():
    mounted = {(m, p) for m, p, _ in ROUTES}
    checkin_mounted = any("/checkin" in p for _, p in mounted)
    for profile, allowed in SECURITY_PROFILES.items():
        for method, path in allowed or ():
            if "/checkin" in path:
                # Built in admit.checkin: the calls a scanner cannot work without must exist
                # once that router is mounted.
                essential = (method, path.removeprefix(API_PREFIX)) in CHECKIN_CALLS
                if checkin_mounted and essential:
                    assert (method, path) in mounted, (profile, method, path)
                continue
            assert (method, path) in mounted, (profile, method, path)
            access = next(a for m, p, a in ROUTES if (m, p) == (method, path))
            assert _device_may_pass(access[0]), (profile, method, path)


# -- OAuth Bearer tokens ---------------------------------------------------------------------


@pytest.fixture(scope="module")
async def bearers(factory: Factory, world: World) -> dict[str, str]:
    """Tokens of a user holding every permission in both organizers: revoked, read-only,
    granted only the other organizer, and full (read write profile for the URL's organizer)."""
    from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
    from tests.oauth.helpers import bearer_token, make_app

    user = await factory.user()
    for org in (world.org, world.other):
        await factory.team(
            org,
            members=[user],
            event_permissions=list(EVENT_PERMISSIONS),
            organizer_permissions=list(ORGANIZER_PERMISSIONS),
        )
    app = await make_app(factory)
    return {
        "revoked": await bearer_token(factory, app, user, [world.org], revoked=True),
        "expired": await bearer_token(factory, app, user, [world.org], expired=True),
        "read": await bearer_token(factory, app, user, [world.org], "read profile"),
        "subset": await bearer_token(factory, app, user, [world.other]),
        "full": await bearer_token(factory, app, user, [world.org]),
    }


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize(("method", "path", "access"), ROUTES, ids=IDS)
async def test_bearer_tokens(client, world: World, bearers, method, path, access):
    from admit.kit.http.transaction import SAFE_METHODS

    _skip_public(access)
    url = _url(path, world)
    body = None if method in ("GET", "DELETE") else {}

    async def call(token: str) -> Any:
        return await client.request(method, url, json=body, headers=_bearer(token))

    for dead in ("revoked", "expired"):
        response = await call(bearers[dead])
        assert response.status_code == 401, (dead, response.text)
        assert response.json() == {"detail": BEARER_REFUSED}

    device_only = isinstance(access[0], DeviceAccess)
    # Read-only scope: unsafe methods are refused whatever the user's permissions.
    response = await call(bearers["read"])
    if method not in SAFE_METHODS or device_only:
        assert response.status_code == 403, response.text
    else:
        _assert_passed_access(response)

    # Granted only the other organizer: this one is as unknown as a missing one.
    if isinstance(access[0], OrganizerAccess | EventAccess):
        response = await call(bearers["subset"])
        assert response.status_code == 403, response.text
        assert response.json() == FORBIDDEN

    # The full token passes every check a user with these permissions passes (reads only:
    # writes by an all-powerful caller would change the module's shared world).
    if method in SAFE_METHODS:
        response = await call(bearers["full"])
        if device_only:
            assert response.status_code == 403 and response.json() == FORBIDDEN
        else:
            _assert_passed_access(response)
