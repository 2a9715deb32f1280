"""What a newcomer reads in the API docs: every operation of the generated document has a summary
and a description in plain words saying what it needs, every write that reads a body documents
that body, no operation repeats a tag, and no text points at the source code. A new route
without a summary or description fails here."""

from __future__ import annotations

import inspect
import re
import sys
from typing import Any

import pytest
from fastapi.routing import APIRoute

from admit.shop.routes import PUBLIC_ROUTERS
from tests.routes import API_ROUTES, openapi_document

DOCUMENT = openapi_document()
OPERATIONS = sorted(
    (method.upper(), path, operation)
    for path, operations in DOCUMENT["paths"].items()
    for method, operation in operations.items()
)
IDS = [f"{m} {p}" for m, p, _ in OPERATIONS]
# The public checkout's routes (admit/shop) take no credentials and are mounted apart from the
# API routers, but they are part of the document.
PUBLIC_ROUTES = [r for router in PUBLIC_ROUTERS for r in router.routes if isinstance(r, APIRoute)]
ROUTES = {
    (method, route.path): route
    for route in [*API_ROUTES, *PUBLIC_ROUTES]
    for method in route.methods
}
# Names a generated summary falls back to (``checkinlists-list``, ``mark_paid``): not words.
MACHINE = re.compile(r"[A-Za-z]+-[A-Z]|_|^\w+$")
SOURCE = re.compile(r"\b[\w/]+\.py\b|\bkit/|\badmit\.\w+|\bsrc/")
ACCESS_LINE = re.compile(r"\*\*(Permission|Credentials):\*\* \S")
BODY_READERS = (
    "read_object",
    "read_json",
    "read_list",
    "read_form",
    "receive_upload",
    "request.body(",
    "request.json(",
    "request.form(",
)


def test_the_document_has_every_route():
    assert len(OPERATIONS) == len(ROUTES) > 250


@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS, ids=IDS)
def test_every_operation_has_a_summary_and_a_description(method, path, operation):
    summary = operation.get("summary", "")
    assert summary and not MACHINE.search(summary), summary
    assert summary[0].isupper() and not summary.endswith("."), summary
    description = operation.get("description", "")
    paragraphs = description.split("\n\n")
    assert ACCESS_LINE.match(paragraphs[-1]), description
    what = " ".join(paragraphs[:-1])
    assert len(what.split()) >= 5, f"{method} {path}: say what it does: {description!r}"
    assert not SOURCE.search(description + summary), description


@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS, ids=IDS)
def test_no_operation_repeats_a_tag(method, path, operation):
    tags = operation.get("tags", [])
    assert tags and len(tags) == len(set(tags)), tags


def test_summaries_of_one_path_differ():
    for path, operations in DOCUMENT["paths"].items():
        summaries = [operation["summary"] for operation in operations.values()]
        if len(set(operations) & {"post", "patch"}) == 2 and "bulk_" in path:
            continue  # the reference's two methods for one bulk action
        assert len(summaries) == len(set(summaries)), (path, summaries)


def _source_reading(route: APIRoute) -> str:
    """The endpoint's source with the source of the module's functions it calls."""
    source = inspect.getsource(route.endpoint)
    module = sys.modules[route.endpoint.__module__]
    for name in set(re.findall(r"\b(_?\w+)\(", source)):
        helper: Any = getattr(module, name, None)
        if inspect.isfunction(helper) and helper.__module__ == module.__name__:
            source += inspect.getsource(helper)
    return source


WRITES = [(m, p, o) for m, p, o in OPERATIONS if m in ("POST", "PUT", "PATCH")]


@pytest.mark.parametrize(
    ("method", "path", "operation"), WRITES, ids=[f"{m} {p}" for m, p, _ in WRITES]
)
def test_every_write_that_reads_a_body_documents_it(method, path, operation):
    route = ROUTES[(method, path)]
    if not any(reader in _source_reading(route) for reader in BODY_READERS):
        return  # reads no body (or declares it through a model FastAPI documents)
    body = operation.get("requestBody")
    assert body, f"{method} {path} reads a body and documents none"
    assert body["content"] and all(c["schema"] for c in body["content"].values()), body


def test_the_order_actions_document_their_options():
    base = "/api/v1/organizers/{organizer}/events/{event}/orders/{code}"
    for action, field in (("mark_paid", "send_email"), ("mark_canceled", "cancellation_fee")):
        body = DOCUMENT["paths"][f"{base}/{action}/"]["post"]["requestBody"]
        ref = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        assert field in DOCUMENT["components"]["schemas"][ref]["properties"], action
    extend = DOCUMENT["paths"][f"{base}/extend/"]["post"]["requestBody"]
    assert extend["required"] is True
