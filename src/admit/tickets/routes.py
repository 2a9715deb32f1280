"""Ticket rendering and downloads: ``render_batch`` with its download, and the PDF tickets of an
order or a position (see ``downloads.py``). All need the orders read permission."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Path
from pydantic import BaseModel, ValidationError
from sqlalchemy import select
from starlette.responses import Response

from admit.events.plugins import SALES_CHANNELS
from admit.exports.limits import reserve_slot
from admit.jobs.downloads import download, owner_of
from admit.jobs.queue import enqueue
from admit.kit.http.body import read_object
from admit.kit.http.context import EventAccess, EventContext, public_base_url
from admit.kit.http.errors import FieldErrors, errors_from_pydantic, not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.filtering import PK_MAX, parse_pk
from admit.kit.resources.schema import Name, Pk, WriteModel
from admit.models import Job, Order, OrderPosition, TicketLayout
from admit.tickets.documents import Part
from admit.tickets.downloads import no_ticket, order_refusal, position_refusal, serve_tickets
from admit.tickets.downloads import tickets_of as load_tickets
from admit.tickets.tasks import BATCH_KIND, batch_filename, part_input, safe_filename

router = api_router(tags=["tickets"])

READ = "event.orders:read"
E = "/organizers/{organizer}/events/{event}"
MAX_PARTS = 1000
# Ticket batches one caller may have waiting or running (429 past it, as for exports).
MAX_RUNNING_BATCHES = 2


class PartIn(WriteModel):
    orderposition: Pk
    override_channel: Name | None = None
    override_layout: Pk | None = None


class RenderBatchIn(WriteModel):
    """The request body (for the API description; parts are checked one by one)."""

    parts: list[PartIn]


class RenderBatchOut(BaseModel):
    download: str


def _invalid_pk(value: int) -> str:
    return f'Invalid pk "{value}" - object does not exist.'


async def _existing(ctx: EventContext, query: Any, ids: set[int]) -> set[int]:
    return set((await ctx.session.execute(query)).scalars()) if ids else set()


async def _check_parts(ctx: EventContext, raw: dict[str, Any]) -> list[Part]:
    """The request's parts; 400 ``{"parts": [...]}`` naming each bad one."""
    parts = raw.get("parts")
    if "parts" not in raw:
        raise FieldErrors({"parts": ["This field is required."]})
    if not isinstance(parts, list):
        kind = "null" if parts is None else type(parts).__name__
        raise FieldErrors({"parts": [f'Expected a list of items but got type "{kind}".']})
    if not parts:
        raise FieldErrors({"parts": ["This list may not be empty."]})
    if len(parts) > MAX_PARTS:
        raise FieldErrors({"parts": [f"Ensure this field has no more than {MAX_PARTS} elements."]})
    errors: list[dict[str, Any]] = [{} for _ in parts]
    checked: list[PartIn | None] = []
    for index, item in enumerate(parts):
        try:
            part = PartIn.model_validate(item)
        except ValidationError as exc:
            tree = errors_from_pydantic(exc.errors(include_url=False))
            errors[index] = tree if isinstance(tree, dict) else {"non_field_errors": tree}
            checked.append(None)
            continue
        if not 1 <= part.orderposition <= PK_MAX:
            errors[index]["orderposition"] = [_invalid_pk(part.orderposition)]
        if part.override_layout is not None and not 1 <= part.override_layout <= PK_MAX:
            errors[index]["override_layout"] = [_invalid_pk(part.override_layout)]
        if part.override_channel is not None and part.override_channel not in SALES_CHANNELS:
            errors[index]["override_channel"] = [
                f'"{part.override_channel[:100]}" is not a valid choice.'
            ]
        checked.append(None if errors[index] else part)
    valid = [p for p in checked if p is not None]
    position_ids = {p.orderposition for p in valid}
    layout_ids = {p.override_layout for p in valid if p.override_layout is not None}
    known_positions = await _existing(
        ctx,
        select(OrderPosition.id).where(
            OrderPosition.event_id == ctx.event.id,
            OrderPosition.id.in_(position_ids),
            OrderPosition.canceled.is_(False),
        ),
        position_ids,
    )
    known_layouts = await _existing(
        ctx,
        select(TicketLayout.id).where(
            TicketLayout.event_id == ctx.event.id, TicketLayout.id.in_(layout_ids)
        ),
        layout_ids,
    )
    for index, part in enumerate(checked):
        if part is None:
            continue
        if part.orderposition not in known_positions:
            errors[index]["orderposition"] = [_invalid_pk(part.orderposition)]
        if part.override_layout is not None and part.override_layout not in known_layouts:
            errors[index]["override_layout"] = [_invalid_pk(part.override_layout)]
    if any(errors):
        raise FieldErrors({"parts": errors})
    return [
        Part(p.orderposition, p.override_channel, p.override_layout)
        for p in checked
        if p is not None
    ]


