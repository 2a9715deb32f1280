"""Check-in list rules: validation on write, evaluation at a scan, and an explanation of a
refusal that names the part of the rule the scan failed. What a rule may read (its variables
and operations) is :mod:`admit.checkin.rule_variables`.

Explaining a refusal: the rule is read as alternatives ("paths"), each a set of conditions
that together would have admitted the ticket. Every path the scan failed is weighed by its
hardest failed condition (what the attendee can least change: their ticket type over the
time of day over how often they entered) and by how far off it was; the lightest path is
the one reported, as its failed conditions joined by commas.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import orjson

from admit.checkin.jsonlogic import Budget, BudgetExceeded, Logic, RuleError, operator_of, truthy
from admit.checkin.rule_variables import (
    OPERATORS,
    TIME_TYPES,
    VARIABLES,
    RuleVars,
    logic_for,
    parse_datetime,
    parse_time,
    tolerance_of,
)

# Bounds on a rule at save (``validate``): its JSON size, nesting, node count, and the
# operations its evaluation can take at most (:func:`cost`), which must fit the budget every
# scan evaluates with. Scans run on the serving loop: 50,000 operations are a few
# milliseconds; a rule the budget stops (one stored before these bounds) refuses the scan.
MAX_BYTES = 16_384
MAX_DEPTH = 32
MAX_NODES = 2000
OPERATION_BUDGET = 50_000


# -- validation -----------------------------------------------------------------------------


def validate(rules: Any) -> None:
    """Raises RuleError with a message for a rule this module could not evaluate."""
    if rules in ({}, None):
        return
    if not isinstance(rules, dict):
        raise RuleError("Rules must be a JSON object.")
    if len(orjson.dumps(rules)) > MAX_BYTES:
        raise RuleError(f"The rule is too large (more than {MAX_BYTES} bytes).")
    counter = [0]
    _check(rules, 0, counter)
    if cost(rules) > OPERATION_BUDGET:
        raise RuleError(
            "The rule is too complex: checking a ticket against it could take more than "
            f"{OPERATION_BUDGET} operations."
        )


def _check(node: Any, depth: int, counter: list[int]) -> None:
    counter[0] += 1
    if depth > MAX_DEPTH or counter[0] > MAX_NODES:
        raise RuleError("The rule is too large.")
    if isinstance(node, list):
        for child in node:
            _check(child, depth + 1, counter)
        return
    if isinstance(node, dict):
        parsed = operator_of(node)
        if parsed is None:
            raise RuleError("A rule object must have exactly one operator.")
        name, args = parsed
        if name not in OPERATORS:
            raise RuleError(f'Unknown operator "{name}".')
        if name in ("var", "buildTime", "lookup"):
            # Their arguments are plain values: no rule hides in them, uncounted.
            if not all(arg is None or isinstance(arg, bool | int | float | str) for arg in args):
                raise RuleError(f'The arguments of "{name}" must be plain values.')
            counter[0] += len(args)
        if name == "var":
            if not args or not isinstance(args[0], str) or args[0] not in VARIABLES:
                shown = args[0] if args else ""
                raise RuleError(f'Unknown variable "{shown}".')
            return
        if name == "buildTime":
            _check_build_time(args)
            return
        if name == "lookup":
            if len(args) < 2 or not str(args[1]).strip().lstrip("-").isdigit():
                raise RuleError('"lookup" needs a type and a numeric id.')
            return
        for child in args:
            _check(child, depth + 1, counter)
        return
    if not (node is None or isinstance(node, bool | int | float | str)):
        raise RuleError("Unsupported value in rule.")


def _check_build_time(args: list[Any]) -> None:
    if not args or args[0] not in TIME_TYPES:
        shown = args[0] if args else ""
        raise RuleError(f'Unknown time type "{shown}".')
    try:
        if args[0] == "custom":
            parse_datetime(str(args[1]))
        elif args[0] == "customtime":
            parse_time(str(args[1]))
    except (IndexError, ValueError):
        raise RuleError(f'Invalid value for time type "{args[0]}".') from None


def _size(node: Any) -> int:
    """How many values ``node`` holds (each one an ``apply`` at most)."""
    count, stack = 0, [node]
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def _bound(node: Any) -> tuple[int, int, int]:
    """For the explanation of ``node`` (``_paths``): at most how many paths, how long a path,
    and how many operations, counted as the evaluation counts them."""
    parsed = operator_of(node)
    if parsed is None or parsed[0] not in ("and", "or"):
        return 1, 1, 2 * _size(node) + 1
    name, args = parsed
    children = [_bound(arg) for arg in args]
    spent = 1 + sum(c for _, _, c in children)
    if name == "or":
        paths = min(MAX_PATHS, sum(p for p, _, _ in children))
        return paths, max((n for _, n, _ in children), default=0), spent + paths + 1
    paths, length = 1, 0
    for child_paths, child_length, _ in children:
        paths = min(MAX_PATHS, paths * child_paths)
        spent += paths * (length + child_length + 1) + 1
        length += child_length
    return paths, length, spent


def cost(rules: Any) -> int:
    """The most operations :func:`evaluate` can spend on ``rules`` (for any scan): one
    evaluation, then the explanation of a refusal. Validation refuses a rule whose cost is
    past :data:`OPERATION_BUDGET`, so every rule accepted at save is evaluated in full."""
    if not rules:
        return 0
    paths, length, spent = _bound(rules)
    return _size(rules) + spent + paths * (length + 1)


# -- evaluation and explanation ---------------------------------------------------------------


@dataclass
class Condition:
    """One comparison of the rule, with its outcome."""

    node: dict[str, Any]
    passed: bool
    text: str = ""
    weight: tuple[float, float] = (0.0, 0.0)


# How hard a condition is for the attendee to change (higher: harder).
RIGIDITY = {
    "product": 1000,
    "variation": 1000,
    "gate": 900,
    "now_isoweekday": 210,
    "now": 200,
    "entries_today": 140,
    "entries_number": 120,
    "entries_days": 100,
    "minutes_since_last_entry": 90,
    "minutes_since_first_entry": 80,
}
LABELS = {
    "entries_number": "number of entries",
    "entries_today": "number of entries today",
    "entries_days": "number of days with an entry",
    "minutes_since_last_entry": "time since last entry",
    "minutes_since_first_entry": "time since first entry",
    "now_isoweekday": "week day",
}
MAX_PATHS = 256


def evaluate(
    rules: Any, variables: RuleVars, budget: Budget | None = None
) -> tuple[bool, str | None]:
    """Whether the scan passes the rules and, when it does not, why (or None if no rule).

    Evaluation spends from ``budget`` (:data:`OPERATION_BUDGET` unless given); a rule that
    needs more is a refusal with that as its reason, never an error or a stalled loop."""
    if not rules:
        return True, None
    logic = logic_for(variables.dates, variables.now, budget or Budget(OPERATION_BUDGET))
    try:
        if truthy(logic.apply(rules, variables)):
            return True, None
        return False, explain(rules, variables, logic)
    except (BudgetExceeded, RecursionError):
        return False, str(BudgetExceeded())


def explain(rules: Any, variables: RuleVars, logic: Logic) -> str:
    paths = _paths(rules, variables, logic)
    logic.budget.spend(sum(len(path) + 1 for path in paths))
    failing = [[c for c in path if not c.passed] for path in paths]
    failing = [f for f in failing if f] or [[Condition({}, False, "Rule not met", (1e9, 0))]]

    def weight(conditions: list[Condition]) -> tuple[float, float, int]:
        hardest = max(c.weight for c in conditions)
        return (hardest[0], sum(c.weight[1] for c in conditions), len(conditions))

    best = min(failing, key=weight)
    texts = list(dict.fromkeys(c.text for c in best))
    return ", ".join(texts)


def _paths(node: Any, variables: RuleVars, logic: Logic) -> list[list[Condition]]:
    """The rule as alternatives (disjunctive normal form) of evaluated conditions."""
    parsed = operator_of(node)
    budget = logic.budget
    if parsed is not None and parsed[0] in ("and", "or"):
        name, args = parsed
        budget.spend(1)
        children = [_paths(a, variables, logic) for a in args]
        if name == "or":
            alternatives = [p for c in children for p in c][:MAX_PATHS]
            budget.spend(len(alternatives) + 1)
            return alternatives
        combined: list[list[Condition]] = [[]]
        for choices in children:
            # The first MAX_PATHS combinations, without building the rest: an "and" of
            # "or"s has exponentially many.
            joined: list[list[Condition]] = []
            for a in combined:
                for b in choices:
                    if len(joined) == MAX_PATHS:
                        break
                    budget.spend(len(a) + len(b) + 1)
                    joined.append(a + b)
                if len(joined) == MAX_PATHS:
                    break
            budget.spend(1)
            combined = joined
        return combined
    budget.spend(1)
    return [[_condition(node, variables, logic)]]


def _condition(node: Any, variables: RuleVars, logic: Logic) -> Condition:
    passed = truthy(logic.apply(node, variables))
    condition = Condition(node if isinstance(node, dict) else {}, passed)
    if not passed:
        condition.text, condition.weight = _describe(node, variables, logic)
    return condition


def _variable(node: Any) -> str | None:
    parsed = operator_of(node)
    if parsed and parsed[0] == "var" and parsed[1]:
        name = parsed[1][0]
        return name if isinstance(name, str) else None
    return None


def _format_time(moment: dt.datetime, now: dt.datetime, tz: dt.tzinfo) -> str:
    local = moment.astimezone(tz)
    if abs(moment - now) < dt.timedelta(hours=12):
        return local.strftime("%H:%M")
    return local.strftime("%Y-%m-%d %H:%M")


def _describe(node: Any, variables: RuleVars, logic: Logic) -> tuple[str, tuple[float, float]]:
    parsed = operator_of(node)
    if parsed is None:
        return "Rule not met", (500.0, 0.0)
    op, args = parsed
    var = _variable(args[0]) if args else None
    if op in ("isBefore", "isAfter") and var == "now" and len(args) > 1:
        try:
            target = logic.apply(args[1], variables)
            allowance = tolerance_of(logic.apply(args[2], variables) if len(args) > 2 else None)
        except (RuleError, ValueError, TypeError):
            return "Rule not met", (500.0, 0.0)
        if not isinstance(target, dt.datetime):
            return "Rule not met", (500.0, 0.0)
        limit = target + allowance if op == "isBefore" else target - allowance
        shown = _format_time(limit, variables.now, variables.dates.tz)
        distance = abs((variables.now - limit).total_seconds())
        word = "before" if op == "isBefore" else "after"
        return f"Only allowed {word} {shown}", (RIGIDITY["now"], distance)
    if var in ("product", "variation"):
        return "Ticket type not allowed", (RIGIDITY[var], 0.0)
    if var == "gate":
        return "Entry not allowed at this gate", (RIGIDITY["gate"], 0.0)
    if var in LABELS and len(args) > 1:
        label = LABELS[var]
        expected = logic.apply(args[1], variables)
        actual = variables[var]
        try:
            distance = abs(float(expected) - float(actual))
        except (TypeError, ValueError):
            distance = 0.0
        weight = (float(RIGIDITY[var]), distance)
        if op in ("<", "<="):
            return f"Maximum {label} exceeded", weight
        if op in (">", ">="):
            return f"Minimum {label} not reached", weight
        if op in ("==", "==="):
            return f"{label.capitalize()} is not {expected}", weight
        if op in ("!=", "!=="):
            return f"{label.capitalize()} is {expected}", weight
        return f"{label.capitalize()} not allowed", weight
    return "Rule not met", (500.0, 0.0)
