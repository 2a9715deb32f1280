"""Error messages read as plain words, never as the validation library's own wording.

Bodies are generated from each route's documented request schema: every field of the wrong
type, negative numbers, over-long texts, lists of wrong elements, missing fields, and the
garbage of test_garbage_bodies. They go to every writing route (enumerated from
``admit.app.API_ROUTERS``, as the access tests do) and straight to every write schema (which
also reaches objects a route would first have to find). No message may contain the library's
phrases ("Input should be", "Field required", ...), a Python repr or a type name."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import admit.app  # noqa: F401  (imports every write schema)
from admit.kit.http.errors import errors_from_pydantic
from admit.kit.resources.schema import TEXT_MAX_LENGTH, WriteModel
from tests.factories import World, auth

# One database and world per module, as the generated access tests (invalid bodies write
# nothing).
from tests.routes import client, factory, openapi_document, world  # noqa: F401
from tests.test_access_generated import ROUTES
from tests.test_garbage_bodies import GARBAGE

FORBIDDEN = (
    "Input should be",
    "Field required",
    "Value error,",
    "Decimal('",
    "type=",
    "pydantic",
    "validation error for",
    "Assertion failed",
    "Extra inputs",
    "should have at",
    "after validation",
    "input_value",
)

_DOC = openapi_document()


def _resolve(schema: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    """The schema behind ``$ref`` / ``allOf`` / a nullable ``anyOf`` (its non-null option)."""
    for _ in range(10):
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            schema = doc.get("components", {}).get("schemas", {}).get(name) or doc.get(
                "$defs", {}
            ).get(name, {})
        elif "allOf" in schema and len(schema["allOf"]) == 1:
            schema = schema["allOf"][0]
        elif "anyOf" in schema:
            options = [o for o in schema["anyOf"] if o.get("type") != "null"]
            schema = options[0] if options else {}
        else:
            return schema
    return schema


def _wrong(schema: dict[str, Any], doc: dict[str, Any], depth: int = 0) -> Any:
    """A value of the wrong type (or an impossible value) for ``schema``."""
    schema = _resolve(schema, doc)
    kind = schema.get("type")
    if "enum" in schema or "const" in schema:
        return "no such choice"
    if kind == "string":
        return "not a date" if schema.get("format") in ("date-time", "date", "time") else {"a": 1}
    if kind in ("integer", "number"):
        return "abc"
    if kind == "boolean":
        return "maybe"
    if kind == "array":
        items = schema.get("items", {})
        return [_wrong(items, doc, depth + 1), None] if depth < 3 else "x"
    if kind == "object" or "properties" in schema:
        if depth >= 3:
            return [1]
        props = schema.get("properties")
        if props:
            return {k: _wrong(v, doc, depth + 1) for k, v in props.items()}
        return {"en": [1]}
    return None


def _bodies(schema: dict[str, Any], doc: dict[str, Any]) -> Iterator[Any]:
    schema = _resolve(schema, doc)
    props = schema.get("properties", {})
    yield from GARBAGE
    yield {}
    if schema.get("type") == "array":
        yield [_wrong(schema.get("items", {}), doc), "junk"]
        return
    if not props:
        return
    resolved = {k: _resolve(v, doc) for k, v in props.items()}
    yield {k: _wrong(v, doc) for k, v in props.items()}
    yield {k: -1 for k, v in resolved.items() if v.get("type") in ("integer", "number")}
    yield {k: "-1.005" for k, v in resolved.items() if v.get("type") in ("integer", "number")}
    yield {k: [] for k, v in resolved.items() if v.get("type") == "array"}
    long = "x" * (TEXT_MAX_LENGTH + 1)
    yield {
        k: long if v.get("type") == "string" else {"en": long}
        for k, v in resolved.items()
        if v.get("type") in ("string", "object")
    }
    # Lists of objects: one good-looking element, one of the wrong type, one with wrong fields.
    nested = {}
    for k, v in resolved.items():
        items = _resolve(v.get("items", {}), doc) if v.get("type") == "array" else {}
        if items.get("properties"):
            nested[k] = [{}, "junk", _wrong(items, doc)]
    if nested:
        yield nested


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


# "no more than 3 elements" (a count of list elements; a layout "is a list of elements" is fine)
COUNTED_ELEMENTS = re.compile(r"\d elements")


def _raw_wording(body: Any) -> list[str]:
    """The offending messages, shortened (an echoed over-long input would flood the report)."""
    return [
        s[:200]
        for s in _strings(body)
        if any(f in s for f in FORBIDDEN) or COUNTED_ELEMENTS.search(s)
    ]


def _request_schema(method: str, path: str) -> dict[str, Any]:
    operation = _DOC["paths"].get(path, {}).get(method.lower(), {})
    content = operation.get("requestBody", {}).get("content", {})
    return content.get("application/json", {}).get("schema", {})


WRITES = [(m, p) for m, p, _ in ROUTES if m in ("POST", "PUT", "PATCH")]


def _url(path: str, world: World) -> str:
    return (
        path.replace("{organizer}", world.org.slug)
        .replace("{event}", world.event.slug)
        .replace("{code}", "ABCDE")
        .replace("{local_id}", "1")
        .replace("{call}", "1")
        .replace("{id1}", "1")
        .replace("{id2}", "1")
        .replace("{team}", "1")
        .replace("{id}", "1")
        .replace("{item}", "1")
        .replace("{question}", "1")
        .replace("{subevent_id}", "1")
        .replace("{list}", "1")
    )


@pytest.mark.parametrize(("method", "path"), WRITES, ids=[f"{m} {p}" for m, p in WRITES])
async def test_route_answers_in_plain_words(client, world: World, method, path):
    url = _url(path, world)
    for body in _bodies(_request_schema(method, path), _DOC):
        response = await client.request(method, url, json=body, headers=auth(world.admin))
        assert response.status_code != 422, (body, response.text)
        if response.headers.get("content-type", "").startswith("application/json"):
            raw = _raw_wording(response.json())
            assert not raw, (str(body)[:300], raw[:5])


def _write_schemas() -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    stack: list[type] = [WriteModel]
    while stack:
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith("admit."):
                found.append(sub)
    return sorted(set(found), key=lambda s: (s.__module__, s.__qualname__))


SCHEMAS = _write_schemas()


@pytest.mark.parametrize("schema", SCHEMAS, ids=[s.__qualname__ for s in SCHEMAS])
def test_schema_errors_in_plain_words(schema: type[BaseModel]):
    json_schema = schema.model_json_schema()
    checked = 0
    for body in _bodies(json_schema, json_schema):
        try:
            schema.model_validate(body)
        except ValidationError as exc:
            tree = errors_from_pydantic(exc.errors(include_url=False))
            checked += 1
            raw = _raw_wording(tree)
            exc = None  # type: ignore[assignment]  (its text would flood a failure report)
            assert not raw, (str(body)[:300], raw[:5])
    assert checked, "no invalid body was generated"


def test_routes_and_schemas_are_enumerated():
    assert len(WRITES) > 100
    assert len(SCHEMAS) > 60
    documented = [p for m, p in WRITES if _request_schema(m, p)]
    assert len(documented) > 100
