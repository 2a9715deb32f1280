"""Order and order position GETs (lists and details) rendered from rows (``order_rows.py``)
through ``kit/resources/listing.py``: the count and the page in one statement, one statement per
kind of child, the JSON written once by orjson.

The same filters, orderings and flags as ever select the rows (``filters.py``). A list
narrowed by nothing but its event (no filter, flag or search asked) is served by a statement
built once per ordering; any other by one built from the filtered query. ``pdf_data`` (event
endpoints only, as in the reference) is added to a rendered page in one ticket batch;
``include=`` / ``exclude=`` (``kit/resources/fields.py``) then narrow the rendered rows.

Writes (create, PATCH, actions) still answer through ``serialize.py`` and ``downloads_field.py``
on ORM objects; ``tests/orders/test_row_parity.py`` holds both to the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import ARRAY, Integer, Select, any_, bindparam, select
from starlette.responses import Response

from admit.kit.http.context import EventContext, OrgContext, public_base_url
from admit.kit.http.errors import FieldErrors, not_found
from admit.kit.lanes.fastread import FastReader
from admit.kit.resources.fields import FieldSelection
from admit.kit.resources.filtering import parse_pk
from admit.kit.resources.listing import Complete, Listing, detail_body, page_body, page_window
from admit.kit.resources.pagination import PAGE_SIZE
from admit.kit.resources.sql_json import json_page_body, variant_of
from admit.kit.stamps.catalog import event_pages
from admit.kit.stamps.page import header_value, page_generated
from admit.models import Event, Order, OrderPosition
from admit.orders.filters import (
    ORDER_FILTERS,
    ORDER_ORDERING,
    POSITION_FILTERS,
    POSITION_ORDERING,
    View,
    view_of,
)
from admit.orders.order_json import ORDER_SHAPE, POSITION_SHAPE
from admit.orders.order_rows import ORDER_ROWS, POSITION_ROWS
from admit.tickets.loading import load_batch
from admit.tickets.values import ticket_values

# Devices that download every order (the reference's "full" sync, 1,000 a page) page deep:
# such pages of one event's orders slice its kept keys, valid while the kept pages' proof holds.
ORDERS = Listing(
    ORDER_ROWS,
    Order.__table__,
    Order.event_id,
    Order.id,
    ORDER_ORDERING,
    narrow=True,
    snapshot=event_pages(Order.last_modified),
)
# The same pages written as JSON by PostgreSQL (``order_json.py``).
ORDERS_JSON = Listing(
    ORDER_SHAPE,  # type: ignore[arg-type]
    Order.__table__,
    Order.event_id,
    Order.id,
    ORDER_ORDERING,
    narrow=True,
    snapshot=ORDERS.snapshot,
)


def _variant(canceled_positions: bool) -> tuple[bool, ...]:
    """Which positions an order statement selects (see ``Rows.variant``)."""
    return ORDER_ROWS.variant({"view": View(canceled_positions=canceled_positions)})


# By the reader's kind (``native``: children inline, see ``kit/resources/render.py``) and whether
# canceled positions are shown (the positions of the other kind are not selected).
_ORDER_DETAIL = {
    (native, shown): select(*ORDER_ROWS.columns_for(native, _variant(shown))).where(
        Order.event_id == bindparam("tenant"), Order.code == bindparam("code")
    )
    for native in (False, True)
    for shown in (False, True)
}

_JOINED = OrderPosition.__table__.join(Order.__table__, Order.id == OrderPosition.order_id)
_NOT_CANCELED = OrderPosition.canceled.is_(False)


def _positions(where: tuple[Any, ...], rows: Any = POSITION_ROWS) -> Listing:
    return Listing(
        rows,
        _JOINED,
        OrderPosition.event_id,
        OrderPosition.id,
        POSITION_ORDERING,
        where=where,
        count_from=OrderPosition.__table__,  # every position has its order
        # The order's event too: pages in the order's datetime walk the orders' index.
        key_where=(Order.event_id == bindparam("tenant"),),
        narrow=True,
    )


# By ``include_canceled_positions``.
POSITIONS = {False: _positions((_NOT_CANCELED,)), True: _positions(())}
# The same, written as JSON by PostgreSQL (``order_json.py``).
POSITIONS_JSON = {
    False: _positions((_NOT_CANCELED,), POSITION_SHAPE),
    True: _positions((), POSITION_SHAPE),
}
_POSITION_DETAIL = {
    (shown, native): listing.static_detail(native)
    for shown, listing in POSITIONS.items()
    for native in (False, True)
}


def _json_view(view: View) -> View:
    """What of the view changes the statement the database writes JSON with."""
    return View(view.canceled_positions, view.canceled_fees)


def _json_params(ctx: OrgContext, event: Event) -> dict[str, Any]:
    """The request's values ``order_json.py`` binds."""
    base = public_base_url(ctx.request)
    return {
        "j_slug": event.slug,
        "j_base": f"{base}/{ctx.organizer_slug}/{event.slug}/",
        "j_api": api_base(ctx, event.slug),
    }


