"""The tickets of a check-in list as scanners download and search them.

``E/checkinlists/{id}/positions/`` and ``.../positions/{id}/`` list the tickets on one list;
``O/checkinrpc/search/?list=..&search=..`` searches the tickets of several lists (one per
event). Each ticket is the order position resource with the list's check-ins only,
``require_attention``, and an attendee name that falls back to the parent ticket or the
invoice address. Pages render in a fixed number of queries.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, and_, exists, func, literal, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased
from starlette.responses import Response

from admit.checkin import state
from admit.checkin.access import may_scan
from admit.checkin.expand import expand, requested
from admit.kit.context import EventContext, OrgContext
from admit.kit.crud import parse_pk
from admit.kit.errors import FieldErrors, not_found
from admit.kit.filtering import (
    Filter,
    FilterSet,
    Ordering,
    parse_bool,
    parse_int,
    parse_int_list,
    parse_str,
)
from admit.kit.pagination import paginate
from admit.kit.responses import JSONResponse
from admit.models import (
    Checkin,
    CheckinList,
    Event,
    Item,
    ItemVariation,
    Order,
    OrderPosition,
    Voucher,
)
from admit.orders.serialize import (
    POSITION_LOAD,
    position_checkins,
    position_dict,
    question_identifiers,
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


async def render(
    ctx: OrgContext, rows: Sequence[OrderPosition], lists: Sequence[CheckinList]
) -> list[dict[str, Any]]:
    session = ctx.session
    list_of_event = {c.event_id: c.id for c in lists}
    codes: dict[int, str] = {}
    attention: dict[int, bool] = {}
    invoice_names: dict[int, str | None] = {}
    order_ids = {p.order_id for p in rows}
    if order_ids:
        for oid, code, att, address in await session.execute(
            select(Order.id, Order.code, Order.checkin_attention, Order.invoice_address).where(
                Order.id.in_(order_ids)
            )
        ):
            codes[oid] = code
            attention[oid] = bool(att)
            invoice_names[oid] = (address or {}).get("name") if isinstance(address, dict) else None
    flagged = await _flagged_products(session, rows)
    parents = await _parent_names(session, rows)
    idents = await question_identifiers(session, rows)
    checkins: dict[int, list[dict[str, Any]]] = {}
    for list_id in set(list_of_event.values()):
        ids = [p.id for p in rows if list_of_event.get(p.event_id) == list_id]
        checkins.update(await position_checkins(session, ids, list_id))
    bodies = []
    for p in rows:
        body = position_dict(p, codes[p.order_id], idents, None, checkins)
        if not body["attendee_name"]:
            body["attendee_name"] = parents.get(p.addon_to_id or 0) or invoice_names.get(p.order_id)
        body["require_attention"] = attention[p.order_id] or (p.item_id, p.variation_id) in flagged
        bodies.append(body)
    wanted = requested(ctx, frozenset({"subevent", "item", "variation"}))
    if wanted:
        events = {p.event_id for p in rows}
        for event_id in events:
            event = await session.get(Event, event_id)
            assert event is not None
            chunk = [b for b, p in zip(bodies, rows, strict=True) if p.event_id == event_id]
            await expand(ctx, event, chunk, wanted)
    return bodies


async def _flagged_products(
    session: AsyncSession, rows: Sequence[OrderPosition]
) -> set[tuple[int, int | None]]:
    """(item, variation) pairs whose item or variation asks for attention at check-in."""
    item_ids = {p.item_id for p in rows}
    if not item_ids:
        return set()
    items = {
        i for (i,) in await session.execute(
            select(Item.id).where(Item.id.in_(item_ids), Item.checkin_attention.is_(True))
        )
    }  # fmt: skip
    variations = {
        v for (v,) in await session.execute(
            select(ItemVariation.id).where(
                ItemVariation.item_id.in_(item_ids), ItemVariation.checkin_attention.is_(True)
            )
        )
    }  # fmt: skip
    return {
        (p.item_id, p.variation_id)
        for p in rows
        if p.item_id in items or (p.variation_id is not None and p.variation_id in variations)
    }


async def _parent_names(session: AsyncSession, rows: Sequence[OrderPosition]) -> dict[int, str]:
    ids = {p.addon_to_id for p in rows if p.addon_to_id and not p.attendee_name_cached}
    if not ids:
        return {}
    found = await session.execute(
        select(OrderPosition.id, OrderPosition.attendee_name_cached).where(
            OrderPosition.id.in_(ids)
        )
    )
    return {pid: name for pid, name in found if name}


async def list_positions(ctx: EventContext, clist: CheckinList) -> Response:
    query = positions_query(ctx, [clist])
    body = await paginate(ctx.request, ctx.session, query, list, options=POSITION_LOAD)
    body["results"] = await render(ctx, body["results"], [clist])
    return JSONResponse(body)


async def one_position(ctx: EventContext, clist: CheckinList, raw_pk: str) -> Response:
    query = positions_query(ctx, [clist]).where(OrderPosition.id == parse_pk(raw_pk))
    row = (await ctx.session.execute(query.options(*POSITION_LOAD))).scalars().first()
    if row is None:
        raise not_found()
    return JSONResponse((await render(ctx, [row], [clist]))[0])


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
    query = positions_query(ctx, lists)
    body = await paginate(ctx.request, ctx.session, query, list, options=POSITION_LOAD)
    body["results"] = await render(ctx, body["results"], lists)
    return JSONResponse(body)
