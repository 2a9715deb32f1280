"""Access rules for every API route, generated from the routes themselves so none can skip them.

For each route: no credentials -> 401; a token of another organizer -> 403; a token of the
same organizer lacking the route's permission -> 403 (or not 401/403 when the route needs none);
an unknown organizer or event -> 403 even for an all-powerful token.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.routing import APIRoute

from admit.app import API_ROUTERS, create_app
from admit.config import Settings
from admit.kit.context import Authenticated, EventAccess, OrganizerAccess
from tests.factories import World, auth

ACCESS_TYPES = (Authenticated, OrganizerAccess, EventAccess)


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
    cases = []
    for router in API_ROUTERS:
        for route in router.routes:
            assert isinstance(route, APIRoute)
            access = _access_of(route)
            for method in sorted(route.methods):
                cases.append((method, route.path, access))
    return cases


def test_openapi_lists_exactly_the_enumerated_routes():
    app = create_app(Settings(database_url="sqlite+aiosqlite:///:memory:"))
    documented = {
        (method.upper(), path) for path, ops in app.openapi()["paths"].items() for method in ops
    }
    assert documented == {(m, p) for m, p, _ in ROUTES}


ROUTES = _api_routes()
IDS = [f"{m} {p}" for m, p, _ in ROUTES]


def test_every_api_route_declares_exactly_one_access_check():
    missing = [f"{m} {p}" for m, p, access in ROUTES if len(access) != 1]
    assert not missing, f"routes without exactly one access dependency: {missing}"
    assert len(ROUTES) > 20


def _url(path: str, world: World, organizer: str | None = None, event: str | None = None) -> str:
    return (
        path.replace("{organizer}", organizer or world.org.slug)
        .replace("{event}", event or world.event.slug)
        .replace("{team}", "1")
        .replace("{id}", "1")
    )


async def _call(client, method: str, url: str, token: str | None):
    headers = auth(token) if token else {}
    body = None if method in ("GET", "DELETE") else {}
    return await client.request(method, url, json=body, headers=headers)


@pytest.mark.parametrize(("method", "path", "access"), ROUTES, ids=IDS)
async def test_anonymous_is_401(client, world: World, method, path, access):
    response = await _call(client, method, _url(path, world), None)
    assert response.status_code == 401, response.text
    assert response.json() == {"detail": "Authentication credentials were not provided."}
    assert response.headers["www-authenticate"] == "Token"


@pytest.mark.parametrize(("method", "path", "access"), ROUTES, ids=IDS)
async def test_invalid_token_is_401(client, world: World, method, path, access):
    response = await _call(client, method, _url(path, world), "x" * 64)
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}


@pytest.mark.parametrize(("method", "path", "access"), ROUTES, ids=IDS)
async def test_other_tenant_is_403(client, world: World, method, path, access):
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
    team = await factory.team(world.org)
    token = await factory.token(team, active=False)
    response = await _call(client, method, _url(path, world), token)
    assert response.status_code == 401
    assert response.json() == {"detail": "Token inactive or deleted."}