async def _json_answer(
    ctx: OrgContext,
    stmt: Select[Any],
    params: Mapping[str, Any],
    static: bool,
    page: tuple[int, int, int],
    event: Event,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """The request's values (``_json_params``) are bound with the statement's."""
    number, size, _ = page
    params = {**params, **_json_params(ctx, event)}
    body = await json_page_body(
        ctx.request, _reader(ctx), ctx.session, stmt, params, static=static, page=number, size=size
    )
    return Response(body, media_type="application/json", headers=headers)


def _reader(ctx: OrgContext) -> FastReader:
    return ctx.session.info["fast"]  # type: ignore[no-any-return]


def api_base(ctx: OrgContext, event_slug: str) -> str:
    """The event's API URL (``…/api/v1/organizers/o/events/e/``) as clients reach it."""
    base = public_base_url(ctx.request)
    return f"{base}/api/v1/organizers/{ctx.organizer_slug}/events/{event_slug}/"


def order_extra(ctx: OrgContext, slugs: Mapping[int, str], view: View) -> dict[str, Any]:
    base = public_base_url(ctx.request)
    return {
        "view": view,
        "slugs": slugs,
        "bases": {eid: f"{base}/{ctx.organizer_slug}/{slug}/" for eid, slug in slugs.items()},
        "apis": {eid: api_base(ctx, slug) for eid, slug in slugs.items()},
    }


def _pdf_data(ctx: OrgContext, event: Event | None, view: View) -> Complete | None:
    """Adds each shown position's ticket variables (one batch for the whole page)."""
    if not view.pdf_data or event is None:
        return None

    async def complete(rows: list[dict[str, Any]]) -> None:
        positions = [p for row in rows for p in row.get("positions", (row,))]
        batch = await load_batch(ctx.session, event, [p["id"] for p in positions])
        for body in positions:
            found = batch.positions.get(body["id"])
            body["pdf_data"] = ticket_values(batch, found) if found is not None else {}

    return complete


def _shaped(ctx: OrgContext, after: Complete | None) -> Complete | None:
    """``after`` followed by the request's ``include=`` / ``exclude=``
    (``kit/resources/fields.py``), on the rendered rows before they are written."""
    selection = FieldSelection.from_query(ctx.request.query_params)
    if selection is None:
        return after

    async def complete(rows: list[dict[str, Any]]) -> None:
        if after is not None:
            await after(rows)
        selection.apply(rows)

    return complete


def _narrowed(params: Mapping[str, str], names: list[str]) -> bool:
    return any(name in params for name in names)


async def _answer(
    ctx: OrgContext,
    listing: Listing,
    stmt: Select[Any],
    params: Mapping[str, Any],
    static: bool,
    page: tuple[int, int, int],
    extra: Mapping[str, Any],
    after: Complete | None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    number, size, _ = page
    body = await page_body(
        ctx.request,
        _reader(ctx),
        ctx.session,
        listing.rows,
        stmt,
        params,
        static=static,
        page=number,
        size=size,
        extra=extra,
        after=after,
    )
    return Response(body, media_type="application/json", headers=headers)


def _in_sql(ctx: OrgContext, event: Event | None, view: View) -> bool:
    """Whether PostgreSQL writes the page's JSON (``order_json.py``): on the native pool, for
    one event's list, unless the page needs Python after its rows (``pdf_data``,
    ``include=`` / ``exclude=``); those (and ``O/orders/``) render from rows."""
    return (
        _reader(ctx).native
        and event is not None
        and not view.pdf_data
        and FieldSelection.from_query(ctx.request.query_params) is None
    )


def _order_kind(
    ctx: OrgContext, event: Event | None, view: View
) -> tuple[Listing, tuple[Any, ...], bool]:
    """The listing, its statements' variant, and whether the database writes the JSON."""
    if _in_sql(ctx, event, view):
        return ORDERS_JSON, variant_of({"view": _json_view(view)}), True
    return ORDERS, _variant(view.canceled_positions), False


async def order_list(
    ctx: OrgContext, slugs: Mapping[int, str], event: Event | None = None
) -> Response:
    """``E/orders/`` (``event`` given: the only one offering ``pdf_data``) or ``O/orders/``
    (``slugs``: the events whose orders the caller may read). ``X-Page-Generated`` is a
    bound for ``modified_since`` polling taken before the rows are read (``kit/stamps/page``)."""
    generated = header_value(await page_generated(ctx.session))
    params = ctx.request.query_params
    page = page_window(ctx.request)
    _, size, offset = page
    kept = None
    if event is not None and (offset > 0 or size > PAGE_SIZE):
        query = ORDER_FILTERS.apply(select(Order).where(Order.event_id == event.id), params)
        query = ORDER_ORDERING.apply(query, ctx.request)
        view = view_of(params)
        listing, variant, in_sql = _order_kind(ctx, event, view)
        kept = await listing.kept_page(ctx.session, query, page, {"event_id": event.id}, variant)
    if kept is not None:
        (stmt, bind), static = kept, True
    elif event is not None and not _narrowed(params, ORDER_FILTERS.names):
        view = View()
        listing, variant, in_sql = _order_kind(ctx, event, view)
        stmt, static = listing.static_page(
            params.get("ordering"), _reader(ctx).native, variant, size=size, offset=offset
        )
        bind = {"tenant": event.id, "limit": size, "offset": offset}
    else:
        if event is not None:
            tenant = Order.event_id == event.id
        elif _reader(ctx).native:  # one SQL text whatever the number of events
            ids = bindparam("events", list(slugs), type_=ARRAY(Integer))
            tenant = Order.event_id == any_(ids)
        else:
            tenant = Order.event_id.in_(list(slugs))
        query = ORDER_FILTERS.apply(select(Order).where(tenant), params)
        query = ORDER_ORDERING.apply(query, ctx.request)
        view = view_of(params)
        listing, variant, in_sql = _order_kind(ctx, event, view)
        stmt = listing.page_of(query, size, offset, _reader(ctx).native, variant)
        static, bind = False, {}
    headers = {"X-Page-Generated": generated}
    if in_sql:
        assert event is not None
        return await _json_answer(ctx, stmt, bind, static, page, event, headers)
    extra = order_extra(ctx, slugs, view)
    after = _shaped(ctx, _pdf_data(ctx, event, view))
    return await _answer(ctx, listing, stmt, bind, static, page, extra, after, headers)


async def order_detail(ctx: EventContext, code: str) -> Response:
    """A missing order is 404 before bad flags are 400 (as the order is looked up first)."""
    params = ctx.request.query_params
    try:
        view: View | None = view_of(params)
    except FieldErrors:
        view = None
    event = ctx.event
    body = await detail_body(
        _reader(ctx),
        ctx.session,
        ORDER_ROWS,
        _ORDER_DETAIL[_reader(ctx).native, (view or View()).canceled_positions],
        {"tenant": event.id, "code": code},
        static=True,
        extra=order_extra(ctx, {event.id: event.slug}, view or View()),
        after=_shaped(ctx, _pdf_data(ctx, event, view or View())),
    )
    if body is None:
        raise not_found()
    if view is None:
        view_of(params)  # raises the 400
    return Response(body, media_type="application/json")


def _position_extra(ctx: EventContext, view: View) -> dict[str, Any]:
    return {"view": view, "api": api_base(ctx, ctx.event.slug)}


async def position_list(ctx: EventContext, base: Select[Any]) -> Response:
    """``E/orderpositions/``; ``base``: the event's positions joined with their orders."""
    params = ctx.request.query_params
    page = page_window(ctx.request)
    _, size, offset = page
    native = _reader(ctx).native
    if not _narrowed(params, POSITION_FILTERS.names):
        view = View()
        in_sql = _in_sql(ctx, ctx.event, view)
        listing = (POSITIONS_JSON if in_sql else POSITIONS)[False]
        stmt, static = listing.static_page(params.get("ordering"), native, size=size, offset=offset)
        bind: dict[str, Any] = {"tenant": ctx.event.id, "limit": size, "offset": offset}
    else:
        query = POSITION_FILTERS.apply(base, params)
        view = view_of(params)
        if not view.canceled_positions:
            query = query.where(_NOT_CANCELED)
        query = POSITION_ORDERING.apply(query, ctx.request)
        in_sql = _in_sql(ctx, ctx.event, view)
        listing = (POSITIONS_JSON if in_sql else POSITIONS)[view.canceled_positions]
        stmt, static, bind = listing.page_of(query, size, offset, native), False, {}
    if in_sql:
        return await _json_answer(ctx, stmt, bind, static, page, ctx.event)
    extra = _position_extra(ctx, view)
    after = _shaped(ctx, _pdf_data(ctx, ctx.event, view))
    return await _answer(ctx, listing, stmt, bind, static, page, extra, after)


async def position_detail(ctx: EventContext, raw_pk: str) -> Response:
    view = view_of(ctx.request.query_params)
    pk = parse_pk(raw_pk)
    body = await detail_body(
        _reader(ctx),
        ctx.session,
        POSITION_ROWS,
        _POSITION_DETAIL[view.canceled_positions, _reader(ctx).native],
        {"tenant": ctx.event.id, "pk": pk},
        static=True,
        extra=_position_extra(ctx, view),
        after=_shaped(ctx, _pdf_data(ctx, ctx.event, view)),
    )
    if body is None:
        raise not_found()
    return Response(body, media_type="application/json")
