"""Typed query-string filters and allow-listed ordering with the primary key as last tie-break."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from fastapi import Request
from sqlalchemy import ColumnElement, Select

from admit.kit.http.errors import FieldErrors, not_found

TRUE = {"true", "1", "yes", "on"}
FALSE = {"false", "0", "no", "off"}


def parse_bool(raw: str) -> bool:
    low = raw.strip().lower()
    if low in TRUE:
        return True
    if low in FALSE:
        return False
    raise ValueError("Enter a valid boolean: true or false.")


INT_RE = re.compile(r"[+-]?[0-9]+")
INT_MAX = 2**31 - 1  # what an INTEGER column holds (all ids); larger values must not reach a query


def parse_int(raw: str) -> int:
    text = raw.strip()
    # ASCII digits only: int() would also take "1_000" and non-ASCII digits.
    if not INT_RE.fullmatch(text) or abs(int(text)) > INT_MAX:
        raise ValueError("Enter a whole number.")
    return int(text)


def parse_int_list(raw: str) -> list[int]:
    try:
        return [parse_int(p) for p in raw.split(",") if p.strip()]
    except ValueError:
        raise ValueError("Enter a comma-separated list of whole numbers.") from None


def parse_datetime(raw: str) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(raw.strip().replace(" ", "+"))
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        # Stored values are UTC: a value not representable in UTC (year 1 / 9999 with an
        # offset) would fail when bound to a query.
        value.astimezone(dt.UTC)
    except (ValueError, OverflowError):
        raise ValueError("Enter a valid date/time (ISO 8601).") from None
    return value


def parse_decimal(raw: str) -> Decimal:
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise ValueError("Enter a number.") from None
    if not value.is_finite():
        raise ValueError("Enter a number.")
    return value


def parse_str(raw: str) -> str:
    return raw


Parser = Callable[[str], Any]
Apply = Callable[[Select[Any], Any], Select[Any]]


@dataclass(frozen=True)
class Filter:
    """One query parameter: how to parse it and how it narrows the query."""

    name: str
    parse: Parser
    apply: Apply

    @classmethod
    def eq(cls, name: str, column: Any, parse: Parser = parse_str) -> Filter:
        return cls(name, parse, lambda q, v: q.where(column == v))

    @classmethod
    def boolean(cls, name: str, column: Any) -> Filter:
        return cls(name, parse_bool, lambda q, v: q.where(column.is_(v)))

    @classmethod
    def where(
        cls, name: str, parse: Parser, clause: Callable[[Any], ColumnElement[bool]]
    ) -> Filter:
        return cls(name, parse, lambda q, v: q.where(clause(v)))


def date_range(name: str, column: Any) -> tuple[Filter, Filter]:
    """``<name>_after`` and ``<name>_before``, both inclusive, as the reference's filters."""
    return (
        Filter.where(f"{name}_after", parse_datetime, lambda v: column >= v),
        Filter.where(f"{name}_before", parse_datetime, lambda v: column <= v),
    )


@dataclass(frozen=True)
class FilterSet:
    filters: Sequence[Filter] = ()

    def apply(self, query: Select[Any], params: Mapping[str, str]) -> Select[Any]:
        errors: dict[str, list[str]] = {}
        for flt in self.filters:
            raw = params.get(flt.name)
            if raw is None or (raw == "" and flt.parse is not parse_str):
                continue
            try:
                value = flt.parse(raw)
            except ValueError as exc:
                errors[flt.name] = [str(exc)]
                continue
            query = flt.apply(query, value)
        if errors:
            raise FieldErrors(errors)
        return query

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.filters]


@dataclass(frozen=True)
class Ordering:
    """``?ordering=a,-b``: only allow-listed names; the primary key always ends the ordering."""

    fields: Mapping[str, Any]
    default: Sequence[str]
    pk: Any
    extra_tiebreak: Sequence[Any] = field(default_factory=tuple)

    def apply(self, query: Select[Any], request: Request | None) -> Select[Any]:
        raw = request.query_params.get("ordering") if request is not None else None
        return query.order_by(*self.clauses(raw))

    def known(self, raw: str | None) -> str | None:
        """``raw`` with the names outside the allow-list dropped (None when none is left): one
        key for every spelling that orders alike, so unknown names cannot fill a cache."""
        asked = [n.strip() for n in raw.split(",") if n.strip()] if raw else []
        return ",".join(n for n in asked if n.removeprefix("-") in self.fields) or None

    def clauses(self, raw: str | None) -> list[Any]:
        """The ORDER BY clauses for ``?ordering=`` (``raw``; None or empty: the default).

        Names outside the allow-list are dropped, as the reference drops them: a client
        written for it that sends one gets the remaining (or default) ordering, never a 400.
        """
        known = self.known(raw)
        names = known.split(",") if known else list(self.default)
        clauses = []
        for name in names:
            desc = name.startswith("-")
            column = self.fields[name[1:] if desc else name]
            clauses.append(column.desc() if desc else column.asc())
        last_desc = bool(names) and names[-1].startswith("-")
        clauses.append(self.pk.desc() if last_desc else self.pk.asc())
        return clauses


PK_MAX = INT_MAX  # ids are INTEGER columns: a larger value must not reach PostgreSQL


def parse_pk(raw: str) -> int:
    # ASCII digits only, like the reference's <int:pk>: int() would also take "+1", " 1",
    # "0_1" and non-ASCII digits, giving one object several URLs.
    if not (raw.isascii() and raw.isdigit()):
        raise not_found()
    value = int(raw)
    if value < 1 or value > PK_MAX:
        raise not_found()
    return value
