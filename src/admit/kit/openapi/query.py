"""The query parameters of every list, documented from the declarations the route applies.

A list route narrows its query with a :class:`~admit.kit.resources.filtering.FilterSet` and sorts it
with an :class:`~admit.kit.resources.filtering.Ordering`, declared once at module level (or on a
CRUD resource). Rather than repeating those names in every decorator, the document finds the
declarations the endpoint reaches: the globals and closure values its code names, followed
through the package's own helper functions a few calls deep. A filter added to a FilterSet is
thereby documented with nothing else to change; ``tests/openapi`` runs every list and checks
that each query parameter the route reads is documented.

Parameters read outside any FilterSet (``expand``, ``list`` of the check-in search, ``attr[…]``,
the flags choosing what an order shows) are listed in :data:`EXTRA` and :func:`shaping`; a
domain whose parameters need its own declarations (its flags, its expansions) registers them
(:func:`document`, :func:`shaper`) at the import of its routes, so this module imports none.
"""

from __future__ import annotations

import inspect
import re
import types
from collections.abc import Callable, Iterator
from typing import Any

from admit.kit.resources import filtering
from admit.kit.resources.filtering import Filter, FilterSet, Ordering
from admit.kit.resources.pagination import PAGE_SIZE, larger_pages

DEPTH = 4  # calls followed from the endpoint: route -> helper -> query builder -> factory

_TYPES: dict[Any, dict[str, Any]] = {
    filtering.parse_int: {"type": "integer"},
    filtering.parse_bool: {"type": "boolean"},
    filtering.parse_datetime: {"type": "string", "format": "date-time"},
    filtering.parse_decimal: {"type": "string", "format": "decimal"},
    filtering.parse_int_list: {"type": "string", "pattern": r"^[0-9, +-]*$"},
}
_NOTES: dict[Any, str] = {
    filtering.parse_int_list: "Comma-separated whole numbers.",
    filtering.parse_bool: "true or false.",
    filtering.parse_datetime: "ISO 8601; without an offset, UTC.",
}

O = "/organizers/{organizer}"  # noqa: E741
E = f"{O}/events/{{event}}"


def param(name: str, schema: dict[str, Any], description: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema,
            "description": description, **extra}  # fmt: skip


def expand(kinds: Any, what: str = "each result") -> dict[str, Any]:
    return param(
        "expand",
        {"type": "array", "items": {"type": "string", "enum": sorted(kinds)}},
        f"Replace these ids inside {what} by the full object (repeatable).",
        style="form",
        explode=True,
    )


def flag(name: str, description: str) -> dict[str, Any]:
    return param(name, {"type": "boolean"}, description)


_ATTR = param(
    "attr[{property}]",
    {"type": "string"},
    "Only those whose meta property (the name in brackets) has this value.",
)
_AVAILABILITY_FOR = param(
    "with_availability_for",
    {"type": "string"},
    "A sales channel: adds best_availability_state for it.",
)

EXTRA: dict[tuple[str, str], list[dict[str, Any]]] = {
    ("GET", f"{O}/events/"): [_ATTR, _AVAILABILITY_FOR],
    ("GET", f"{E}/subevents/"): [_ATTR, _AVAILABILITY_FOR],
    ("GET", f"{O}/subevents/"): [_ATTR, _AVAILABILITY_FOR],
    ("POST", f"{O}/events/"): [
        param("clone_from", {"type": "string"}, "Copy this event (slug, or organizer/slug).")
    ],
}


Shaping = list[tuple[str, re.Pattern[str], list[dict[str, Any]]]]
# Domains' parameters that choose what an answer shows, given when the document is built.
SHAPERS: list[Callable[[], Shaping]] = []


def shaper(provider: Callable[[], Shaping]) -> Callable[[], Shaping]:
    """Registers a domain's parameters that choose what an answer shows, by method (``*`` for
    all) and route pattern: the domain knows its flags, expansions and filters, the document
    does not import the domain. Called when the document is built, after every route exists."""
    SHAPERS.append(provider)
    return provider


def shaping() -> Shaping:
    """Every registered shaping parameter, then the ones stated here from route patterns."""
    org = re.escape(O)
    event = re.escape(E)
    return [
        *(entry for provider in SHAPERS for entry in provider()),
        ("*", re.compile(rf"^{org}/giftcards/({{id}}/|{{id}}/transact/)?$"),
         [expand(["owner_ticket"], "each gift card")]),
        ("*", re.compile(rf"^{org}/giftcards/({{id}}/|{{id}}/transact/|{{id}}/transactions/)?$"),
         [flag("include_accepted", "Include cards of issuers this organizer accepts.")]),
        ("GET", re.compile(rf"^{event}/quotas/({{id}}/)?$"),
         [flag("with_availability", "Add the quota's current availability.")]),
    ]  # fmt: skip


