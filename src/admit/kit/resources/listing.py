"""Pages and details of a :class:`~admit.kit.resources.render.Rows` declaration, as JSON bytes.

The count and the page come in one round trip: the page's statement carries the count of
the whole (filtered) list as a scalar subquery in a last column, which the database works
out once. An empty page needs no count: on page 1 it is 0, past page 1 the page is 404
(as the reference answers), so no second statement is ever needed. Counts are exact.

Statements are built once where the request allows: a list narrowed by nothing but the
tenant (no filter asked) is served by a page statement built once per ordering, with the
tenant, the page size and the offset as parameters, so a request builds no SQL at all. A
filtered list is built per request from the resource's own list query (the same filters
as ever) with its columns swapped for the rendered ones; the native pool caches its SQL by
SQLAlchemy's cache key. Either way the rows are those the resource's list query selects.

A first page (offset 0, what pollers read) has its size written into the statement, not
bound: PostgreSQL then plans a prepared page statement once (its generic plan, kept by the
connection) instead of planning it anew for every execution, as it does while a bound
``LIMIT``/``OFFSET`` makes the generic plan look costlier than a custom one (measured: 1.5-2
ms of the database's CPU per page of orders, about a fifth of it). Deeper pages keep both
bound, so that they share one statement.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import orjson
from fastapi import Request
from sqlalchemy import ColumnElement, Integer, Select, bindparam, func, literal_column, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.kit.http.errors import APIError
from admit.kit.http.responses import json_default
from admit.kit.lanes.fastread import FastReader
from admit.kit.resources.filtering import INT_MAX, Ordering
from admit.kit.resources.keylists import ordered_keys
from admit.kit.resources.pagination import PAGE_SIZE, envelope, page_params
from admit.kit.resources.render import Fetch, Record, Rows
from admit.kit.stamps.pagecache import Validator

COUNT = "__count"
# Completes rendered rows in place (e.g. values loaded in one batch for the whole page).
Complete = Callable[[list[dict[str, Any]]], Awaitable[None]]
_OPTIONS = orjson.OPT_UTC_Z
# Page statements kept per resource, one per ordering a client asked for (bounded: beyond
# this, further orderings are built per request).
_MAX_ORDERINGS = 32


def dumps(body: Any) -> bytes:
    return orjson.dumps(body, option=_OPTIONS, default=json_default)


def json_response(body: Any, status_code: int = 200) -> Response:
    return Response(dumps(body), status_code=status_code, media_type="application/json")


def page_window(request: Request) -> tuple[int, int, int]:
    """The page, its size and its offset asked for; 404 past the last row any INTEGER id
    allows, whatever the count (such offsets must not reach a query)."""
    page, size = page_params(request)
    offset = (page - 1) * size
    if offset > INT_MAX:
        raise APIError(404, "Invalid page.")
    return page, size, offset


def first_page(size: int | None, offset: int) -> int | None:
    """The page size to write into a page statement: that of a first page, else None."""
    return int(size) if size is not None and offset == 0 else None


def _window(first: int | None) -> tuple[Any, Any]:
    """``LIMIT`` and ``OFFSET`` of a page statement: a first page's size written in (and no
    offset), else both bound (``limit``, ``offset``)."""
    if first is not None:
        return literal_column(str(first), Integer), None
    return bindparam("limit"), bindparam("offset")


def fetcher(reader: FastReader, session: AsyncSession) -> Fetch:
    async def fetch(stmt: Select[Any], params: Mapping[str, Any]) -> Sequence[Record]:
        return await reader.rows(session, stmt, params)

    return fetch


class Listing:
    """The list and detail statements of one kind of rows in one tenant column, for either
    kind of reader (``native``: children inline, see ``kit/resources/render.py``)."""

    def __init__(
        self,
        rows: Rows,
        table: Any,
        tenant: ColumnElement[Any] | None,
        pk: ColumnElement[Any],
        ordering: Ordering | None,
        *,
        where: Sequence[ColumnElement[bool]] = (),
        count_from: Any = None,
        key_where: Sequence[ColumnElement[bool]] = (),
        narrow: bool = False,
        snapshot: Validator | None = None,
    ) -> None:
        """``where``: what the statements built once add to the tenant (e.g. leaving out
        canceled rows). ``count_from``: the table their count reads, where ``table`` is a
        join the count does not need (a foreign key guarantees the joined row).
        ``key_where``: what only the page's key query adds (e.g. the joined table's tenant,
        equal by construction, so that the database can walk that table's index).

        ``narrow``: pages of large tables find the page's keys first (filtered, sorted and
        cut to the page on the key alone) and read the rendered columns for those rows
        only. Otherwise the database may work out every column, subqueries included, for
        every row it sorts, and sorts rows as wide as the rendered ones.

        ``snapshot``: what proves the rows of a filtered list unchanged (its params come
        with each request); deep or large pages then slice the list's kept keys instead of
        counting and sorting the whole list for each page (``kit/resources/keylists.py``)."""
        self.narrow = narrow
        self.snapshot = snapshot
        self._by_keys: dict[tuple[bool, tuple[bool, ...]], Select[Any]] = {}
        self.rows = rows
        self.table = table
        self.tenant = tenant
        self.pk = pk
        self.ordering = ordering
        self.where = tuple(where)
        self.key_where = tuple(key_where)
        self.count_from = table if count_from is None else count_from
        self._pages: dict[tuple[str | None, bool, tuple[bool, ...]], Select[Any]] = {}
        self._details: dict[tuple[bool, tuple[bool, ...]], Select[Any]] = {}

    def _base(self, native: bool, variant: tuple[bool, ...]) -> Select[Any]:
        assert self.tenant is not None
        return (
            select(*self.rows.columns_for(native, variant))
            .select_from(self.table)
            .where(self.tenant == bindparam("tenant"), *self.where)
        )

    def static_page(
        self,
        raw_ordering: str | None,
        native: bool,
        variant: tuple[bool, ...] = (),
        *,
        size: int | None = None,
        offset: int = 0,
    ) -> tuple[Select[Any], bool]:
        """The page statement for an ordering (unknown names dropped), and whether it is kept
        (else it was built for this request). ``variant``: see :meth:`Rows.variant`. Its
        parameters are ``tenant``, ``limit`` and ``offset``; for a first page (``size``
        given, ``offset`` 0) the size is written in (module docstring) and the two are
        unused."""
        if self.ordering is not None:
            raw_ordering = self.ordering.known(raw_ordering)
        first = first_page(size, offset)
        key = (raw_ordering, native, variant, first)
        stmt = self._pages.get(key)
        if stmt is not None:
            return stmt, True
        count = (
            select(func.count())
            .select_from(self.count_from)
            .where(self.tenant == bindparam("tenant"), *self.where)
            .scalar_subquery()
        )
        order = self.ordering.clauses(raw_ordering) if self.ordering is not None else [self.pk]
        limit, skip = _window(first)
        if self.narrow:
            keys = select(self.pk).select_from(self.table)
            keys = keys.where(self.tenant == bindparam("tenant"), *self.where, *self.key_where)
            keys = keys.order_by(*order)
            stmt = self._keyed(keys, limit, skip, count, native, variant)
        else:
            stmt = self._base(native, variant).add_columns(count.label(COUNT)).order_by(*order)
            stmt = stmt.limit(limit).offset(skip)
        if len(self._pages) >= _MAX_ORDERINGS:
            return stmt, False
        self._pages[key] = stmt
        return stmt, True

    def page_of(
        self,
        query: Select[Any],
        size: int,
        offset: int,
        native: bool,
        variant: tuple[bool, ...] = (),
    ) -> Select[Any]:
        """The page of a resource's list query (``select(Model)`` with its filters and
        ordering), its columns swapped for the rendered ones and the count added."""
        count = select(func.count()).select_from(query.order_by(None).subquery())
        if self.ordering is None:
            query = query.order_by(self.pk)  # a stable order, as the static statement's
        # A first page's size is written in (module docstring); deeper pages bind both.
        limit: Any = size
        skip: Any = offset
        if (first := first_page(size, offset)) is not None:
            limit, skip = _window(first)
        if self.narrow:
            return self._keyed(query, limit, skip, count.scalar_subquery(), native, variant)
        columns = self.rows.columns_for(native, variant)
        return (
            query.with_only_columns(*columns, count.scalar_subquery().label(COUNT))
            .limit(limit)
            .offset(skip)
        )

    def _keyed(
        self,
        query: Select[Any],
        limit: Any,
        offset: Any,
        count: Any,
        native: bool,
        variant: tuple[bool, ...],
    ) -> Select[Any]:
        """The rendered columns of the rows whose keys ``query`` (ordered) pages to."""
        keys = query.with_only_columns(self.pk.label("k")).limit(limit).offset(offset)
        page = keys.subquery("page")
        return (
            select(*self.rows.columns_for(native, variant), count.label(COUNT))
            .select_from(self.table)
            .join(page, self.pk == page.c.k)
            .order_by(*query._order_by_clauses)
        )

    async def respond(
        self,
        request: Request,
        session: AsyncSession,
        *,
        query: Select[Any] | None = None,
        tenant: Any = None,
        ordering: str | None = None,
        extra: Mapping[str, Any] | None = None,
        after: Complete | None = None,
        snapshot_params: Mapping[str, Any] | None = None,
    ) -> Response:
        """A page as the answer: of the resource's filtered, ordered list ``query``, or
        (``query`` None) of the statement built once for ``tenant`` and ``ordering``.
        ``snapshot_params``: the parameters of the listing's ``snapshot`` validator for
        this list (None: pages are read with ``OFFSET``)."""
        page, size, offset = page_window(request)
        reader: FastReader = session.info["fast"]
        kept = None
        if query is not None and snapshot_params is not None:
            kept = await self.kept_page(session, query, (page, size, offset), snapshot_params)
        if kept is not None:
            stmt, params = kept
            static = True
        elif query is None:
            stmt, static = self.static_page(ordering, reader.native, size=size, offset=offset)
            params: dict[str, Any] = {"tenant": tenant, "limit": size, "offset": offset}
        else:
            stmt, static, params = self.page_of(query, size, offset, reader.native), False, {}
        body = await page_body(
            request,
            reader,
            session,
            self.rows,
            stmt,
            params,
            static=static,
            page=page,
            size=size,
            extra=extra or {},
            after=after,
        )
        return Response(body, media_type="application/json")

    async def kept_page(
        self,
        session: AsyncSession,
        query: Select[Any],
        window: tuple[int, int, int],
        snapshot_params: Mapping[str, Any],
        variant: tuple[bool, ...] = (),
    ) -> tuple[Select[Any], dict[str, Any]] | None:
        """The page statement (built once) and its parameters for a deep or large page of
        ``query`` from its kept keys (``kit/resources/keylists.py``); None where pages are
        read with ``OFFSET`` (no snapshot validator, SQLite, a first page of at most 50)."""
        page, size, offset = window
        reader: FastReader = session.info["fast"]
        if self.snapshot is None or not reader.native or (offset == 0 and size <= PAGE_SIZE):
            return None
        keys_query = query.with_only_columns(self.pk)
        if self.ordering is None:
            keys_query = keys_query.order_by(self.pk)
        keys = await ordered_keys(reader, session, keys_query, self.snapshot, snapshot_params)
        if page > 1 and offset >= len(keys):
            raise APIError(404, "Invalid page.")
        params = {"ids": keys[offset : offset + size].tolist(), "count": len(keys)}
        return self.by_keys(reader.native, variant), params

    def by_keys(self, native: bool, variant: tuple[bool, ...] = ()) -> Select[Any]:
        """The rendered rows of the keys ``ids`` (an array) in their order, with ``count``
        as the page's count column (built once: one SQL text whatever the page)."""
        stmt = self._by_keys.get((native, variant))
        if stmt is None:
            ids = bindparam("ids", type_=ARRAY(Integer))
            page = func.unnest(ids).table_valued("k", with_ordinality="n").render_derived()
            count = bindparam("count", type_=Integer)
            stmt = (
                select(*self.rows.columns_for(native, variant), count.label(COUNT))
                .select_from(self.table)
                .join(page, self.pk == page.c.k)
                .order_by(page.c.n)
            )
            self._by_keys[(native, variant)] = stmt
        return stmt

    def static_detail(self, native: bool, variant: tuple[bool, ...] = ()) -> Select[Any]:
        stmt = self._details.get((native, variant))
        if stmt is None:
            stmt = self._base(native, variant).where(self.pk == bindparam("pk"))
            self._details[(native, variant)] = stmt
        return stmt

    def detail_of(
        self, query: Select[Any], pk: int, native: bool, variant: tuple[bool, ...] = ()
    ) -> Select[Any]:
        columns = self.rows.columns_for(native, variant)
        return query.with_only_columns(*columns).where(self.pk == pk)


