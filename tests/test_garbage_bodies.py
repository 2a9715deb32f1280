"""Every writing route, fed bodies of the wrong shape by an all-powerful token, never fails:
no 5xx (the client fixture also checks that) and never FastAPI's 422. Bodies the resource can
take (a discount has no required field; an empty bulk list is fine) may succeed."""

from __future__ import annotations

import pytest

from tests.factories import World, auth

# One database and world per module (a garbage body writes nothing, and what a lenient
# resource does create only widens what later cases run into).
from tests.routes import client, factory, world  # noqa: F401
from tests.test_access_generated import ROUTES

WRITES = [(m, p) for m, p, _ in ROUTES if m in ("POST", "PUT", "PATCH")]
GARBAGE = [
    [],
    "text",
    12,
    {"name": {"en": ["x"]}, "item": "x", "items": "x", "positions": {"a": 1}, "price": "abc"},
    {k: {"nested": [None]} for k in ("name", "slug", "item", "size", "value", "positions")},
    {"positions": [{"item": 2**40, "price": "1e400"}], "size": -1, "date_from": "0000-00-00"},
]


@pytest.mark.parametrize(("method", "path"), WRITES, ids=[f"{m} {p}" for m, p in WRITES])
async def test_garbage_bodies_never_fail(client, world: World, method, path):
    url = (
        path.replace("{organizer}", world.org.slug)
        .replace("{event}", world.event.slug)
        .replace("{team}", "1")
        .replace("{id}", "1")
        .replace("{code}", "ABCDE")
        .replace("{item}", "1")
        .replace("{question}", "1")
        .replace("{subevent_id}", "1")
        .replace("{list}", "1")
    )
    for body in GARBAGE:
        response = await client.request(method, url, json=body, headers=auth(world.admin))
        assert response.status_code < 500, (body, response.text)
        assert response.status_code != 422, (body, response.text)
        if not isinstance(body, dict | list):
            assert 400 <= response.status_code < 500, (body, response.text)