@router.post(
    f"{E}/ticketpdfrenderer/render_batch/",
    status_code=202,
    response_model=RenderBatchOut,
    openapi_extra=json_body(RenderBatchIn),
)
async def render_batch(ctx: Annotated[EventContext, Depends(EventAccess(READ))]) -> Response:
    """Renders one PDF with a page per part, in the request's order, as a background job."""
    raw = await read_object(ctx.request)
    parts = await _check_parts(ctx, raw)
    await reserve_slot(
        ctx.session, owner_of(ctx.principal), BATCH_KIND, MAX_RUNNING_BATCHES, "ticket batches"
    )
    job_id, uuid = await enqueue(
        ctx.session,
        BATCH_KIND,
        {
            "parts": [part_input(p) for p in parts],
            "filename": batch_filename(ctx.organizer_slug, ctx.event.slug),
        },
        organizer_id=ctx.organizer_id,
        event_id=ctx.event.id,
        owner=owner_of(ctx.principal),
    )
    secret = await ctx.session.scalar(select(Job.secret).where(Job.id == job_id))
    base = public_base_url(ctx.request)
    url = (
        f"{base}/api/v1/organizers/{ctx.organizer_slug}/events/{ctx.event.slug}"
        f"/ticketpdfrenderer/download/{uuid}/{secret}/"
    )
    return JSONResponse({"download": url}, status_code=202)


@router.get(
    f"{E}/ticketpdfrenderer/download/{{id1}}/{{id2}}/",
    response_class=Response,
    responses={
        200: {"description": "The PDF."},
        409: {"description": "Still waiting or running: `{status, percentage}`."},
        410: {"description": 'Failed: `{status: "failed", message}`.'},
        404: {"description": "Unknown, expired, or another caller's job."},
    },
)
async def render_batch_download(
    ctx: Annotated[EventContext, Depends(EventAccess(READ))],
    id1: Annotated[str, Path(description="The download URL's first part.")],
    id2: Annotated[str, Path(description="The download URL's second part.")],
) -> Response:
    """Download rendered tickets

    Answers the PDF a ticket batch rendered, once it is ready (409 while it renders).
    """
    store = ctx.request.app.state.background.store
    return await download(
        ctx.session,
        store,
        ctx.principal,
        id1,
        id2,
        organizer_id=ctx.organizer_id,
        event_id=ctx.event.id,
        kinds={BATCH_KIND},
    )


TICKET_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "The PDF with the tickets."},
    409: {"description": "Being rendered: `{status, percentage}`; retry after a second."},
    410: {"description": 'Rendering failed: `{status: "failed", message}`.'},
    404: {"description": "No such order or position, or no tickets for it (see detail)."},
}


@router.get(
    f"{E}/orders/{{code}}/download/pdf/", response_class=Response, responses=TICKET_RESPONSES
)
async def order_tickets(
    code: str, ctx: Annotated[EventContext, Depends(EventAccess(READ))]
) -> Response:
    """All tickets of the order in one PDF, one page per ticket-generating position."""
    if len(code) > 16:
        raise not_found()
    order = (
        await ctx.session.execute(
            select(
                Order.id, Order.code, Order.status, Order.require_approval, Order.valid_if_pending
            ).where(Order.event_id == ctx.event.id, Order.code == code)
        )
    ).first()
    if order is None:
        raise not_found()
    refusal = order_refusal(order)
    if refusal:
        raise no_ticket(refusal)
    ids = list(
        (
            await ctx.session.execute(
                select(OrderPosition.id)
                .where(OrderPosition.order_id == order.id, OrderPosition.canceled.is_(False))
                .order_by(OrderPosition.positionid, OrderPosition.id)
            )
        ).scalars()
    )
    batch = await load_tickets(ctx, ids)
    ids = [
        pid for pid in ids if pid in batch.positions and not position_refusal(batch.positions[pid])
    ]
    if not ids:
        raise no_ticket("This order has no tickets to download.")
    filename = safe_filename(ctx.organizer_slug, ctx.event.slug, order.code)
    return await serve_tickets(ctx, f"order:{order.id}", batch, ids, filename)


@router.get(
    f"{E}/orderpositions/{{id}}/download/pdf/", response_class=Response, responses=TICKET_RESPONSES
)
async def position_ticket(
    id: str, ctx: Annotated[EventContext, Depends(EventAccess(READ))]
) -> Response:
    """The position's ticket as a one-page PDF."""
    pk = parse_pk(id)
    batch = await load_tickets(ctx, [pk])
    data = batch.positions.get(pk)
    if data is None:
        raise not_found()
    refusal = position_refusal(data)
    if refusal:
        raise no_ticket(refusal)
    filename = safe_filename(
        ctx.organizer_slug, ctx.event.slug, data.order.code, str(data.position.positionid)
    )
    return await serve_tickets(ctx, f"position:{pk}", batch, [pk], filename)
