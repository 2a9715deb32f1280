"""The OpenAPI document itself: every operation documents its success answer with a schema,
its error answers and, for lists, its query parameters; the hand-kept tables name only
operations that exist. (``test_conformance`` holds the document to the live answers.)"""

from __future__ import annotations

from typing import Any

import pytest

from admit.app import API_ROUTERS
from admit.devices.access import NoCredentials
from admit.kit.http.routing import API_PREFIX
from admit.kit.openapi import query as openapi_query
from admit.kit.openapi import responses as openapi_responses
from tests.routes import API_ROUTES, openapi_document

ROUTING_PARAMS = {"organizer", "event"}


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return openapi_document()


def _operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, op)
        for path, ops in schema["paths"].items()
        for method, op in ops.items()
    ]


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    assert ref.startswith("#/components/schemas/"), ref
    return schema["components"]["schemas"][ref.rsplit("/", 1)[1]]


def _is_list(schema: dict[str, Any], op: dict[str, Any]) -> bool:
    body = op["responses"].get("200", {}).get("content", {}).get("application/json", {})
    props = _resolve(schema, body.get("schema", {})).get("properties", {})
    return {"count", "next", "previous", "results"} <= set(props)


def _public_routes() -> set[tuple[str, str]]:
    """Operations without credentials (found from the routes' access dependencies)."""
    found = set()
    for route in API_ROUTES:
        stack = [route.dependant]
        while stack:
            dep = stack.pop()
            if isinstance(dep.call, NoCredentials):
                found |= {(m, route.path) for m in route.methods}
            stack.extend(dep.dependencies)
    return found


def test_every_operation_documents_its_success_answer(schema):
    missing = []
    for method, path, op in _operations(schema):
        successes = {s: r for s, r in op["responses"].items() if s.startswith("2")}
        if not successes:
            missing.append(f"{method} {path}: no 2xx")
            continue
        for status, answer in successes.items():
            if status == "204":
                assert "content" not in answer, (method, path)
                continue
            content = answer.get("content", {})
            schemas = [c.get("schema") for c in content.values()]
            if not schemas or not all(schemas):
                missing.append(f"{method} {path}: {status} without a schema")
    assert not missing, "\n".join(missing)
    assert len(_operations(schema)) > 250


def test_every_operation_documents_its_errors(schema):
    public = _public_routes()
    problems = []
    for method, path, op in _operations(schema):
        responses = op["responses"]
        params = op.get("parameters", [])
        wanted = {"429", "503"}
        if (method, path) not in public:
            wanted |= {"401", "403"}
        if "requestBody" in op or method in ("POST", "PUT", "PATCH"):
            wanted |= {"400", "413"} if "requestBody" in op else {"400"}
        if any(p["in"] == "query" for p in params):
            wanted.add("400")
        if {p["name"] for p in params if p["in"] == "path"} - ROUTING_PARAMS:
            wanted.add("404")
        if method != "GET":
            wanted.add("409")
        missing = wanted - set(responses)
        if missing:
            problems.append(f"{method} {path}: no {sorted(missing)}")
        for status, answer in responses.items():
            if status.startswith(("4", "5")):
                body = answer.get("content", {}).get("application/json", {}).get("schema")
                if body is None:
                    problems.append(f"{method} {path}: {status} without a body schema")
    assert not problems, "\n".join(problems)


def test_error_bodies_have_the_documented_shapes(schema):
    components = schema["components"]["schemas"]
    assert components["Error"]["required"] == ["detail"]
    assert components["FieldErrors"]["additionalProperties"]
    op = schema["paths"][f"{API_PREFIX}/organizers/{{organizer}}/teams/"]["post"]
    assert op["responses"]["400"]["content"]["application/json"]["schema"] == {
        "anyOf": [
            {"$ref": "#/components/schemas/FieldErrors"},
            {"$ref": "#/components/schemas/Error"},
        ]
    }
    assert op["responses"]["403"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }


def test_every_list_documents_paging_ordering_and_filters(schema):
    lists = [(m, p, op) for m, p, op in _operations(schema) if m == "GET" and _is_list(schema, op)]
    assert len(lists) > 40
    problems = []
    for method, path, op in lists:
        params = {p["name"]: p for p in op.get("parameters", []) if p["in"] == "query"}
        for name in ("page", "page_size"):
            if params.get(name, {}).get("schema", {}).get("type") != "integer":
                problems.append(f"{method} {path}: no integer {name}")
        for name, param in params.items():
            if not param.get("description") or not param.get("schema"):
                problems.append(f"{method} {path}: {name} undescribed")
    assert not problems, "\n".join(problems)
    orders = schema["paths"][f"{API_PREFIX}/organizers/{{organizer}}/events/{{event}}/orders/"]
    names = {p["name"]: p for p in orders["get"]["parameters"]}
    assert {"status", "code", "email", "testmode", "modified_since", "ordering"} <= set(names)
    assert names["testmode"]["schema"] == {"type": "boolean"}
    assert names["modified_since"]["schema"] == {"type": "string", "format": "date-time"}
    assert "datetime" in names["ordering"]["x-ordering-fields"]


def test_crud_lists_document_their_resources_declarations(schema):
    """The generic lists: each filter and the ordering of the declared resource."""
    from admit.kit.resources.crud import Resource

    checked = 0
    for router in API_ROUTERS:
        for route in router.routes:
            if "GET" not in route.methods or not route.name.endswith("-list"):
                continue
            resources = [
                cell.cell_contents
                for handler in (c.cell_contents for c in route.endpoint.__closure__ or ())
                for cell in getattr(handler, "__closure__", None) or ()
                if isinstance(cell.cell_contents, Resource)
            ]
            if not resources:
                continue
            resource = resources[0]
            op = schema["paths"][route.path]["get"]
            names = {p["name"] for p in op["parameters"] if p["in"] == "query"}
            assert set(resource.filters.names) <= names, route.path
            if resource.ordering is not None:
                assert "ordering" in names, route.path
            checked += 1
    assert checked > 20


def test_every_reference_resolves(schema):
    components = schema["components"]["schemas"]

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if ref is not None:
                assert ref.rsplit("/", 1)[1] in components, ref
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)


def test_the_hand_kept_tables_name_existing_operations(schema):
    operations = {(m, p.removeprefix(API_PREFIX)) for m, p, _ in _operations(schema)}
    tables = {
        "RESPONSES": openapi_responses.RESPONSES,
        "OTHER_ANSWERS": openapi_responses.OTHER_ANSWERS,
        "EXTRA": openapi_query.EXTRA,
        "NOT_FROM_QUERY": openapi_query.NOT_FROM_QUERY,
    }
    for name, table in tables.items():
        stale = set(table) - operations
        assert not stale, f"{name} names no operation: {sorted(stale)}"
    for methods, pattern, _ in openapi_query.shaping():
        assert any(
            pattern.match(path) and methods in ("*", method) for method, path in operations
        ), pattern.pattern