def document(extra: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    """Registers a domain's hand-listed parameters of single operations (see :data:`EXTRA`)."""
    EXTRA.update(extra)


# Declared but not taken from the query string (the route orders by its default only).
NOT_FROM_QUERY: dict[tuple[str, str], frozenset[str]] = {
    ("GET", f"{O}/webhooks/{{id}}/calls/"): frozenset({"ordering"}),
}


def extra_parameters(method: str, path: str, *, is_list: bool) -> list[dict[str, Any]]:
    """The parameters of one operation that no FilterSet declares."""
    found = list(EXTRA.get((method, path), ()))
    for methods, pattern, params in shaping():
        if methods in ("*", method) and pattern.match(path):
            found.extend(params)
    return found


def page_size_text() -> str:
    """What ``page_size`` may ask for, the larger pages some callers may have included."""
    text = f"Results a page, at most {PAGE_SIZE}"
    for larger in larger_pages().values():
        text += f", or {larger.limit:,} with {larger.who}"
    return text + f"; more: the most allowed; zero or junk: {PAGE_SIZE}."


def paging() -> list[dict[str, Any]]:
    return [
        param("page", {"type": "integer", "minimum": 1}, "The page (from 1); past the end: 404."),
        param(
            "page_size",
            {"type": "integer"},
            page_size_text(),
        ),
    ]


def filter_param(flt: Filter) -> dict[str, Any]:
    schema = dict(_TYPES.get(flt.parse, {"type": "string"}))
    return param(flt.name, schema, _NOTES.get(flt.parse, "Only matching results."))


def ordering_param(ordering: Ordering) -> dict[str, Any]:
    names = sorted(ordering.fields)
    default = ",".join(ordering.default)
    return param(
        "ordering",
        {"type": "string"},
        f"Comma-separated; a leading - sorts descending. Fields: {', '.join(names)}. "
        f"Default: {default or 'the id'}.",
        **{"x-ordering-fields": names},
    )


def declarations(endpoint: Any) -> tuple[list[Filter], Ordering | None]:
    """The filters and ordering a list endpoint reaches (see the module docstring)."""
    filters: dict[str, Filter] = {}
    ordering: Ordering | None = None
    for found in _reach(endpoint, DEPTH, set()):
        if isinstance(found, FilterSet):
            for flt in found.filters:
                filters.setdefault(flt.name, flt)
        elif isinstance(found, Ordering) and ordering is None:
            ordering = found
    return list(filters.values()), ordering


def _reach(value: Any, depth: int, seen: set[int], *, enclosed: bool = False) -> Iterator[Any]:
    """``enclosed``: the value was found in a closure (a CRUD resource a generic list endpoint
    was built for); a resource merely named by a hand-written route is not its list."""
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, FilterSet | Ordering):
        yield value
        return
    if _is_resource(value):
        if enclosed:
            yield value.filters
            if value.ordering is not None:
                yield value.ordering
        return
    if not isinstance(value, types.FunctionType) or depth <= 0:
        return
    if _is_factory(value):
        made = _call_factory(value)
        if made is not None:
            yield made
        return
    for cell in value.__closure__ or ():
        try:
            target = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        yield from _reach(target, depth - 1, seen, enclosed=True)
    if not value.__module__.startswith("admit.") or value.__module__.startswith("admit.kit."):
        return  # generic code: only what it was built for (its closure) is the route's
    names = _names(value.__code__)
    for name in names:
        target = value.__globals__.get(name)
        if target is not None:
            yield from _reach(target, depth - 1, seen)
    for module in _modules(value):
        for name in names:
            target = getattr(module, name, None)
            if isinstance(target, types.FunctionType | FilterSet | Ordering):
                yield from _reach(target, depth - 1, seen)


def _names(code: types.CodeType) -> list[str]:
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.extend(_names(const))
    return names


def _modules(func: types.FunctionType) -> list[types.ModuleType]:
    names = set(_names(func.__code__))
    found = []
    for name in names:
        target = func.__globals__.get(name)
        if isinstance(target, types.ModuleType) and target.__name__.startswith("admit."):
            if not target.__name__.startswith("admit.kit."):
                found.append(target)
    return found


def _is_resource(value: Any) -> bool:
    from admit.kit.resources.crud import Resource

    return isinstance(value, Resource)


def _is_factory(func: types.FunctionType) -> bool:
    """A function declared to build a FilterSet or an Ordering (from ids known per request)."""
    returns = func.__annotations__.get("return")
    return returns in ("FilterSet", "Ordering", FilterSet, Ordering)


def _call_factory(func: types.FunctionType) -> Any:
    """Its declarations do not depend on the ids it is given: built with none."""
    params = inspect.signature(func).parameters.values()
    args = [[] for p in params if p.default is inspect.Parameter.empty]
    try:
        return func(*args)
    except Exception:  # a factory that needs real input documents nothing
        return None
