"""Check-in rules cannot burn the serving loop (issue 35): a 16 KB rule that passed validation
made each refused scan take 19.5 s (explaining a refusal expanded every alternative of the
rule). Rules are bounded at save (bytes, depth, nodes, operators, and the operations their
evaluation can take) and every scan evaluates with an operation budget; a rule past it is a
refusal with a clear reason. Operations are counted, not timed."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from admit.checkin import lane
from admit.checkin.jsonlogic import Budget, RuleError
from admit.checkin.rule_variables import EventDates, History, RuleVars
from admit.checkin.rules import MAX_BYTES, OPERATION_BUDGET, cost, evaluate, validate
from tests.checkin import helpers as h
from tests.factories import World, auth

NOW = dt.datetime(2030, 5, 1, 12, 0, tzinfo=dt.UTC)
TOO_COMPLEX = "The check-in rules are too complex to evaluate."


def variables(entries: int = 0) -> RuleVars:
    return RuleVars(
        now=NOW,
        dates=EventDates("Europe/Berlin", NOW),
        product=1,
        variation=None,
        gate=None,
        history=History([("entry", NOW - dt.timedelta(hours=i + 1)) for i in range(entries)]),
    )


def leaf(value: int) -> dict[str, Any]:
    """A condition no scan of ``variables()`` meets (no entries yet): every leaf fails, so the
    refusal is explained, the expensive part."""
    return {"==": [{"var": "entries_number"}, value]}


def and_of_ors(count: int, width: int = 4) -> dict[str, Any]:
    """width ** count alternatives once written out."""
    return {"and": [{"or": [leaf(j + 1) for j in range(width)]} for _ in range(count)]}


def nested_repeats(levels: int) -> dict[str, Any]:
    """The same sub-expression repeated at every level: the rule doubles per level."""
    rule = leaf(1)
    for _ in range(levels):
        rule = {"and": [{"or": [rule, leaf(2)]}, {"or": [rule, leaf(3)]}]}
    return rule


def wide_and(count: int) -> dict[str, Any]:
    return {"and": [leaf(i + 1) for i in range(count)]}


def deep_alternation(levels: int) -> dict[str, Any]:
    rule: dict[str, Any] = leaf(1)
    for level in range(levels):
        rule = {"or" if level % 2 else "and": [rule, leaf(level + 2)]}
    return rule


def or_of_ands(count: int) -> dict[str, Any]:
    return {"or": [{"and": [leaf(i + 1), leaf(i + 2)]} for i in range(count)]}


BIG = {"==": [{"var": "gate"}, "x" * MAX_BYTES]}

SHAPES: list[Callable[[int], dict[str, Any]]] = [
    and_of_ors,
    nested_repeats,
    wide_and,
    deep_alternation,
    or_of_ands,
]


def accepted(rule: Any) -> bool:
    try:
        validate(rule)
    except RuleError:
        return False
    return True


def largest_accepted(shape: Callable[[int], dict[str, Any]]) -> dict[str, Any]:
    """The biggest rule of ``shape`` that validation accepts."""
    size = 1
    while accepted(shape(size + 1)):
        size += 1
    assert not accepted(shape(size + 1))
    return shape(size)


def spent(rule: Any) -> tuple[int, tuple[bool, str | None]]:
    budget = Budget(10**9)
    outcome = evaluate(rule, variables(), budget)
    return budget.spent, outcome


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.__name__)
def test_the_largest_rule_accepted_evaluates_within_the_budget(shape):
    rule = largest_accepted(shape)
    operations, (passed, why) = spent(rule)
    assert not passed and why and why != TOO_COMPLEX
    # The bound validation computed holds, and fits the budget scans evaluate with.
    assert operations <= cost(rule) <= OPERATION_BUDGET
    assert evaluate(rule, variables()) == (passed, why)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.__name__)
def test_cost_bounds_what_any_scan_spends(shape):
    for size in (1, 2, 3, 5, 8):
        rule = shape(size)
        for entries in (0, 1, 2, 3):
            budget = Budget(10**9)
            evaluate(rule, variables(entries), budget)
            assert budget.spent <= cost(rule), (size, entries)


def test_exponential_rules_are_refused_at_save():
    for rule in (and_of_ors(60), nested_repeats(6)):
        assert len(orjson.dumps(rule)) < MAX_BYTES  # small: refused for what it costs
        with pytest.raises(RuleError, match="too complex"):
            validate(rule)
    with pytest.raises(RuleError, match="too large"):
        validate(BIG)
    # Arguments of var/buildTime/lookup are values: a rule cannot hide in them uncounted.
    with pytest.raises(RuleError, match="plain values"):
        validate({"lookup": ["product", "1", nested_repeats(3)]})


def test_a_stored_exponential_rule_is_stopped_by_the_budget():
    """A rule stored before the bounds: the scan is refused with a reason, after at most the
    budget's operations (the same rule, unbudgeted, takes ten times the budget)."""
    rule = nested_repeats(6)
    operations, (passed, _) = spent(rule)
    assert not passed and operations > 2 * OPERATION_BUDGET
    budget = Budget(OPERATION_BUDGET)
    assert evaluate(rule, variables(), budget) == (False, TOO_COMPLEX)
    assert budget.spent <= OPERATION_BUDGET + 1000  # one step past the line at most


async def test_save_answers_400_naming_rules(client, world: World):
    url = h.event_url(world, "checkinlists/")
    for rule in (and_of_ors(60), nested_repeats(6), BIG):
        response = await client.post(
            url, json={"name": "Doors", "rules": rule}, headers=auth(world.admin)
        )
        assert response.status_code == 400, response.text
        assert list(response.json()) == ["rules"]
    fine = await client.post(
        url, json={"name": "Doors", "rules": and_of_ors(3)}, headers=auth(world.admin)
    )
    assert fine.status_code == 201, fine.text


async def test_redeem_with_a_stored_bomb_is_a_rule_refusal(
    client, world: World, factory, monkeypatch
):
    """Through the redeem route (SQLite) and its fast lane (PostgreSQL): the scan is refused
    by the rules with the budget's reason, not a 500, not a stalled loop."""
    laned: list[bool] = []
    original = lane.lane_context

    @contextlib.asynccontextmanager
    async def spy(*args: Any) -> Any:
        async with original(*args) as ctx:
            laned.append(ctx is not None)
            yield ctx

    monkeypatch.setattr(lane, "lane_context", spy)
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event, rules=nested_repeats(6))
    _, (pos,) = await h.order(factory, world.event, item)
    scan = await h.redeem(client, world, pos.secret, [clist.id])
    assert scan.status_code == 200, scan.text  # a refused scan, as for any rule
    assert scan.json()["status"] == "error" and scan.json()["reason"] == "rules"
    assert scan.json()["reason_explanation"] == TOO_COMPLEX
    # On PostgreSQL the lane took the scan (and evaluated the rule); SQLite has no lane.
    assert laned == ([True] if client._transport.app.state.db.fast.native else [])
