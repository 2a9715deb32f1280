"""Completes FastAPI's document: success answers of the routes that render their own JSON,
the query parameters of every list, and every operation's error answers.

Runs once, when the document is first asked for; nothing here is on a request's path.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from admit.kit.openapi import errors as openapi_errors
from admit.kit.openapi import query as openapi_query
from admit.kit.openapi import responses as openapi_responses
from admit.kit.openapi.describe import describe
from admit.kit.resources.crud import MOUNTED

PUBLIC_ACCESS = ("NoCredentials",)  # the one route a one-time secret in the body authenticates


def complete(schema: dict[str, Any], app: FastAPI, prefix: str) -> None:
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    names = add_models(components, openapi_responses.models())
    routes = _routes(app)
    mounted = {resource.name: resource for resource in MOUNTED}
    for path, operations in schema.get("paths", {}).items():
        local = path.removeprefix(prefix)
        for method, operation in operations.items():
            key = (method.upper(), local)
            _document_success(operation, key, names)
            is_list = _is_list(operation, components)
            route = routes.get((method.upper(), path))
            if route is not None:
                describe(operation, route, mounted)
            if is_list and route is not None:
                _add_list_parameters(operation, route)
                dropped = openapi_query.NOT_FROM_QUERY.get(key, frozenset())
                operation["parameters"] = [
                    p for p in operation["parameters"] if p["name"] not in dropped
                ]
            for param in openapi_query.extra_parameters(*key, is_list=is_list):
                _add_parameter(operation, param)
            _document_other_answers(operation, key, names)
            openapi_errors.add_errors(
                method.upper(),
                local,
                operation,
                credentials=_takes_credentials(route),
                is_list=is_list,
            )
    for name, definition in openapi_errors.SCHEMAS.items():
        components.setdefault(name, definition)


def add_models(components: dict[str, Any], models: list[type[BaseModel]]) -> dict[str, str]:
    """Adds the models' schemas; returns each model's component name. A name the routes'
    own schemas already use for another shape gets a suffix (never overwrites it)."""
    refs, defs = models_json_schema(
        [(m, "serialization") for m in models], ref_template="#/components/schemas/{model}"
    )
    found = defs.get("$defs", {})
    clashes = [n for n, d in found.items() if n in components and components[n] != d]
    if clashes:
        text = json.dumps([refs_by_name(refs), found])
        for name in clashes:
            text = text.replace(f'"#/components/schemas/{name}"', f'"#/components/schemas/{name}_"')
        named, found = json.loads(text)
        found = {(f"{n}_" if n in clashes else n): d for n, d in found.items()}
    else:
        named = refs_by_name(refs)
    for name, definition in found.items():
        components.setdefault(name, definition)
    return {name: ref.rsplit("/", 1)[1] for name, ref in named.items()}


def refs_by_name(refs: dict[Any, Any]) -> dict[str, str]:
    return {model.__name__: ref["$ref"] for (model, _mode), ref in refs.items()}


def _routes(app: FastAPI) -> dict[tuple[str, str], APIRoute]:
    return {
        (method, route.path): route
        for route in app.routes
        if isinstance(route, APIRoute)
        for method in route.methods
    }


def _content(answer: openapi_responses.Answer, names: dict[str, str]) -> dict[str, Any] | None:
    if answer == openapi_responses.BINARY:
        return {"*/*": {"schema": {"type": "string", "format": "binary"}}}
    if answer == openapi_responses.NO_BODY:
        return None
    if answer == openapi_responses.ERROR:
        return {"application/json": {"schema": openapi_errors.error_body("")}}
    assert not isinstance(answer, str)
    ref = {"$ref": f"#/components/schemas/{names[answer.__name__]}"}
    return {"application/json": {"schema": ref}}


def _answer(responses: dict[str, Any], status: str, content: dict[str, Any] | None) -> None:
    description = (
        openapi_errors.DESCRIPTIONS.get(status)
        or openapi_responses.DESCRIPTIONS.get(status)
        or "Successful Response"
    )
    answer = responses.setdefault(status, {"description": description})
    if content is None:
        answer.pop("content", None)
    else:
        answer["content"] = content


def _document_success(
    operation: dict[str, Any], key: tuple[str, str], names: dict[str, str]
) -> None:
    answer = openapi_responses.RESPONSES.get(key)
    if answer is None:
        return
    responses = operation.setdefault("responses", {})
    declared = [s for s in responses if s.startswith("2")]
    if isinstance(answer, tuple):
        status, answer = answer
        for other in declared:
            responses.pop(other)
    else:
        status = declared[0] if declared else "200"
    _answer(responses, status, _content(answer, names))
    if answer == openapi_responses.BINARY:
        for code, model in openapi_responses.DOWNLOAD_STATES.items():
            _answer(responses, code, _content(model, names))


def _document_other_answers(
    operation: dict[str, Any], key: tuple[str, str], names: dict[str, str]
) -> None:
    responses = operation.setdefault("responses", {})
    for status, answer in openapi_responses.OTHER_ANSWERS.get(key, {}).items():
        _answer(responses, status, _content(answer, names))


def _resolve(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return components.get(ref.rsplit("/", 1)[1], {}) if ref else schema


def _is_list(operation: dict[str, Any], components: dict[str, Any]) -> bool:
    """A list answers the page envelope ``{count, next, previous, results}``."""
    ok = operation.get("responses", {}).get("200", {})
    schema = ok.get("content", {}).get("application/json", {}).get("schema")
    if not schema:
        return False
    props = _resolve(schema, components).get("properties", {})
    return {"count", "next", "previous", "results"} <= set(props)


def _add_parameter(operation: dict[str, Any], param: dict[str, Any]) -> None:
    params = operation.setdefault("parameters", [])
    if not any(p["name"] == param["name"] and p["in"] == param["in"] for p in params):
        params.append(param)


def _add_list_parameters(operation: dict[str, Any], route: APIRoute) -> None:
    filters, ordering = openapi_query.declarations(route.endpoint)
    for param in openapi_query.paging():
        _add_parameter(operation, param)
    if ordering is not None:
        _add_parameter(operation, openapi_query.ordering_param(ordering))
    for flt in filters:
        _add_parameter(operation, openapi_query.filter_param(flt))


def _takes_credentials(route: APIRoute | None) -> bool:
    if route is None:
        return True
    stack = [route.dependant]
    while stack:
        dep = stack.pop()
        if type(dep.call).__name__ in PUBLIC_ACCESS:
            return False
        stack.extend(dep.dependencies)
    return True
