"""The JsonLogic evaluator and the check-in rule layer: operators, variables, validation,
explanations."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from admit.checkin.jsonlogic import Logic, RuleError, loose_equal, truthy
from admit.checkin.rule_variables import EventDates, History, RuleVars
from admit.checkin.rules import evaluate, validate

UTC = dt.UTC
NOW = dt.datetime(2030, 5, 1, 12, 0, tzinfo=UTC)  # a Wednesday
logic = Logic()


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, False), ("", False), ([], False), (None, False), (False, False), ("0", True),
     (1, True), ("a", True), ([0], True), ({}, True), (-1, True)],
)  # fmt: skip
def test_truthiness(value, expected):
    assert truthy(value) is expected


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ({"==": [1, 1]}, True),
        ({"==": [1, "1"]}, True),
        ({"==": [0, False]}, True),
        ({"===": [1, "1"]}, False),
        ({"!=": [1, 2]}, True),
        ({"!==": [1, 1]}, False),
        ({"<": [1, 2]}, True),
        ({"<": [2, 1]}, False),
        ({"<": [1, 2, 3]}, True),
        ({"<": [1, 3, 3]}, False),
        ({"<=": [1, 1, 3]}, True),
        ({">": ["10", 9]}, True),
        ({">=": [1, 1]}, True),
        ({"<": [None, 1]}, False),
        ({"<": ["a", 1]}, False),
        ({"!": [True]}, False),
        ({"!": True}, False),
        ({"!!": [[1]]}, True),
        ({"and": [True, 1, "x"]}, "x"),
        ({"and": [True, 0, "x"]}, 0),
        ({"or": [0, "", "y"]}, "y"),
        ({"or": [0, ""]}, ""),
        ({"if": [False, 1, True, 2, 3]}, 2),
        ({"if": [False, 1, 3]}, 3),
        ({"in": ["b", ["a", "b"]]}, True),
        ({"in": ["x", "abc"]}, False),
        ([1, {"==": [1, 1]}], [1, True]),
        (5, 5),
    ],
)
def test_builtin_operators(rule, expected):
    assert logic.apply(rule, {}) == expected


def test_var_with_paths_and_defaults():
    data = {"a": {"b": [10, 20]}, "n": 0}
    assert logic.apply({"var": "a.b.1"}, data) == 20
    assert logic.apply({"var": ["missing", 7]}, data) == 7
    assert logic.apply({"var": "n"}, data) == 0
    assert logic.apply({"var": ""}, data) == data


def test_unknown_operator_and_malformed_objects_raise():
    with pytest.raises(RuleError):
        logic.apply({"nope": [1]}, {})
    with pytest.raises(RuleError):
        logic.apply({"==": [1, 1], "!=": [1, 2]}, {})


def test_and_short_circuits():
    assert logic.apply({"and": [False, {"nope": []}]}, {}) is False
    assert logic.apply({"or": [True, {"nope": []}]}, {}) is True


@given(st.integers(-1000, 1000), st.integers(-1000, 1000))
def test_comparisons_agree_with_python(a, b):
    assert logic.apply({"<": [a, b]}, {}) == (a < b)
    assert logic.apply({"<=": [a, str(b)]}, {}) == (a <= b)
    assert logic.apply({"==": [a, str(b)]}, {}) == (a == b)
    assert loose_equal(a, b) == (a == b)


def _vars(history=(), gate=None, now=NOW, product=1, variation=None, tz="UTC") -> RuleVars:
    dates = EventDates(tz, dt.datetime(2030, 5, 1, 10, tzinfo=UTC), None, None)
    return RuleVars(
        now=now, dates=dates, product=product, variation=variation, gate=gate,
        history=History(list(history)),
    )  # fmt: skip


def test_rule_variables():
    day = dt.timedelta(days=1)
    history = [
        ("entry", NOW - 2 * day),
        ("exit", NOW - 2 * day + dt.timedelta(hours=1)),
        ("entry", NOW - dt.timedelta(minutes=90)),
        ("entry", NOW - dt.timedelta(minutes=30)),
    ]
    v = _vars(history, gate=4)
    assert v["entries_number"] == 3
    assert v["entries_today"] == 2
    assert v["entries_days"] == 2
    assert v["minutes_since_last_entry"] == 30
    assert v["minutes_since_first_entry"] == 2 * 24 * 60
    assert v["now_isoweekday"] == 3
    assert v["gate"] == 4 and v["product"] == 1 and v["variation"] is None
    empty = _vars()
    assert empty["minutes_since_last_entry"] == -1
    assert empty["entries_number"] == 0


def test_entries_today_uses_the_event_time_zone():
    # 23:30 UTC on 30 April is already 1 May in Berlin.
    late = dt.datetime(2030, 4, 30, 23, 30, tzinfo=UTC)
    v = _vars([("entry", late)], now=NOW, tz="Europe/Berlin")
    assert v["entries_today"] == 1
    assert _vars([("entry", late)], now=NOW, tz="UTC")["entries_today"] == 0


def _products(*ids: int) -> dict:
    return {
        "inList": [
            {"var": "product"},
            {"objectList": [{"lookup": ["product", str(i), f"Product {i}"]} for i in ids]},
        ]
    }


def _before(moment: str) -> dict:
    return {"isBefore": [{"var": "now"}, {"buildTime": ["custom", moment]}]}


def test_products_with_lookup_and_object_list():
    rule = _products(1, 2)
    assert evaluate(rule, _vars(product=2)) == (True, None)
    assert evaluate(rule, _vars(product=3)) == (False, "Ticket type not allowed")


def test_time_rules_with_tolerance():
    after = {"isAfter": [{"var": "now"}, {"buildTime": ["custom", "2030-05-01T12:10:00Z"]}, 15]}
    assert evaluate(after, _vars())[0] is True  # 12:00 > 12:10 - 15 min
    strict = {"isAfter": [{"var": "now"}, {"buildTime": ["custom", "2030-05-01T12:10:00Z"]}]}
    ok, why = evaluate(strict, _vars())
    assert ok is False and why == "Only allowed after 12:10"
    before = {"isBefore": [{"var": "now"}, {"buildTime": ["date_from"]}]}
    ok, why = evaluate(before, _vars())
    assert not ok and why == "Only allowed before 10:00"
    admission = {"isAfter": [{"var": "now"}, {"buildTime": ["date_admission"]}]}
    assert evaluate(admission, _vars())[0] is True  # falls back to date_from
    custom_time = {"isBefore": [{"var": "now"}, {"buildTime": ["customtime", "13:00"]}]}
    assert evaluate(custom_time, _vars())[0] is True
    far = {"isAfter": [{"var": "now"}, {"buildTime": ["custom", "2031-01-01T00:00:00Z"]}]}
    assert evaluate(far, _vars())[1] == "Only allowed after 2031-01-01 00:00"


def test_explanation_picks_the_closest_alternative():
    # VIPs always, others until 11:00: a regular ticket at 12:00 is told about the time,
    # not that it is not a VIP ticket.
    rule = {"or": [_products(9), {"and": [_products(1), _before("2030-05-01T11:00:00Z")]}]}
    assert evaluate(rule, _vars(product=1)) == (False, "Only allowed before 11:00")
    assert evaluate(rule, _vars(product=5)) == (False, "Ticket type not allowed")


def test_entry_count_explanations():
    history = [("entry", NOW - dt.timedelta(hours=3))]
    assert evaluate({"<": [{"var": "entries_number"}, 1]}, _vars(history)) == (
        False,
        "Maximum number of entries exceeded",
    )
    assert evaluate({">=": [{"var": "entries_today"}, 2]}, _vars(history)) == (
        False,
        "Minimum number of entries today not reached",
    )
    assert evaluate({"==": [{"var": "now_isoweekday"}, 6]}, _vars()) == (False, "Week day is not 6")
    assert evaluate({"inList": [{"var": "gate"}, [1, 2]]}, _vars(gate=3)) == (
        False,
        "Entry not allowed at this gate",
    )
    both = {"and": [{"<": [{"var": "entries_number"}, 1]}, {"==": [{"var": "gate"}, 3]}]}
    assert evaluate(both, _vars(history, gate=1)) == (
        False,
        "Maximum number of entries exceeded, Entry not allowed at this gate",
    )


@pytest.mark.parametrize(
    "rules",
    [
        [],
        "x",
        {"nope": [1]},
        {"==": [{"var": "secret"}, 1]},
        {"isAfter": [{"var": "now"}, {"buildTime": ["yesterday"]}]},
        {"isAfter": [{"var": "now"}, {"buildTime": ["custom", "not a date"]}]},
        {"isAfter": [{"var": "now"}, {"buildTime": ["customtime", "25:99"]}]},
        {"inList": [{"var": "product"}, {"objectList": [{"lookup": ["product", "x", "T"]}]}]},
        {"and": [{"==": [1, 1], "!=": [1, 2]}]},
        {"==": [{"set": 1}, 1]},
    ],
)
def test_invalid_rules_are_refused(rules):
    with pytest.raises(RuleError):
        validate(rules)


def test_valid_rules_pass_validation():
    validate({})
    validate({"and": [{"<": [{"var": "entries_number"}, 3]}, {"!": {"var": "gate"}}]})
    nested: dict = {"==": [1, 1]}
    for _ in range(40):
        nested = {"and": [nested]}
    with pytest.raises(RuleError):
        validate(nested)
