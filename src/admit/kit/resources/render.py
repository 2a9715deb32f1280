"""Rows rendered straight to JSON, declared once per resource next to its read schema.

Building an ORM object and a Pydantic model per row costs far more CPU than the database
spends finding the row. A :class:`Rows` declaration renders the same JSON from a Core select
of exactly the rendered columns: each row becomes a dict (in the schema's field order) whose
values orjson writes as they are.

The read schema stays the one definition: the columns are derived from its fields (a field
``x`` is the model's column ``x`` or, for references, ``x_id``), and so is what a field's
value becomes in JSON where orjson would write it differently (money and rates through the
schema's own serializer, so ``"23.00"`` keeps its places). What cannot be derived is declared:
an expression for a field (``columns``), fields filled in Python (``computed``, by
``finish``) and nested lists (``children``, :class:`Nested`). A declaration that leaves a
schema field uncovered fails when it is made, and ``tests/kit/test_render_parity.py``
compares every declared renderer with the Pydantic path on the same data.

Children come in a fixed number of statements whatever the page size. On PostgreSQL (the
native pool) they come inside the page's own statement: per row, an array of records per
kind (``array_agg(ROW(...))``, which asyncpg decodes with every field's own type), nested as
deep as the declaration goes, so a page is one round trip. Elsewhere each kind is one
statement for the whole page (``parent_id IN (...)``), grandchildren likewise, and a kind
declared with ``probe`` is only looked up for the parents an ``EXISTS`` in the page's select
found to have some.

On PostgreSQL a list may skip the Python side altogether: ``kit/resources/sql_json.py`` turns
a declaration (with the SQL of what its ``finish`` computes) into one expression per row that
the database writes as the row's JSON, the same bytes.

``finish(row, parent, extra)`` runs once per row after its children are attached; the values
it sees and writes are already JSON-ready. A child's ``finish`` runs before its parent's, so
it sees the parent's selected values as they came from the database (converted, not
finished). ``extra`` holds what the request knows (e.g. the event's declared meta data).
"""

from __future__ import annotations

import itertools
import types
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, PlainSerializer
from sqlalchemy import (
    ARRAY,
    JSON,
    ColumnElement,
    Select,
    any_,
    bindparam,
    cast,
    exists,
    func,
    inspect,
    null,
    select,
)
from sqlalchemy.dialects.postgresql import aggregate_order_by

Record = Sequence[Any]
Fetch = Callable[[Select[Any], Mapping[str, Any]], Awaitable[Sequence[Record]]]
Finish = Callable[[dict[str, Any], dict[str, Any] | None, Mapping[str, Any]], None]
Convert = Callable[[Any], Any]

_SERIALS = itertools.count(1)
KEY = "__key"  # a child row's parent id, selected first by a kind's own statement