async def page_records(
    reader: FastReader,
    session: AsyncSession,
    stmt: Select[Any],
    params: Mapping[str, Any],
    *,
    static: bool,
    page: int,
) -> tuple[Sequence[Any], int]:
    """A page's rows (each ending with the list's count) and the count; 404 past the last
    page."""
    records = await reader.rows(session, stmt, params, static=static)
    if not records:
        if page > 1:
            raise APIError(404, "Invalid page.")
        return records, 0
    return records, records[0][-1]


async def page_body(
    request: Request,
    reader: FastReader,
    session: AsyncSession,
    rows: Rows,
    stmt: Select[Any],
    params: Mapping[str, Any],
    *,
    static: bool,
    page: int,
    size: int,
    extra: Mapping[str, Any],
    after: Complete | None = None,
) -> bytes:
    """``{count, next, previous, results}`` as JSON; 404 past the last page. ``after``
    completes the rendered rows of the page (what no statement per kind gives)."""
    records, count = await page_records(reader, session, stmt, params, static=static, page=page)
    results = await rows.render(fetcher(reader, session), reader.native, records, extra)
    if after is not None and results:
        await after(results)
    return dumps(envelope(request, count, page, size, results))


async def detail_body(
    reader: FastReader,
    session: AsyncSession,
    rows: Rows,
    stmt: Select[Any],
    params: Mapping[str, Any],
    *,
    static: bool,
    extra: Mapping[str, Any],
    after: Complete | None = None,
) -> bytes | None:
    """One row as JSON, or None when there is none."""
    records = await reader.rows(session, stmt, params, static=static)
    if not records:
        return None
    [row] = await rows.render(fetcher(reader, session), reader.native, records[:1], extra)
    if after is not None:
        await after([row])
    return dumps(row)
