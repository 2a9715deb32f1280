"""The tickets of a check-in list as scanners download and search them.

``E/checkinlists/{id}/positions/`` and ``.../positions/{id}/`` list the tickets on one list;
``O/checkinrpc/search/?list=..&search=..`` searches the tickets of several lists (one per
event). Each ticket is the order position resource with the list's check-ins only,
``require_attention``, and an attendee name that falls back to the parent ticket or the
invoice address. Pages render in a fixed number of queries.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Integer, Select, and_, bindparam, exists, func, literal, or_, select
from sqlalchemy.orm import aliased
from starlette.responses import Response

from admit.checkin import state
from admit.checkin.access import may_scan
from admit.checkin.expand import expand, requested
from admit.checkin.position_json import CHECKIN_POSITION_SHAPE
from admit.checkin.position_rows import CHECKIN_POSITION_ROWS
from admit.kit.http.context import EventContext, OrgContext
from admit.kit.http.errors import FieldErrors, not_found
from admit.kit.resources.filtering import (
    Filter,
    FilterSet,
    Ordering,
    parse_bool,
    parse_datetime,
    parse_int,
    parse_int_list,
    parse_pk,
    parse_str,
)
from admit.kit.resources.listing import Complete, Listing, detail_body, page_window
from admit.kit.resources.pagination import PAGE_SIZE
from admit.kit.resources.sql_json import json_page_body, respond_json
from admit.kit.stamps.catalog import event_pages
from admit.kit.stamps.page import header_value, page_generated
from admit.models import (
    Checkin,
    CheckinList,
    Event,
    Order,
    OrderPosition,
    Voucher,
)

_Parent = aliased(OrderPosition)
NEVER = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _search(value: str) -> Any:
    like = f"%{value.lower()}%"
    return or_(
        func.lower(OrderPosition.attendee_name_cached).like(like),
        func.lower(OrderPosition.attendee_email).like(like),
        OrderPosition.secret.like(f"{value}%"),
        func.lower(Order.code).like(like),
        func.lower(Order.email).like(like),
    )


def _status_list(raw: str) -> list[str]:
    return [s.strip() for s in raw.split(",") if s.strip()]


def _checked_in(list_ids: Sequence[int]) -> Any:
    clause = exists().where(
        Checkin.position_id == OrderPosition.id,
        Checkin.list_id.in_(list_ids),
        Checkin.successful.is_(True),
        Checkin.type == "entry",
    )
    return lambda value: clause if value else ~clause


def _attendee(value: str) -> Any:
    parent_named = exists().where(
        _Parent.id == OrderPosition.addon_to_id, _Parent.attendee_name_cached == value
    )
    return or_(OrderPosition.attendee_name_cached == value, parent_named)


COMMON = (
    Filter.eq("order", Order.code),
    Filter.where("search", parse_str, _search),
    Filter.eq("item", OrderPosition.item_id, parse_int),
    Filter.where("item__in", parse_int_list, lambda v: OrderPosition.item_id.in_(v)),
    Filter.eq("variation", OrderPosition.variation_id, parse_int),
    Filter.where("variation__in", parse_int_list, lambda v: OrderPosition.variation_id.in_(v)),
    Filter.where("attendee_name", parse_str, _attendee),
    Filter.eq("secret", OrderPosition.secret),
    Filter.eq("order__status", Order.status),
    Filter.where("order__status__in", _status_list, lambda v: Order.status.in_(v)),
    Filter.eq("subevent", OrderPosition.subevent_id, parse_int),
    Filter.where("subevent__in", parse_int_list, lambda v: OrderPosition.subevent_id.in_(v)),
    Filter.eq("addon_to", OrderPosition.addon_to_id, parse_int),
    Filter.where("addon_to__in", parse_int_list, lambda v: OrderPosition.addon_to_id.in_(v)),
    Filter.eq("voucher", OrderPosition.voucher_id, parse_int),
    Filter.where(
        "voucher__code",
        parse_str,
        lambda v: OrderPosition.voucher_id.in_(select(Voucher.id).where(Voucher.code == v)),
    ),
    Filter("ignore_status", parse_bool, lambda query, _value: query),
    # Beyond the reference: scanners that download whole lists poll for what changed since
    # their last sync (the answer's ``X-Page-Generated``). An order's stamp moves for every
    # change to it, its positions and their successful check-ins (``models/order_stamp.py``).
    Filter.where("modified_since", parse_datetime, lambda v: Order.last_modified >= v),
)


def filters(list_ids: Sequence[int]) -> FilterSet:
    """``has_checkin`` means a successful entry on these lists."""
    return FilterSet((*COMMON, Filter.where("has_checkin", parse_bool, _checked_in(list_ids))))


def ordering(list_ids: Sequence[int]) -> Ordering:
    last = (
        select(func.max(Checkin.datetime))
        .where(
            Checkin.position_id == OrderPosition.id,
            Checkin.list_id.in_(list_ids),
            Checkin.successful.is_(True),
        )
        .correlate(OrderPosition)
        .scalar_subquery()
    )
    # Never checked in sorts as the oldest on both databases (NULLs order differently).
    last = func.coalesce(last, literal(NEVER, Checkin.datetime.type))
    return Ordering(
        fields={
            "order__code": Order.code,
            "order__datetime": Order.datetime,
            "positionid": OrderPosition.positionid,
            "attendee_name": OrderPosition.attendee_name_cached,
            "last_checked_in": last,
            "order__email": Order.email,
        },
        default=("attendee_name", "positionid"),
        pk=OrderPosition.id,
    )


def _ignore_status(ctx: OrgContext) -> bool:
    raw = ctx.request.query_params.get("ignore_status")
    try:
        return parse_bool(raw) if raw else False
    except ValueError as exc:
        raise FieldErrors.single("ignore_status", str(exc)) from None


def positions_query(ctx: OrgContext, lists: Sequence[CheckinList]) -> Select[Any]:
    """The tickets on any of the lists (one list per event), filtered and ordered."""
    ignore = _ignore_status(ctx)
    clauses = [and_(state.on_list(c), state.order_valid(c, ignore_status=ignore)) for c in lists]
    query = (
        select(OrderPosition).join(Order, Order.id == OrderPosition.order_id).where(or_(*clauses))
    )
    query = filters([c.id for c in lists]).apply(query, ctx.request.query_params)
    return ordering([c.id for c in lists]).apply(query, ctx.request)


def _extra(lists: Sequence[CheckinList], after: Complete | None) -> dict[str, Any]:
    # ``expand`` needs each ticket's event (``keep_event``: left in the row for it).
    return {"lists": {c.event_id: c.id for c in lists}, "keep_event": after is not None}


def _expand(ctx: OrgContext) -> tuple[Complete | None, FieldErrors | None]:
    """``expand=subevent|item|variation``: the objects instead of their ids (per event).
    A bad value is answered 400 only once the rows are found (a missing page or ticket is
    404 first): returned, not raised."""
    try:
        wanted = requested(ctx, frozenset({"subevent", "item", "variation"}))
    except FieldErrors as exc:
        return None, exc
    if not wanted:
        return None, None

    async def complete(bodies: list[dict[str, Any]]) -> None:
        by_event: dict[int, list[dict[str, Any]]] = {}
        for body in bodies:
            by_event.setdefault(body.pop("__event_id"), []).append(body)
        for event_id, chunk in by_event.items():
            event = await ctx.session.get(Event, event_id)
            assert event is not None
            await expand(ctx, event, chunk, wanted)

    return complete, None


# Pages find their tickets' keys first (``narrow``): the lists' orderings sort on the key
# and the sort columns alone, and the rendered columns are read for the page only.
LISTING = Listing(
    CHECKIN_POSITION_ROWS,
    OrderPosition.__table__.join(Order.__table__, Order.id == OrderPosition.order_id),
    None,
    OrderPosition.id,
    ordering([]),  # only its presence counts: every query brings its own order
    narrow=True,
    # A list's tickets show their orders, answers, check-ins and the catalog: the kept pages'
    # proof (``orders/kept_pages.py``) holds for the kept keys of a whole list too.
    snapshot=event_pages(Order.last_modified),
)


# The same pages written as JSON by PostgreSQL (``position_json.py``).
LISTING_JSON = Listing(
    CHECKIN_POSITION_SHAPE,  # type: ignore[arg-type]
    LISTING.table,
    None,
    OrderPosition.id,
    LISTING.ordering,
    narrow=True,
    snapshot=LISTING.snapshot,
)


def _in_sql(
    ctx: OrgContext, lists: Sequence[CheckinList], after: Any, invalid: FieldErrors | None
) -> bool:
    """Whether PostgreSQL writes the page's JSON: one list's tickets on the native pool,
    without ``expand=`` (Python's, after the rows) or a bad one (answered after the rows)."""
    native = ctx.session.info["fast"].native
    return bool(native) and len(lists) == 1 and after is None and invalid is None


async def _page(ctx: OrgContext, lists: Sequence[CheckinList], query: Select[Any]) -> Response:
    """``query``: ``positions_query`` of the lists (named by the callers, so the OpenAPI
    document finds the filters it applies)."""
    after, invalid = _expand(ctx)
    extra = _extra(lists, after)
    # One list (one event): deep and large pages slice its kept keys (``kit/resources/
    # keylists.py``); several lists' search pages are read with OFFSET.
    snapshot = {"event_id": lists[0].event_id} if len(lists) == 1 else None
    if _in_sql(ctx, lists, after, invalid):
        return await respond_json(
            LISTING_JSON,
            ctx.request,
            ctx.session,
            query,
            {"j_list": lists[0].id},
            snapshot_params=snapshot,
        )
    response = await LISTING.respond(
        ctx.request, ctx.session, query=query, extra=extra, after=after, snapshot_params=snapshot
    )
    if invalid is not None:
        raise invalid
    return response


class _BoundList:
    """What ``positions_query`` reads of a list, its id, event and date as the statement's
    parameters (``list_id``, ``event_id``, ``subevent_id``): one statement serves every list
    of its kind."""

    def __init__(self, clist: CheckinList) -> None:
        self.id = bindparam("list_id", type_=Integer)
        self.event_id = bindparam("event_id", type_=Integer)
        dated = clist.subevent_id is not None
        self.subevent_id = bindparam("subevent_id", type_=Integer) if dated else None
        self.all_products = clist.all_products
        self.include_pending = clist.include_pending


# The JSON statements of first pages that nothing narrows, by the list's kind and page size.
_FIRST_PAGES: dict[tuple[bool, bool, bool, int], Select[Any]] = {}


def _first_page(
    ctx: EventContext, clist: CheckinList, build: Callable[..., Select[Any]]
) -> tuple[Select[Any], dict[str, Any]] | None:
    """The statement kept for a first page of ``clist`` that the request narrows by nothing
    (what scanners poll), and its values; None for any other request. Built per request,
    the list's query and page statement cost the worker about 2 ms of the 5 a page costs.
    ``build``: ``positions_query`` (named by the caller, as ``_page``'s query is, so that
    the OpenAPI document finds the filters it applies)."""
    if any(name not in ("page", "page_size") for name in ctx.request.query_params):
        return None
    if not _in_sql(ctx, [clist], None, None):
        return None
    _, size, offset = page_window(ctx.request)
    if offset or size > PAGE_SIZE:
        return None
    key = (clist.all_products, clist.include_pending, clist.subevent_id is not None, size)
    stmt = _FIRST_PAGES.get(key)
    if stmt is None:
        query = build(ctx, [_BoundList(clist)])
        stmt = _FIRST_PAGES[key] = LISTING_JSON.page_of(query, size, 0, True)
    values = {
        "list_id": clist.id,
        "event_id": clist.event_id,
        "subevent_id": clist.subevent_id,
        "j_list": clist.id,
    }
    return stmt, values


async def list_positions(ctx: EventContext, clist: CheckinList) -> Response:
    """``X-Page-Generated``: the bound to pass back as ``modified_since``, taken before the
    page is read (``kit/stamps/page.py``)."""
    generated = header_value(await page_generated(ctx.session))
    first = _first_page(ctx, clist, positions_query)
    if first is None:
        response = await _page(ctx, [clist], positions_query(ctx, [clist]))
    else:
        stmt, values = first
        page, size, _ = page_window(ctx.request)
        reader = ctx.session.info["fast"]
        body = await json_page_body(
            ctx.request, reader, ctx.session, stmt, values, static=True, page=page, size=size
        )
        response = Response(body, media_type="application/json")
    response.headers["X-Page-Generated"] = generated
    return response


async def one_position(ctx: EventContext, clist: CheckinList, raw_pk: str) -> Response:
    query = positions_query(ctx, [clist])
    pk = parse_pk(raw_pk)
    after, invalid = _expand(ctx)
    body = await detail_body(
        ctx.session.info["fast"],
        ctx.session,
        CHECKIN_POSITION_ROWS,
        LISTING.detail_of(query, pk, ctx.session.info["fast"].native),
        {},
        static=False,
        extra=_extra([clist], after),
        after=after,
    )
    if body is None:
        raise not_found()
    if invalid is not None:
        raise invalid
    return Response(body, media_type="application/json")


async def search(ctx: OrgContext) -> Response:
    """``O/checkinrpc/search/``: tickets of the lists named by ``list`` (repeatable)."""
    raw = ctx.request.query_params.getlist("list")
    try:
        ids = list(dict.fromkeys(parse_int(r) for r in raw))
    except ValueError as exc:
        raise FieldErrors.single("list", str(exc)) from None
    if not ids:
        raise FieldErrors.single("list", "This field is required.")
    found = list(
        await ctx.session.scalars(
            select(CheckinList)
            .join(Event, Event.id == CheckinList.event_id)
            .where(CheckinList.id.in_(ids), Event.organizer_id == ctx.organizer_id)
        )
    )
    lists = [c for c in found if may_scan(ctx, c.event_id)]
    if len(lists) != len(ids):
        raise not_found()
    if len({c.event_id for c in lists}) != len(lists):
        raise FieldErrors.single("list", "Each check-in list must belong to a different event.")
    return await _page(ctx, lists, positions_query(ctx, lists))
