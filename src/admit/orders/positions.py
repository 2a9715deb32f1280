"""Order positions: list with filters, detail, PATCH (attendee data, answers, secret, validity,
blocking), DELETE (cancels the position and its add-ons; never the last one of an order)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from sqlalchemy import delete, func, select
from starlette.responses import Response

from admit.catalog.questions.answers import check_answers, load_questions, to_models
from admit.db import utcnow
from admit.kit.http.body import read_object
from admit.kit.http.context import EventAccess, EventContext
from admit.kit.http.errors import APIError, FieldErrors, not_found
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import flush_guard, parse_update
from admit.kit.resources.filtering import parse_pk
from admit.models import Answer, Order, OrderFee, OrderPosition
from admit.notifications.notify import (
    ORDER_CHANGED_BLOCKED,
    ORDER_CHANGED_CANCEL,
    ORDER_CHANGED_SECRET,
    ORDER_CHANGED_VALIDITY,
    notify_all,
)
from admit.orders import codes, hooks, listed
from admit.orders.downloads_field import api_base, decorate_positions
from admit.orders.filters import POSITION_FILTERS, POSITION_ORDERING, request_view
from admit.orders.order_fields import position_print_logs
from admit.orders.schemas import PositionPatch
from admit.orders.serialize import (
    POSITION_LOAD,
    attendee_name,
    position_checkins,
    position_dict,
    question_identifiers,
)
from admit.quotas import ledger
from admit.seating.render import position_seats
from admit.vouchers import usage as voucher_usage

READ = "event.orders:read"
WRITE = "event.orders:write"
PATH = "/organizers/{organizer}/events/{event}/orderpositions/"


FILTERS = POSITION_FILTERS
ORDERING = POSITION_ORDERING


_ORDER_COLUMNS = (
    Order.id,
    Order.code,
    Order.status,
    Order.require_approval,
    Order.valid_if_pending,
)


async def render(ctx: EventContext, rows: Sequence[OrderPosition]) -> list[dict[str, Any]]:
    """The positions with their ``downloads`` (and ``pdf_data`` when asked for)."""
    session = ctx.session
    order_ids = {p.order_id for p in rows}
    orders: dict[int, Any] = {}
    if order_ids:
        result = await session.execute(select(*_ORDER_COLUMNS).where(Order.id.in_(order_ids)))
        orders = {row.id: row for row in result}
    idents = await question_identifiers(session, rows)
    seats = await position_seats(session, [p.seat_id for p in rows])
    checkins = await position_checkins(session, [p.id for p in rows])
    logs = await position_print_logs(session, rows)
    bodies = [
        position_dict(p, orders[p.order_id].code, idents, seats, checkins, logs) for p in rows
    ]
    pairs = [(p, orders[p.order_id]) for p in rows]
    base = api_base(ctx.request, ctx.organizer_slug, ctx.event.slug)
    await decorate_positions(session, pairs, bodies, request_view(ctx.request), base, ctx.event)
    return bodies


def _base(ctx: EventContext) -> Any:
    return (
        select(OrderPosition)
        .join(Order, Order.id == OrderPosition.order_id)
        # Both sides name the event: pages in the order's datetime walk the orders' index.
        .where(OrderPosition.event_id == ctx.event.id, Order.event_id == ctx.event.id)
    )


def _visible(ctx: EventContext, query: Any) -> Any:
    """Canceled positions only with ``include_canceled_positions=true``: for the list, the
    detail, PATCH and DELETE alike, as in the reference."""
    if request_view(ctx.request).canceled_positions:
        return query
    return query.where(OrderPosition.canceled.is_(False))


async def load_position(ctx: EventContext, raw_pk: str) -> OrderPosition:
    query = (
        _visible(ctx, _base(ctx))
        .where(OrderPosition.id == parse_pk(raw_pk))
        .options(*POSITION_LOAD)
        .execution_options(populate_existing=True)
    )
    position = (await ctx.session.execute(query)).scalars().first()
    if position is None:
        raise not_found()
    return position


async def _render_one(ctx: EventContext, raw_pk: str) -> Response:
    position = await load_position(ctx, raw_pk)
    return JSONResponse((await render(ctx, [position]))[0])


PATCH_FIELDS = tuple(f for f in PositionPatch.model_fields if f != "answers")
MODIFIED = "service.event.order.modified"
# What a position PATCH can change, by the notification type it records (``modified``: the
# attendee's data, which the reference calls order details).
NOTICE_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        MODIFIED,
        (
            "attendee_name_parts",
            "attendee_email",
            "company",
            "street",
            "zipcode",
            "city",
            "country",
            "state",
        ),
    ),
    (ORDER_CHANGED_SECRET, ("secret",)),
    (ORDER_CHANGED_VALIDITY, ("valid_from", "valid_until")),
    (ORDER_CHANGED_BLOCKED, ("blocked",)),
)


async def _notify(ctx: EventContext, order_code: str, actions: list[str]) -> None:
    await notify_all(
        ctx.session,
        actions,
        organizer_id=ctx.organizer_id,
        event_id=ctx.event.id,
        code=order_code,
    )


def _snapshot(position: OrderPosition) -> dict[str, Any]:
    return {f: getattr(position, f) for _, fields in NOTICE_FIELDS for f in fields}


async def _notify_patch(
    ctx: EventContext, position: OrderPosition, before: dict[str, Any], answered: bool
) -> None:
    """The types of what the PATCH really changed (new answers count as a change)."""
    after = _snapshot(position)
    actions = [
        action
        for action, fields in NOTICE_FIELDS
        if any(before[f] != after[f] for f in fields) or (action == MODIFIED and answered)
    ]
    if actions:
        code = await ctx.session.scalar(select(Order.code).where(Order.id == position.order_id))
        await _notify(ctx, str(code), actions)


async def _patch(ctx: EventContext, position: OrderPosition, raw: dict[str, Any]) -> None:
    before = _snapshot(position)
    current = {f: getattr(position, f, None) for f in PATCH_FIELDS}
    current["attendee_name"] = position.attendee_name_cached
    current["attendee_name_parts"] = dict(position.attendee_name_parts or {})
    data, supplied = parse_update(PositionPatch, current, raw, True)
    patch: PositionPatch = data  # type: ignore[assignment]
    if "attendee_name_parts" in supplied:
        position.attendee_name_parts = dict(patch.attendee_name_parts or {})
    elif "attendee_name" in supplied:
        position.attendee_name_parts = (
            {"_legacy": patch.attendee_name} if patch.attendee_name else {}
        )
    position.attendee_name_cached = attendee_name(position.attendee_name_parts)
    simple = ("attendee_email", "company", "street", "zipcode", "city", "country", "state")
    for field in (*simple, "valid_from", "valid_until", "blocked"):
        if field in supplied:
            setattr(position, field, getattr(patch, field))
    if "secret" in supplied and patch.secret != position.secret:
        if await codes.taken_secrets(ctx.session, ctx.event.id, [patch.secret]):
            raise FieldErrors.single(
                "secret", "You cannot assign a position secret that already exists."
            )
        position.secret = patch.secret
    if "answers" in supplied and patch.answers is not None:
        questions = await load_questions(
            ctx.session, ctx.event.id, {a.question for a in patch.answers}
        )
        cleaned, errors = check_answers(patch.answers, position.item_id, questions)
        if errors:
            raise FieldErrors({"answers": errors})
        await ctx.session.execute(delete(Answer).where(Answer.orderposition_id == position.id))
        for answer in to_models(cleaned):
            answer.orderposition_id = position.id
            ctx.session.add(answer)
    if before != _snapshot(position):  # a name on an invoice line may have changed
        order = await ctx.session.get(Order, position.order_id)
        if order is not None:
            hooks.changed(ctx.session, order)
    await _notify_patch(ctx, position, before, "answers" in supplied and patch.answers is not None)


async def _cancel(ctx: EventContext, position: OrderPosition) -> None:
    order = await ctx.session.get(
        Order, position.order_id, with_for_update=True, populate_existing=True
    )
    assert order is not None
    await ledger.track_orders(ctx.session, [order.id])
    if order.status not in ("n", "p"):
        raise APIError(400, "Positions can only be canceled in pending or paid orders.")
    if position.canceled:
        raise not_found()
    siblings = (
        await ctx.session.scalars(
            select(OrderPosition).where(
                OrderPosition.order_id == order.id, OrderPosition.canceled.is_(False)
            )
        )
    ).all()
    going = {position.id} | {p.id for p in siblings if p.addon_to_id == position.id}
    if all(p.id in going for p in siblings):
        raise APIError(
            400,
            "This operation would leave the order empty. Please cancel the order itself instead.",
        )
    for p in siblings:
        if p.id in going:
            p.canceled = True
    fees = await ctx.session.scalar(
        select(func.coalesce(func.sum(OrderFee.value), 0)).where(
            OrderFee.order_id == order.id, OrderFee.canceled.is_(False)
        )
    )
    kept = sum((p.price for p in siblings if p.id not in going), Decimal("0.00"))
    order.total = kept + Decimal(fees or 0)
    order.last_modified = utcnow()
    await voucher_usage.sync(ctx.session, [p.voucher_id for p in siblings if p.id in going])
    hooks.changed(ctx.session, order)
    await _notify(ctx, order.code, [ORDER_CHANGED_CANCEL])


def mount(router: APIRouter) -> None:
    """Adds the position routes to the orders router."""

    @router.get(PATH, tags=["orderpositions"])
    async def list_positions(
        ctx: Annotated[EventContext, Depends(EventAccess(READ))],
    ) -> Response:
        """List order positions

        Lists the event's tickets (order positions) across orders, 50 a page, filtered by
        the query parameters (order, product, attendee, secret, check-in state).
        """
        return await listed.position_list(ctx, _base(ctx))

    @router.get(PATH + "{id}/", tags=["orderpositions"])
    async def retrieve_position(
        id: str, ctx: Annotated[EventContext, Depends(EventAccess(READ))]
    ) -> Response:
        """Get an order position

        Answers one ticket (order position) by its id, with its answers and check-ins.
        """
        return await listed.position_detail(ctx, id)

    @router.patch(PATH + "{id}/", tags=["orderpositions"], openapi_extra=json_body(PositionPatch))
    async def patch_position(
        id: str, ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]
    ) -> Response:
        """Update an order position

        Changes the attendee's details, answers and validity given in the body; the others
        keep their values.
        """
        position = await load_position(ctx, id)
        await _patch(ctx, position, await read_object(ctx.request))
        await flush_guard(ctx.session.flush())
        return await _render_one(ctx, id)

    @router.delete(PATH + "{id}/", tags=["orderpositions"], status_code=204)
    async def delete_position(
        id: str, ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]
    ) -> Response:
        """Cancel an order position

        Cancels one ticket of an order and answers 204. The last remaining position of an
        order cannot be canceled this way (400): cancel the order.
        """
        position = await load_position(ctx, id)
        await _cancel(ctx, position)
        await flush_guard(ctx.session.flush())
        return no_content()
