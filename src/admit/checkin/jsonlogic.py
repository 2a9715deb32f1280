"""A small JsonLogic evaluator: the operators check-in rules use, and room for custom ones.

Written here rather than taken from PyPI because the JsonLogic packages there are unmaintained
and none lets a caller see which part of a rule failed, which ``reason_explanation`` needs.

A rule is JSON: a literal, a list, or ``{"operator": [arguments]}`` (a single argument may be
given bare). Truthiness and loose equality follow JsonLogic (which follows JavaScript): ``0``,
``""``, ``[]``, ``null`` and ``false`` are false; ``==`` compares numbers with numeric strings.
Comparisons of values that cannot be ordered against each other are false, never an error.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

Operation = Callable[..., Any]


class RuleError(ValueError):
    """The rule is not well-formed (unknown operator, wrong arguments, unknown variable)."""


class BudgetExceeded(Exception):
    """Evaluating the rule took more operations than its budget allows (a rule written to
    burn CPU, or one stored before rules were bounded at save). Not a RuleError: the scan is
    refused by the rule, with this as its reason, rather than reported as an error."""

    def __init__(self) -> None:
        super().__init__("The check-in rules are too complex to evaluate.")


class Budget:
    """Operations a rule's evaluation may still take: one per rule node applied, and one per
    element copied while the explanation combines alternatives. Counting operations (not
    time) makes the bound the same on every machine and under any load."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit

    @property
    def spent(self) -> int:
        return self.limit - self.left

    def spend(self, operations: int) -> None:
        self.left -= operations
        if self.left < 0:
            raise BudgetExceeded


def truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, int | float | Decimal):
        return value != 0
    if isinstance(value, str | list | tuple):
        return len(value) > 0
    return True  # objects (even empty ones) are true, as in JavaScript


def _number(value: Any) -> float | None:
    """The numeric value JavaScript would use for a comparison, or None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float | Decimal):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return 0.0
        try:
            return float(Decimal(text))
        except InvalidOperation:
            return None
    return None


def loose_equal(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, dt.datetime) or isinstance(b, dt.datetime):
        return a == b
    if type(a) is type(b) and not isinstance(a, bool | int | float):
        return a == b
    na, nb = _number(a), _number(b)
    if na is not None and nb is not None:
        return na == nb
    return a == b


def strict_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    numeric = (int, float, Decimal)
    if isinstance(a, numeric) and isinstance(b, numeric):
        return a == b
    return type(a) is type(b) and a == b


def _ordered(a: Any, b: Any) -> tuple[Any, Any] | None:
    """Two values that can be compared with ``<``, or None."""
    if isinstance(a, dt.datetime) and isinstance(b, dt.datetime):
        return a, b
    if isinstance(a, str) and isinstance(b, str):
        na, nb = _number(a), _number(b)
        return (na, nb) if na is not None and nb is not None else (a, b)
    na, nb = _number(a), _number(b)
    if na is None or nb is None or a is None or b is None:
        return None
    return na, nb


def _compare(test: Callable[[Any, Any], bool]) -> Operation:
    def op(*args: Any) -> bool:
        # JsonLogic's "between" form: {"<": [1, x, 3]} means 1 < x < 3.
        if len(args) < 2:
            return False
        for left, right in itertools.pairwise(args):
            pair = _ordered(left, right)
            if pair is None or not test(*pair):
                return False
        return True

    return op


BUILTIN: dict[str, Operation] = {
    "==": lambda a=None, b=None: loose_equal(a, b),
    "!=": lambda a=None, b=None: not loose_equal(a, b),
    "===": lambda a=None, b=None: strict_equal(a, b),
    "!==": lambda a=None, b=None: not strict_equal(a, b),
    "<": _compare(lambda a, b: a < b),
    "<=": _compare(lambda a, b: a <= b),
    ">": _compare(lambda a, b: a > b),
    ">=": _compare(lambda a, b: a >= b),
    "!": lambda a=None: not truthy(a),
    "!!": lambda a=None: truthy(a),
    "in": lambda a=None, b=None: isinstance(b, list | str) and a in b,
}
# The budget of an evaluator made without one (tests, tools): in effect none.
UNBOUNDED = 2**62
# Evaluated lazily (their arguments are rules, not values).
LAZY = frozenset({"and", "or", "if", "var"})


def operator_of(rule: Any) -> tuple[str, list[Any]] | None:
    """``("op", [args])`` for an operation node, None for a literal."""
    if isinstance(rule, dict) and len(rule) == 1:
        ((name, args),) = rule.items()
        return name, list(args) if isinstance(args, list | tuple) else [args]
    return None


class Logic:
    """An evaluator with a fixed set of operations (built-ins plus ``operations``)."""

    def __init__(
        self, operations: Mapping[str, Operation] | None = None, budget: Budget | None = None
    ) -> None:
        self.operations = {**BUILTIN, **(operations or {})}
        self.budget = budget or Budget(UNBOUNDED)

    def known(self, name: str) -> bool:
        return name in self.operations or name in LAZY

    def apply(self, rule: Any, data: Mapping[str, Any]) -> Any:
        budget = self.budget
        budget.left -= 1
        if budget.left < 0:
            raise BudgetExceeded
        node = operator_of(rule)
        if node is None:
            if isinstance(rule, dict):
                raise RuleError("A rule object must have exactly one operator.")
            if isinstance(rule, list):
                return [self.apply(r, data) for r in rule]
            return rule
        name, args = node
        if name == "var":
            return self._var(args, data)
        if name == "and":
            value: Any = True
            for arg in args:
                value = self.apply(arg, data)
                if not truthy(value):
                    return value
            return value
        if name == "or":
            value = False
            for arg in args:
                value = self.apply(arg, data)
                if truthy(value):
                    return value
            return value
        if name == "if":
            for i in range(0, len(args) - 1, 2):
                if truthy(self.apply(args[i], data)):
                    return self.apply(args[i + 1], data)
            return self.apply(args[-1], data) if len(args) % 2 else None
        operation = self.operations.get(name)
        if operation is None:
            raise RuleError(f'Unknown operator "{name}".')
        values = [self.apply(a, data) for a in args]
        try:
            return operation(*values)
        except TypeError as exc:
            raise RuleError(f'Wrong arguments for "{name}".') from exc

    def _var(self, args: list[Any], data: Mapping[str, Any]) -> Any:
        name = self.apply(args[0], data) if args else ""
        default = self.apply(args[1], data) if len(args) > 1 else None
        if name in ("", None):
            return data
        value: Any = data
        for part in str(name).split("."):
            try:
                value = value[part] if not isinstance(value, list) else value[int(part)]
            except (KeyError, IndexError, ValueError, TypeError):
                return default
        return value