def _unwrap_optional(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def json_converter(schema: type[BaseModel], name: str) -> Convert | None:
    """What Pydantic does to a non-null value of field ``name`` in JSON mode where orjson
    would write it differently: a serializer of the schema's type (money, rates), or a
    number declared ``float`` (a NUMERIC column would give a Decimal)."""
    info = schema.model_fields[name]
    metadata = list(info.metadata)
    annotation = _unwrap_optional(info.annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        metadata += list(annotation.__metadata__)
        annotation = typing.get_args(annotation)[0]
    for item in reversed(metadata):
        if isinstance(item, PlainSerializer) and item.when_used in ("json", "always"):
            return item.func  # type: ignore[return-value]
    if annotation is float:
        return float
    return None


def _in_record(column: ColumnElement[Any]) -> ColumnElement[Any]:
    """A column as a field of a record: JSONB travels as JSON there (asyncpg decodes record
    fields in binary, where JSONB carries a version byte the JSON decoder does not read)."""
    return cast(column, JSON) if isinstance(column.type, JSON) else column


@dataclass(eq=False)
class Nested:
    """A list field filled from another table: rendered rows (``rows``) or one value each
    (``value``, e.g. the ids of a many-to-many link)."""

    name: str
    key: ColumnElement[Any]  # the child's column naming the parent
    local: ColumnElement[Any]  # the parent's column it names
    rows: Rows | None = None
    value: ColumnElement[Any] | None = None
    order_by: Sequence[Any] = ()
    where: Sequence[ColumnElement[bool]] = ()
    parent_field: str = "id"
    # Filled only when this says so for the request (e.g. a query parameter); otherwise the
    # field keeps what ``finish`` puts there.
    when: Callable[[Mapping[str, Any]], bool] | None = None
    # For kinds most parents have none of (statement per kind only): the parent's select
    # says which parents have any, and the statement runs only for those, or not at all.
    probe: bool = False
    _statements: dict[bool, Select[Any]] = field(default_factory=dict)
    # Tells apart the columns of two kinds filling one field (e.g. positions with and
    # without the canceled ones, by ``when``).
    _serial: int = field(default_factory=lambda: next(_SERIALS), init=False)

    @classmethod
    def of(
        cls,
        relationship: Any,
        rows: Rows | None = None,
        *,
        value: ColumnElement[Any] | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> Nested:
        """From an ORM relationship: its foreign key and its ``order_by``. A many-to-many
        relationship gives the linked ids (``value`` defaults to the link's column)."""
        prop = relationship.property
        order_by = kwargs.pop("order_by", None)
        if prop.secondary is not None:
            if rows is not None:
                raise ValueError("many-to-many children render as ids only")
            [(local, key)] = prop.synchronize_pairs
            [(_, linked)] = prop.secondary_synchronize_pairs
            value = value if value is not None else linked
            order_by = order_by if order_by is not None else (linked,)
        else:
            [(local, key)] = prop.local_remote_pairs
            if order_by is None:
                order_by = tuple(prop.order_by or ())
        return cls(
            name or prop.key, key, local, rows=rows, value=value, order_by=order_by, **kwargs
        )

    @property
    def probe_name(self) -> str:
        return f"__has_{self.name}"

    @property
    def inline_name(self) -> str:
        return f"__in_{self.name}_{self._serial}"

    def probe_column(self) -> ColumnElement[bool]:
        return exists().where(self.key == self.local, *self.where)

    def inline_column(self) -> ColumnElement[Any]:
        """Per parent row, the children as an array of records (or of values), in order;
        NULL when there are none. PostgreSQL only."""
        if self.rows is not None:
            element: Any = func.row(*self.rows.record_columns)
        else:
            assert self.value is not None
            element = self.value
        if self.order_by:
            element = aggregate_order_by(element, *self.order_by)
        aggregate = func.array_agg(element)
        return select(aggregate).where(self.key == self.local, *self.where).scalar_subquery()

    def statement(self, native: bool) -> Select[Any]:
        """The kind's own statement for a page's parent ids, built once per kind of
        database (``= ANY($1)`` for the native pool: one SQL text whatever the number of
        ids; an expanding ``IN`` elsewhere)."""
        stmt = self._statements.get(native)
        if stmt is None:
            if native:
                match = self.key == any_(bindparam("ids", type_=ARRAY(self.key.type)))
            else:
                match = self.key.in_(bindparam("ids", expanding=True))
            columns = self.rows.columns if self.rows is not None else [self.value]
            stmt = select(self.key.label(KEY), *columns).where(match, *self.where)
            stmt = stmt.order_by(*self.order_by)
            self._statements[native] = stmt
        return stmt


class Rows:
    """How rows of one kind render (see the module docstring)."""

    def __init__(
        self,
        schema: type[BaseModel],
        model: Any,
        *,
        columns: Mapping[str, ColumnElement[Any]] | None = None,
        computed: Sequence[str] = (),
        children: Sequence[Nested] = (),
        hidden: Mapping[str, ColumnElement[Any]] | None = None,
        omit: Sequence[str] = (),
        finish: Finish | None = None,
    ) -> None:
        self.schema = schema
        self.children = tuple(children)
        self.finish = finish
        mapped = inspect(model).columns
        given = dict(columns or {})
        nested = {c.name for c in self.children}
        own: dict[str, ColumnElement[Any]] = {}
        fields = [n for n in schema.model_fields if n not in omit]
        for name in fields:
            if name in given:
                own[name] = given.pop(name)
            elif name in nested or name in computed:
                continue
            elif name in mapped:
                own[name] = mapped[name]
            elif f"{name}_id" in mapped:
                own[name] = mapped[f"{name}_id"]
            else:
                raise ValueError(f"{schema.__name__}.{name}: no column; declare it")
        if given:
            raise ValueError(f"{schema.__name__}: columns not in the schema: {sorted(given)}")
        own.update(hidden or {})
        probes = {n.probe_name: n.probe_column() for n in self.children if n.probe}
        inline = {n.inline_name: n for n in self.children}
        # A statement per kind: own columns, then the probes.
        self.names = (*own, *probes)
        self.columns = tuple(e.label(f"r_{n}") for n, e in {**own, **probes}.items())
        # Children inline (PostgreSQL): own columns, then an array per kind.
        self.native_names = (*own, *inline)
        self.native_columns = (
            *(e.label(f"r_{n}") for n, e in own.items()),
            *(n.inline_column().label(f"r_{k}") for k, n in inline.items()),
        )
        # The same inside a parent's record (no labels there; JSONB as JSON).
        self.record_columns = (
            *(_in_record(e) for e in own.values()),
            *(n.inline_column() for n in inline.values()),
        )
        # Kinds filled only when the request says so: a statement for a request that does
        # not want one selects NULL in its place (the database skips the subquery).
        self._optional = tuple(
            (len(own) + i, f"r_{k}", n) for i, (k, n) in enumerate(inline.items()) if n.when
        )
        self._variants: dict[tuple[bool, ...], tuple[ColumnElement[Any], ...]] = {}
        self.hidden = (*(hidden or {}), *probes, *inline)
        # Rows start as a copy of this: every field in the schema's order, then the hidden.
        self.template: dict[str, Any] = dict.fromkeys([*fields, *self.hidden])
        self.converters = tuple(
            (name, conv)
            for name in own
            if name in schema.model_fields and (conv := json_converter(schema, name))
        )
        self._by_name = dict(self.converters)

    def variant(self, extra: Mapping[str, Any]) -> tuple[bool, ...]:
        """Which of the kinds filled only on request (``when``) the request fills: statements
        are kept per variant (see :meth:`columns_for`)."""
        return tuple(bool(n.when(extra)) for _, _, n in self._optional if n.when)

    def columns_for(
        self, native: bool, variant: tuple[bool, ...] = ()
    ) -> tuple[ColumnElement[Any], ...]:
        """The selected columns; on PostgreSQL with a ``variant``, the inline kinds the
        request does not fill are NULL (same names and places, no subquery)."""
        if not native:
            return self.columns
        if not variant or all(variant):
            return self.native_columns
        columns = self._variants.get(variant)
        if columns is None:
            chosen = list(self.native_columns)
            for (place, label, _), wanted in zip(self._optional, variant, strict=True):
                if not wanted:
                    chosen[place] = null().label(label)
            columns = self._variants[variant] = tuple(chosen)
        return columns

    def convert(self, name: str, value: Any) -> Any:
        """``value`` as field ``name`` shows it in JSON (for values ``finish`` computes)."""
        conv = self._by_name.get(name) or json_converter(self.schema, name)
        return value if value is None or conv is None else conv(value)

    def build(
        self, records: Sequence[Record], native: bool, offset: int = 0
    ) -> list[dict[str, Any]]:
        """Dicts of the selected values (from column ``offset`` of each record), converted.
        Trailing columns beyond the declared ones (a page's count) are ignored."""
        template = self.template
        names = self.native_names if native else self.names
        out = []
        for record in records:
            row = template.copy()
            row.update(zip(names, record[offset:] if offset else record, strict=False))
            out.append(row)
        for name, conv in self.converters:
            for row in out:
                value = row[name]
                if value is not None:
                    row[name] = conv(value)
        return out

    async def render(
        self, fetch: Fetch, native: bool, records: Sequence[Record], extra: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """The rows of one page (selected with ``columns_for(native)``), children included,
        finished, ready for orjson."""
        rows = self.build(records, native)
        if native:
            self._complete_inline(rows, extra, None)
        else:
            await self._complete(fetch, rows, extra, None)
        return rows

    def _complete_inline(
        self,
        rows: list[dict[str, Any]],
        extra: Mapping[str, Any],
        parents: list[dict[str, Any]] | None,
    ) -> None:
        for nested in self.children:
            name, key = nested.name, nested.inline_name
            if nested.when is not None and not nested.when(extra):
                continue
            if nested.rows is None:
                for row in rows:
                    row[name] = row[key] or []
                continue
            child_rows, owners = [], []
            for row in rows:
                records = row[key] or ()
                built = nested.rows.build(records, True)
                row[name] = built
                child_rows += built
                owners += [row] * len(built)
            nested.rows._complete_inline(child_rows, extra, owners)
        self._finish(rows, extra, parents)

    async def _complete(
        self,
        fetch: Fetch,
        rows: list[dict[str, Any]],
        extra: Mapping[str, Any],
        parents: list[dict[str, Any]] | None,
    ) -> None:
        for nested in self.children:
            if nested.when is not None and not nested.when(extra):
                continue
            await _load(nested, fetch, rows, extra)
        self._finish(rows, extra, parents)

    def _finish(
        self,
        rows: list[dict[str, Any]],
        extra: Mapping[str, Any],
        parents: list[dict[str, Any]] | None,
    ) -> None:
        finish = self.finish
        if finish is not None:
            if parents is None:
                for row in rows:
                    finish(row, None, extra)
            else:
                for row, parent in zip(rows, parents, strict=True):
                    finish(row, parent, extra)
        for name in self.hidden:
            for row in rows:
                del row[name]


async def _load(
    nested: Nested, fetch: Fetch, rows: list[dict[str, Any]], extra: Mapping[str, Any]
) -> None:
    """Fills ``nested.name`` of every row from the kind's own statement."""
    pf = nested.parent_field
    groups: dict[Any, list[Any]] = {}
    if nested.probe:
        probe = nested.probe_name
        ids = list(dict.fromkeys(r[pf] for r in rows if r[probe] and r[pf] is not None))
    else:
        ids = list(dict.fromkeys(r[pf] for r in rows if r[pf] is not None))
    if ids:
        records = await fetch(nested.statement(False), {"ids": ids})
        if nested.rows is None:
            for record in records:
                groups.setdefault(record[0], []).append(record[1])
        else:
            children = nested.rows.build(records, False, offset=1)
            by_id = {r[pf]: r for r in rows}
            parents = [by_id[record[0]] for record in records]
            await nested.rows._complete(fetch, children, extra, parents)
            for record, child in zip(records, children, strict=True):
                groups.setdefault(record[0], []).append(child)
    name = nested.name
    for row in rows:
        row[name] = groups.get(row[pf], [])
