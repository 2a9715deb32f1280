"""Pages whose JSON PostgreSQL writes: the same bytes as a :class:`~admit.kit.resources.render.Rows`
declaration rendered in Python, without a Python object per row.

A rendered page of 50 orders with their positions, answers and payments costs far more CPU in
the worker (decoding thousands of record fields, a dict per row, ``finish``, orjson) than in
the database. A :class:`JsonShape` turns the same declaration into one SQL expression per row
that yields the row's JSON text, compact and in the schema's field order, children included
(a ``string_agg`` per kind, in the kind's order); the worker only joins the page's texts.

Each field's text is derived from its column's type, written exactly as orjson writes the value
the Python path would hold (``json_default`` and ``OPT_UTC_Z``): text, numbers and booleans by
``to_json``; money (NUMERIC) as its text in quotes (``"23.00"``); times as RFC 3339 in UTC
with ``Z`` and microseconds only when there are some; stored JSON (JSONB) compacted, its keys in
the order PostgreSQL keeps them (the order the Python path reads them in). What a ``finish``
function computes or changes, the domain declares as SQL (``fields``): a declaration that
leaves such a field, or a converted one, undeclared fails when the shape is made.

One difference is known and accepted: a number stored in JSON with trailing zeros in its
fraction (``2.50``) keeps them here, where Python's float writes ``2.5``; the server itself
never stores such numbers (it writes JSON with orjson).

``flags`` are what changes a statement but not per row (e.g. which positions an order shows);
statements are built per distinct ``flags`` (their ``variant``), the values that change per
request (slugs, base URLs) are bound parameters the domain's expressions name.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from fastapi import Request
from sqlalchemy import (
    Boolean,
    ColumnElement,
    Date,
    DateTime,
    Float,
    Integer,
    Numeric,
    Select,
    String,
    Text,
    case,
    cast,
    func,
    literal_column,
    select,
)
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.visitors import InternalTraversal
from sqlalchemy.types import JSON, Enum, TypeDecorator
from starlette.responses import Response

from admit.kit.lanes.fastread import FastReader
from admit.kit.resources.listing import Listing, page_records, page_window
from admit.kit.resources.pagination import envelope
from admit.kit.resources.render import Nested, Rows, json_converter

Flags = Mapping[str, Any]
# A field's JSON text (never NULL) for the request's flags.
FieldSql = Callable[[Flags], ColumnElement[str]]
# What a nested kind's rows add to their filter for the request's flags.
Where = Callable[[Flags], Sequence[ColumnElement[bool]]]

# Outside strings, every run of whitespace goes (JSONB's text puts a space after ',' and ':').
_COMPACT = r'("(?:[^"\\]|\\.)*")|\s+'
# ``concat`` takes at most 100 arguments: fields are joined in chunks.
_CHUNK = 60


def sql_text(value: str) -> ColumnElement[str]:
    """A constant text, written into the statement (not a parameter)."""
    return literal_column("'" + value.replace("'", "''") + "'", Text)


def concat(*parts: ColumnElement[Any]) -> ColumnElement[str]:
    """The texts one after the other (none of them NULL)."""
    if len(parts) <= _CHUNK:
        return func.concat(*parts, type_=Text)
    chunks = [func.concat(*parts[i : i + _CHUNK], type_=Text) for i in range(0, len(parts), _CHUNK)]
    return concat(*chunks)


def json_string(expr: ColumnElement[Any]) -> ColumnElement[str]:
    """A text value as a JSON string (``null`` when NULL)."""
    return func.coalesce(cast(func.to_json(cast(expr, Text)), Text), sql_text("null"))


def _quoted(text: ColumnElement[Any]) -> ColumnElement[str]:
    """A text that needs no escaping as a JSON string (``null`` when NULL)."""
    quote = sql_text('"')
    return func.coalesce(quote.op("||")(text).op("||")(quote), sql_text("null"))


def _timestamp(expr: ColumnElement[Any], aware: bool) -> ColumnElement[str]:
    """One ``to_char`` (``expr`` may be a subquery: it is evaluated once); orjson leaves out
    a fraction of zero microseconds."""
    if aware:
        moment = func.timezone(sql_text("UTC"), expr)
        text = func.to_char(moment, sql_text('YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
        text = func.replace(text, sql_text(".000000Z"), sql_text("Z"))
    else:
        text = func.to_char(expr, sql_text('YYYY-MM-DD"T"HH24:MI:SS.US'))
        text = func.regexp_replace(text, sql_text(r"\.000000$"), sql_text(""))
    return _quoted(text)


def compact_json(expr: ColumnElement[Any]) -> ColumnElement[str]:
    """Stored JSON as orjson writes what it decodes to (``null`` when NULL).

    ``json_strip_nulls`` writes JSON compact (in C, eight times faster than the regular
    expression) but leaves out members whose value is null: only JSON without the word
    ``null`` anywhere takes it."""
    text = cast(expr, Text)
    spaced = func.regexp_replace(text, sql_text(_COMPACT), sql_text(r"\1"), sql_text("g"))
    stripped = cast(func.json_strip_nulls(cast(text, JSON)), Text)
    chosen = case((func.strpos(text, sql_text("null")) > 0, spaced), else_=stripped)
    return func.coalesce(chosen, sql_text("null"))


def value_json(expr: ColumnElement[Any]) -> ColumnElement[str]:
    """The JSON text of a selected value, by its type (see the module docstring)."""
    kind = expr.type
    if isinstance(kind, TypeDecorator):  # e.g. aware datetimes: the stored type decides
        kind = kind.impl_instance
    if isinstance(kind, DateTime):
        return _timestamp(expr, bool(kind.timezone))
    if isinstance(kind, Date):
        return json_string(func.to_char(expr, sql_text("YYYY-MM-DD")))
    if isinstance(kind, Float):
        raise ValueError(f"{expr}: floats are not written by the database; declare the field")
    if isinstance(kind, Numeric):  # digits, a sign and a point: nothing to escape
        return _quoted(cast(expr, Text))
    if isinstance(kind, JSON):
        return compact_json(expr)
    if isinstance(kind, Integer | Boolean):  # their text is their JSON
        return func.coalesce(cast(expr, Text), sql_text("null"))
    if isinstance(kind, String | Enum):
        return func.coalesce(cast(func.to_json(expr), Text), sql_text("null"))
    raise ValueError(f"{expr}: no JSON text for type {kind!r}; declare the field")


def json_or_empty(expr: ColumnElement[Any], empty: str = "{}") -> ColumnElement[str]:
    """Stored JSON, ``empty`` where Python's ``value or {}`` (``value or []``) would give it
    (NULL or falsy; compared as JSONB, which costs no text)."""
    falsy_values = ("{}", "null", "false", "0", '""', "[]")
    falsy = func.coalesce(expr.in_([literal_column(f"'{v}'::jsonb") for v in falsy_values]), True)
    return case((falsy, sql_text(empty)), else_=compact_json(expr))


def decimal_json(expr: ColumnElement[Any], places: int = 2) -> ColumnElement[str]:
    """A number as a schema's money or rate serializer writes it (``f"{value:.2f}"``): its
    text with exactly ``places`` decimals, in quotes (``null`` when NULL). The stored values
    have that scale already, so rounding (half away from zero here, half to even in Python)
    never applies to them."""
    return _quoted(cast(func.round(expr, literal_column(str(int(places)))), Text))


def sorted_object(expr: ColumnElement[Any]) -> ColumnElement[str]:
    """A JSONB object as orjson writes ``dict(sorted(value.items()))``: its members ordered
    by key in code point order (``COLLATE "C"`` on UTF-8), ``{}`` for none."""
    each = func.jsonb_each(expr).table_valued("key", "value").render_derived()
    member = concat(json_string(each.c.key), sql_text(":"), compact_json(each.c.value))
    by_key = aggregate_order_by(sql_text(","), each.c.key.collate("C"))
    members = select(func.string_agg(member, by_key)).select_from(each).scalar_subquery()
    return concat(sql_text("{"), func.coalesce(members, sql_text("")), sql_text("}"))


def json_array(
    element: ColumnElement[str],
    where: Sequence[ColumnElement[bool]],
    order_by: Sequence[Any] = (),
) -> ColumnElement[str]:
    """The JSON texts ``element`` of the rows ``where`` selects, as a JSON array in
    ``order_by`` (``[]`` for none)."""
    sep = sql_text(",")
    if order_by:
        joined = func.string_agg(element, aggregate_order_by(sep, *order_by))
    else:
        joined = func.string_agg(element, sep)
    inner = select(joined).where(*where).scalar_subquery()
    return concat(sql_text("["), func.coalesce(inner, sql_text("")), sql_text("]"))


class Built(ColumnElement[str]):
    """A shape's JSON expression as a statement's column, known to SQLAlchemy's statement
    cache by its identity alone: a statement built per request (a filtered list) around it
    is keyed without walking its thousands of nodes (they hold no value that changes; the
    request's values are named parameters, bound at execution)."""

    inherit_cache = True
    _traverse_internals = [("name", InternalTraversal.dp_string)]
    _serials = itertools.count(1)

    def __init__(self, inner: ColumnElement[str]) -> None:
        self.inner = inner
        self.name = f"json-{next(self._serials)}"
        self.type = Text()

    @property
    def _from_objects(self) -> list[Any]:  # type: ignore[override]
        return self.inner._from_objects


@compiles(Built)
def _compile_built(element: Built, compiler: Any, **kw: Any) -> str:
    return compiler.process(element.inner, **kw)  # type: ignore[no-any-return]


def _key(name: str) -> str:
    return orjson.dumps(name).decode() + ":"


@dataclass(eq=False)
class JsonShape:
    """A :class:`Rows` declaration written as JSON by the database (module docstring).

    ``fields``: the SQL of what ``finish`` computes or changes; a key of several consecutive
    field names is one expression for all of them (from the first value on, the later keys
    included: ``[1],"b":[2]``), e.g. two lists of one subquery. ``children``: the shapes of
    the nested kinds' rows (matched by their ``Rows``). ``where``: what this kind adds to its
    filter where it is nested (e.g. canceled fees only when asked for)."""

    rows: Rows
    fields: Mapping[str | tuple[str, ...], FieldSql] = field(default_factory=dict)
    children: Sequence[JsonShape] = ()
    where: Where | None = None
    _objects: dict[Any, ColumnElement[str]] = field(default_factory=dict)
    _built: dict[Any, Built] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._check()

    def _declared(self) -> dict[str, tuple[str, ...]]:
        """Each declared field's names by its first name."""
        return {
            (k if isinstance(k, str) else k[0]): ((k,) if isinstance(k, str) else k)
            for k in self.fields
        }

    def _own(self) -> dict[str, ColumnElement[Any]]:
        """The declaration's selected columns by field name (labels removed)."""
        return {n: c.element for n, c in zip(self.rows.names, self.rows.columns, strict=False)}

    def _names(self) -> list[str]:
        return [n for n in self.rows.template if n not in self.rows.hidden]

    def _check(self) -> None:
        own = self._own()
        nested = {n.name for n in self.rows.children}
        schema = self.rows.schema
        names = self._names()
        declared = set()
        for first, group in self._declared().items():
            at = names.index(first)
            if tuple(names[at : at + len(group)]) != group:
                raise ValueError(f"{schema.__name__}: {group} are not consecutive fields")
            declared.update(group)
        for name in names:
            if name in declared or name in nested:
                continue
            if name not in own:
                raise ValueError(f"{schema.__name__}.{name}: computed; declare its SQL")
            if json_converter(schema, name) is not None:
                raise ValueError(f"{schema.__name__}.{name}: converted; declare its SQL")
            value_json(own[name])  # raises for a type it cannot write
        shaped = {id(c.rows) for c in self.children}
        for n in self.rows.children:
            if n.name in names and n.name not in declared:
                if n.rows is not None and id(n.rows) not in shaped:
                    raise ValueError(f"{schema.__name__}.{n.name}: no shape for its rows")

    def child(self, nested: Nested) -> JsonShape:
        return next(c for c in self.children if c.rows is nested.rows)

    def array(self, nested: Nested, flags: Flags) -> ColumnElement[str]:
        """A nested kind's rows of the enclosing row, as a JSON array (``[]`` for none)."""
        where = list(nested.where)
        if nested.rows is not None:
            shape = self.child(nested)
            element = shape.object(flags)
            if shape.where is not None:
                where += shape.where(flags)
        else:
            assert nested.value is not None
            element = value_json(nested.value)
        return json_array(element, (nested.key == nested.local, *where), nested.order_by)

    def object(self, flags: Flags) -> ColumnElement[str]:
        """The row's JSON object for ``flags`` (built once per ``flags``)."""
        key = tuple(sorted(flags.items()))
        built = self._objects.get(key)
        if built is not None:
            return built
        own = self._own()
        declared = self._declared()
        parts: list[ColumnElement[Any]] = []
        skip: set[str] = set()
        for i, name in enumerate(self._names()):
            if name in skip:
                continue
            parts.append(sql_text(("{" if i == 0 else ",") + _key(name)))
            group = declared.get(name)
            if group is not None:
                parts.append(self.fields[group[0] if len(group) == 1 else group](flags))
                skip.update(group)
                continue
            kinds = [n for n in self.rows.children if n.name == name]
            if kinds:
                [nested] = [n for n in kinds if n.when is None or n.when(flags)]
                parts.append(self.array(nested, flags))
            else:
                parts.append(value_json(own[name]))
        parts.append(sql_text("}"))
        built = self._objects[key] = concat(*parts)
        return built

    def columns_for(self, native: bool, variant: tuple[Any, ...] = ()) -> tuple[Any, ...]:
        """For :class:`~admit.kit.resources.listing.Listing`: the row's JSON as the one
        column; ``variant`` is the flags' items."""
        built = self._built.get(variant)
        if built is None:
            built = self._built[variant] = Built(self.object(dict(variant)))
        return (built.label("j"),)


def variant_of(flags: Flags) -> tuple[Any, ...]:
    """The ``variant`` a listing keeps a shape's statements by."""
    return tuple(sorted(flags.items()))


async def json_page_body(
    request: Request,
    reader: FastReader,
    session: AsyncSession,
    stmt: Select[Any],
    params: Mapping[str, Any],
    *,
    static: bool,
    page: int,
    size: int,
) -> bytes:
    """``{count, next, previous, results}`` from a statement selecting each row's JSON and
    the count (as ``listing.page_body``); 404 past the last page."""
    records, count = await page_records(reader, session, stmt, params, static=static, page=page)
    head = orjson.dumps(envelope(request, count, page, size, []))
    body = ",".join([r[0] for r in records]).encode()
    return head[:-2] + body + b"]}" if body else head


async def respond_json(
    listing: Listing,
    request: Request,
    session: AsyncSession,
    query: Select[Any] | None,
    values: Mapping[str, Any],
    *,
    snapshot_params: Mapping[str, Any] | None = None,
    tenant: Any = None,
    ordering: str | None = None,
) -> Response:
    """``Listing.respond`` for a listing whose rows are a :class:`JsonShape`: a filtered
    list ``query`` (the same kept keys or ``OFFSET`` pages), or (``query`` None) the page
    statement built once for ``tenant`` and ``ordering``; the request's ``values`` bound
    with the statement's parameters."""
    page, size, offset = page_window(request)
    reader: FastReader = session.info["fast"]
    kept = None
    if snapshot_params is not None and query is not None:
        kept = await listing.kept_page(session, query, (page, size, offset), snapshot_params)
    if kept is not None:
        (stmt, params), static = kept, True
    elif query is None:
        stmt, static = listing.static_page(ordering, reader.native, size=size, offset=offset)
        params = {"tenant": tenant, "limit": size, "offset": offset}
    else:
        stmt, params, static = listing.page_of(query, size, offset, reader.native), {}, False
    body = await json_page_body(
        request, reader, session, stmt, {**params, **values}, static=static, page=page, size=size
    )
    return Response(body, media_type="application/json")
