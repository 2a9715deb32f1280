"""Every operation of the OpenAPI document, run for real, answers as documented.

The scenarios (``scenarios.py``) make real data with a World and call every operation, the
detail ones through the recipes of ``tests/conditional/recipes.py``. Every answer (setup calls
included) is checked by ``validator.Document``: its status is documented for its operation and
its JSON body validates against the documented schema. At the end every operation must have
answered a documented 2xx at least once, and every list must read exactly the query parameters
it documents (no parameter read undocumented, none documented that the route never reads).
"""

from __future__ import annotations

from typing import Any

import pytest

from admit.kit.openapi import query as openapi_query
from tests.conditional.recipes import Env
from tests.conftest import _truncate, asgi_client
from tests.factories import Factory, build_world
from tests.openapi.scenarios import SCENARIOS
from tests.openapi.validator import Document

# Parameters a route reads only in some cases (or through ``items()``), documented in EXTRA.
SOMETIMES_READ = {"attr[{property}]", "with_availability_for", "expand", "clone_from"}
CHECKIN_LIST = "/api/v1/organizers/{organizer}/events/{event}/checkinlists/{id}/"
# Read on the way without any effect on the answer: looking up the list the URL names loads
# its counts unless ``exclude``d; one ticket of a list is found through the list's query,
# ordering included.
INCIDENTAL = {
    ("GET", f"{CHECKIN_LIST}status/"): {"exclude"},
    ("GET", f"{CHECKIN_LIST}positions/"): {"exclude"},
    ("GET", CHECKIN_LIST.replace("{id}", "{list}") + "positions/{id}/"): {"exclude", "ordering"},
}
# Methods that exist only to be refused, as in the reference (gift cards are never deleted).
REFUSED = {("DELETE", "/api/v1/organizers/{organizer}/giftcards/{id}/")}


async def _run(app: Any, document: Document, scenario: Any) -> None:
    await _truncate(app)
    factory = Factory(app.state.db.sessionmaker)
    world = await build_world(factory)
    async with asgi_client(
        app, request_hooks=[document.before], response_hooks=[document.check]
    ) as client:
        await scenario(Env(client, world, factory))


@pytest.fixture(scope="module")
async def document(app: Any) -> Document:
    schema = app.openapi()
    document = Document(schema)
    background = app.state.background
    with document.tracking_query_reads():
        async with background.serving(scheduler=False):
            for scenario in SCENARIOS:
                try:
                    await _run(app, document, scenario)
                except Exception as exc:  # reported with the others below
                    document.failures.append(f"scenario {scenario.__name__}: {exc!r}"[:2000])
    await _truncate(app)
    return document


async def test_every_answer_matches_the_document(document: Document):
    assert not document.failures, "\n".join(document.failures)


async def test_every_operation_answered_a_documented_success(document: Document):
    missing = sorted(document.operations - document.ok - REFUSED)
    detail = [f"{m} {p}: {sorted(document.answered.get((m, p), ()))}" for m, p in missing]
    assert not missing, "operations never answered 2xx:\n" + "\n".join(detail)


def _query_names(operation: dict[str, Any]) -> set[str]:
    return {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}


async def test_lists_read_exactly_the_documented_query_parameters(document: Document):
    problems = []
    for op, read in sorted(document.read_params.items()):
        documented = _query_names(document.operation(op))
        incidental = INCIDENTAL.get(op, set())
        undocumented = {n for n in read - documented - incidental if not n.startswith("attr[")}
        if undocumented:
            problems.append(f"{op}: reads undocumented {sorted(undocumented)}")
        if op[0] == "GET" and "page" in documented:
            never = documented - read - SOMETIMES_READ
            if never:
                problems.append(f"{op}: documents {sorted(never)} but never reads them")
    assert not problems, "\n".join(problems)
    assert openapi_query.EXTRA  # the hand-listed ones are part of the document too
