"""Seats of an event (``E/seats/``) or of one date of a series (``E/subevents/{id}/seats/``):
list, detail, PATCH of ``blocked``, ``bulk_block`` and ``bulk_unblock``.

The variant must match the event: the plain one for a single event, the date one for a series;
the other answers 404, as does a date of another event. Reading needs event access, writing
``event.settings.general:write``; ``expand`` needs the permission to read what it expands.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Depends, Path
from sqlalchemy import Select, select, update
from starlette.responses import Response

from admit.db import utcnow
from admit.kit.http.body import read_object
from admit.kit.http.context import EventAccess, EventContext
from admit.kit.http.errors import FieldErrors, not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import Page, flush_guard, parse_update, validate_input
from admit.kit.resources.filtering import Filter, FilterSet, parse_bool, parse_pk
from admit.kit.resources.listing import Listing, detail_body
from admit.kit.resources.render import Rows
from admit.models import Seat, SubEvent
from admit.seating import openapi as _documented  # noqa: F401  (registers its parameters)
from admit.seating.claim import lock_seats
from admit.seating.expand import Expansion, expansion
from admit.seating.holders import available
from admit.seating.schemas import BulkSeatsIn, SeatOut, SeatPatch

WRITE = "event.settings.general:write"
E = "/organizers/{organizer}/events/{event}"
PREFIXES = ((f"{E}/seats", False), (f"{E}/subevents/{{subevent_id}}/seats", True))
BULK_CHUNK = 5000

router = api_router()

FILTERS = FilterSet(
    (
        *(
            Filter.eq(name, getattr(Seat, name))
            for name in ("zone_name", "row_name", "row_label", "seat_number", "seat_label")
        ),
        Filter.eq("seat_guid", Seat.seat_guid),
        Filter.boolean("blocked", Seat.blocked),
    )
)


def _availability_filter(event_id: int) -> Filter:
    def apply(query: Select[Any], wanted: bool) -> Select[Any]:
        clause = available(utcnow(), event_id)
        return query.where(clause if wanted else ~clause)

    return Filter("is_available", parse_bool, apply)


async def _scope(ctx: EventContext, subevent_id: str | None) -> Select[Any]:
    """Seats of the event or date named by the URL; 404 for the wrong variant."""
    if subevent_id is None:
        if ctx.event.has_subevents:
            raise not_found()
        return select(Seat).where(Seat.event_id == ctx.event.id, Seat.subevent_id.is_(None))
    if not ctx.event.has_subevents:
        raise not_found()
    pk = parse_pk(subevent_id)
    found = await ctx.session.scalar(
        select(SubEvent.id).where(SubEvent.id == pk, SubEvent.event_id == ctx.event.id)
    )
    if found is None:
        raise not_found()
    return select(Seat).where(Seat.event_id == ctx.event.id, Seat.subevent_id == pk)


async def _seat(ctx: EventContext, subevent_id: str | None, raw_pk: str) -> Seat:
    query = await _scope(ctx, subevent_id)
    seat = await ctx.session.scalar(
        query.where(Seat.id == parse_pk(raw_pk)).execution_options(populate_existing=True)
    )
    if seat is None:
        raise not_found()
    return seat


# GETs render from the rows (``kit/resources/render.py``); what holds a seat is added per page.
SEAT_ROWS = Rows(SeatOut, Seat, computed=("orderposition", "cartposition", "voucher"))
SEATS = Listing(SEAT_ROWS, Seat.__table__, Seat.event_id, Seat.id, None)


async def list_seats(ctx: EventContext, subevent_id: str | None, _: dict[str, str]) -> Response:
    """List seats

    Lists the seats of the event (or of one of its dates), 50 a page, filtered by the query
    parameters (zone, row, blocked, availability); `expand` embeds the order position or
    voucher holding a seat.
    """
    query = await _scope(ctx, subevent_id)
    expand = expansion(ctx)
    filters = FilterSet((*FILTERS.filters, _availability_filter(ctx.event.id)))
    query = filters.apply(query, ctx.request.query_params)
    query = query.order_by(Seat.sorting_rank)  # then by id (``SEATS``)
    return await SEATS.respond(ctx.request, ctx.session, query=query, after=expand.complete)


async def retrieve_seat(ctx: EventContext, subevent_id: str | None, params: dict) -> Response:
    """Get a seat

    Answers one seat of the event (or date) by its id, with whether it is blocked and what
    holds it.
    """
    expand: Expansion = expansion(ctx)
    query = await _scope(ctx, subevent_id)
    body = await detail_body(
        ctx.session.info["fast"],
        ctx.session,
        SEAT_ROWS,
        SEATS.detail_of(query, parse_pk(params["id"]), ctx.session.info["fast"].native),
        {},
        static=False,
        extra={},
        after=expand.complete,
    )
    if body is None:
        raise not_found()
    return Response(body, media_type="application/json")


async def update_seat(ctx: EventContext, subevent_id: str | None, params: dict) -> Response:
    """Update a seat

    Blocks or unblocks one seat (`blocked` in the body). A blocked seat cannot be sold. Only
    `blocked` is writable and it is not required, so PUT is the same update as PATCH: an omitted
    `blocked` keeps its value; the other fields are read-only and ignored.
    """
    seat = await _seat(ctx, subevent_id, params["id"])
    raw = await read_object(ctx.request)
    data, _supplied = parse_update(SeatPatch, {}, raw, partial=ctx.request.method == "PATCH")
    assert isinstance(data, SeatPatch)
    if data.blocked is not None and data.blocked != seat.blocked:
        seat.blocked = data.blocked
        await flush_guard(ctx.session.flush())
    return JSONResponse((await expansion(ctx).render([seat]))[0])


def _bulk(blocked: bool) -> Callable[[EventContext, str | None, dict], Awaitable[Response]]:
    async def handler(ctx: EventContext, subevent_id: str | None, _: dict) -> Response:
        query = await _scope(ctx, subevent_id)
        data = validate_input(BulkSeatsIn, await read_object(ctx.request))
        assert isinstance(data, BulkSeatsIn)
        ids = await _resolve(ctx, query, data)
        # Locked in id order first: an UPDATE alone locks in scan order and could deadlock
        # against a sale holding some of these seats.
        await lock_seats(ctx.session, ids)
        for start in range(0, len(ids), BULK_CHUNK):
            await ctx.session.execute(
                update(Seat)
                .where(Seat.id.in_(ids[start : start + BULK_CHUNK]))
                .values(blocked=blocked)
                .execution_options(synchronize_session=False)
            )
        return JSONResponse({})

    verb = "Block" if blocked else "Unblock"
    handler.__doc__ = (
        f"{verb} seats\n\n{verb}s the seats named by `ids` or by `seat_guids` at once (400 "
        "naming those that do not exist). POST as documented, PATCH as the reference's "
        "examples send it."
    )
    return handler


async def _resolve(ctx: EventContext, query: Select[Any], data: BulkSeatsIn) -> list[int]:
    """The ids of the named seats of this event / date; 400 naming those that do not exist."""
    field = "ids" if data.ids is not None else "seat_guids"
    wanted: list[Any] = list(dict.fromkeys(data.ids if data.ids is not None else data.seat_guids))
    column = Seat.id if field == "ids" else Seat.seat_guid
    found: dict[Any, int] = {}
    for start in range(0, len(wanted), BULK_CHUNK):
        chunk = wanted[start : start + BULK_CHUNK]
        rows = await ctx.session.execute(
            query.with_only_columns(column, Seat.id).where(column.in_(chunk))
        )
        found.update({key: seat_id for key, seat_id in rows})
    missing = [w for w in wanted if w not in found]
    if missing:
        shown = ", ".join(str(m) for m in missing[:20])
        more = f" and {len(missing) - 20} more" if len(missing) > 20 else ""
        raise FieldErrors.single(field, f"These seats do not exist: {shown}{more}.")
    return sorted(set(found.values()))


def _endpoint(handler: Any, access: EventAccess, with_subevent: bool, extra: list[str]) -> Any:
    """An endpoint declaring the access check and the path parameters of its variant."""

    async def endpoint(**kwargs: Any) -> Response:
        ctx = kwargs.pop("ctx")
        return await handler(ctx, kwargs.pop("subevent_id", None), kwargs)

    endpoint.__doc__ = handler.__doc__  # the operation's summary and description

    names = (["subevent_id"] if with_subevent else []) + extra
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=Depends(access)),
            *(
                inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=str, default=Path())
                for n in names
            ),
        ]
    )
    return endpoint


def _mount(target: APIRouter, prefix: str, with_subevent: bool) -> None:
    suffix = "-subevent" if with_subevent else ""
    read, write = EventAccess(), EventAccess(WRITE)
    tags: list[Any] = ["seats"]
    for action, blocked in (("bulk_block", True), ("bulk_unblock", False)):
        # POST as documented; PATCH as the reference's examples send it. Mounted before the
        # detail routes, which would otherwise take "bulk_block" for a seat id.
        for method in ("POST", "PATCH"):
            target.add_api_route(
                f"{prefix}/{action}/",
                _endpoint(_bulk(blocked), write, with_subevent, []),
                methods=[method],
                name=f"seats-{action}{suffix}-{method.lower()}",
                tags=tags,
                openapi_extra=json_body(BulkSeatsIn),
            )

    target.add_api_route(
        f"{prefix}/",
        _endpoint(list_seats, read, with_subevent, []),
        methods=["GET"],
        name=f"seats-list{suffix}",
        tags=tags,
        response_model=Page[SeatOut],  # type: ignore[name-defined]
    )
    target.add_api_route(
        f"{prefix}/{{id}}/",
        _endpoint(retrieve_seat, read, with_subevent, ["id"]),
        methods=["GET"],
        name=f"seats-detail{suffix}",
        tags=tags,
        response_model=SeatOut,
    )
    for method in ("PATCH", "PUT"):
        target.add_api_route(
            f"{prefix}/{{id}}/",
            _endpoint(update_seat, write, with_subevent, ["id"]),
            methods=[method],
            name=f"seats-{method.lower()}{suffix}",
            summary="Replace a seat" if method == "PUT" else "Update a seat",
            tags=tags,
            response_model=SeatOut,
            openapi_extra=json_body(SeatPatch),
        )


for _prefix, _with_subevent in PREFIXES:
    _mount(router, _prefix, _with_subevent)
