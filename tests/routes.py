"""The API's routes and its OpenAPI document, listed once for the tests generated from them,
and the world those tests share.

The route-wide tests (access rules, HTTP methods, error wording, garbage bodies) run thousands
of cases of which none changes what the next one sees (a refusal or a read writes nothing):
one database and one world per test module and backend, not per case. Building the document
takes seconds, and every xdist worker collects every module: it is built once per process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import cache
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute

from admit.app import API_ROUTERS, create_app
from admit.config import Settings
from tests.conftest import _truncate, asgi_client
from tests.factories import Factory, World, build_world


def _api_routes() -> list[APIRoute]:
    routes = [route for router in API_ROUTERS for route in router.routes]
    assert all(isinstance(route, APIRoute) for route in routes), "an API route of another kind"
    return routes  # type: ignore[return-value]


API_ROUTES = _api_routes()
# The methods of each API path, as the routers declare them.
METHODS: dict[str, set[str]] = {}
for _route in API_ROUTES:
    METHODS.setdefault(_route.path, set()).update(_route.methods)


@cache
def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of an application without a database. Shared: read, never
    change it."""
    return create_app(Settings(database_url="sqlite+aiosqlite:///:memory:")).openapi()


@pytest.fixture(scope="module")
async def factory(app) -> Factory:
    await _truncate(app)
    return Factory(app.state.db.sessionmaker)


@pytest.fixture(scope="module")
async def world(factory: Factory) -> World:
    return await build_world(factory)


@pytest.fixture(scope="module")
async def client(app, world: World) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(app) as c:
        yield c
