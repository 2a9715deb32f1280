"""Deeply nested JSON bodies (issue 35): 1,020 levels with an escaped NUL inside used to crash
the body reader (its NUL search recursed past Python's limit: a 500 with a 1,000-line
traceback), and free-form fields (``api_meta``, ``meta_data``) nested 252+ levels were stored
and then could not be written out. Every route now answers 400 past ``MAX_JSON_DEPTH``."""

from __future__ import annotations

import orjson
import pytest

from admit.kit.http.body import MAX_JSON_DEPTH, json_depth
from tests.factories import World, auth
from tests.routes import client, factory, world  # noqa: F401
from tests.test_access_generated import ROUTES

WRITES = [(m, p) for m, p, _ in ROUTES if m in ("POST", "PUT", "PATCH")]


def nested(levels: int, leaf: object = "a\x00b") -> object:
    value: object = leaf
    for level in range(levels):
        value = {"k": value} if level % 2 else [value]
    return value


def deep_json(levels: int, leaf: bytes = b'"a\\u0000b"') -> bytes:
    """``levels`` arrays and objects around ``leaf`` (built as text: orjson writes no more
    than 254 levels)."""
    body = leaf
    for level in range(levels):
        body = b'{"k":' + body + b"}" if level % 2 else b"[" + body + b"]"
    return body


def deep_body(levels: int = 1020) -> bytes:
    body = deep_json(levels)
    assert b"\\u0000" in body and body.count(b"[") + body.count(b"{") == levels
    return body


def test_depth_is_measured_without_recursion():
    assert json_depth(nested(5000, 1)) == 5000
    assert json_depth({"a": [1, {"b": []}], "c": {}}) == 4
    assert json_depth("x") == 0


def _url(path: str, world: World) -> str:
    return (
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


@pytest.mark.parametrize(("method", "path"), WRITES, ids=[f"{m} {p}" for m, p in WRITES])
async def test_deep_body_never_fails(client, world: World, method, path):
    """1,020 levels with an escaped NUL: never a 5xx (the client fixture fails on one)."""
    response = await client.request(
        method,
        _url(path, world),
        content=deep_body(),
        headers={**auth(world.admin), "Content-Type": "application/json"},
    )
    assert response.status_code < 500, response.text
    assert response.status_code != 422, response.text


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/organizers/{organizer}/events/{event}/orders/",
        "/api/v1/organizers/{organizer}/events/{event}/items/",
        "/api/v1/organizers/{organizer}/checkinrpc/redeem/",
        "/api/v1/organizers/{organizer}/events/{event}/cartpositions/",
        "/api/v1/organizers/{organizer}/events/{event}/vouchers/batch_create/",
    ],
)
async def test_deep_body_is_a_400(client, world: World, path):
    response = await client.post(
        _url(path, world),
        content=deep_body(),
        headers={**auth(world.admin), "Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert response.json() == {
        "non_field_errors": [f"JSON is nested more than {MAX_JSON_DEPTH} levels deep."]
    }


@pytest.mark.parametrize(
    ("path", "field", "body"),
    [
        (
            "/api/v1/organizers/{organizer}/events/{event}/orders/",
            "api_meta",
            {"email": "a@example.org", "positions": [], "api_meta": None},
        ),
        (
            "/api/v1/organizers/{organizer}/events/{event}/items/",
            "meta_data",
            {"name": {"en": "Deep"}, "default_price": "1.00", "meta_data": None},
        ),
        (
            "/api/v1/organizers/{organizer}/checkinrpc/redeem/",
            "answers",
            {"secret": "x", "lists": [1], "answers": None},
        ),
        (
            "/api/v1/organizers/{organizer}/events/{event}/cartpositions/",
            "item",
            {"item": None},
        ),
    ],
)
@pytest.mark.parametrize("leaf", [b'"a\\u0000b"', b"1"], ids=["nul", "plain"])
@pytest.mark.parametrize("levels", [260, 1020])
async def test_deep_free_form_field_is_a_400(client, world: World, path, field, body, levels, leaf):
    """A free-form field nested past the bound (252+ levels used to be stored, then answered
    500 when written out) is refused; so is one with an escaped NUL deep inside."""
    body[field] = "DEEP"
    content = orjson.dumps(body).replace(b'"DEEP"', b'{"deep":' + deep_json(levels, leaf) + b"}")
    response = await client.post(
        _url(path, world),
        content=content,
        headers={**auth(world.admin), "Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert "nested more than" in response.text
