"""``POST E/checkinlists/{id}/failed_checkins/``: scans a device refused offline, uploaded
later, as the reference has it.

An offline scanner that refuses a ticket (a revoked or blocked secret, a bad signature, a
product not on the list) cannot tell the server at the time; once online it uploads each such
scan here, so the check-in history (``E/checkins/?successful=false``) holds them like the
failed scans of ``checkinrpc/redeem/``. Body: ``error_reason`` (a redeem reason), ``raw_barcode``
(what was scanned), optional ``error_explanation``, ``raw_source_type`` (default ``barcode``),
``datetime`` (when it was scanned; default now), ``type`` (``entry``/``exit``), ``position`` (the
ticket, when the device knew it) and ``raw_item`` / ``raw_variation`` / ``raw_subevent`` (what
a signed secret claimed). Answers 201 with the check-in as ``E/checkins/`` shows it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Depends
from pydantic import Field
from sqlalchemy import select
from starlette.responses import Response

from admit.checkin.history import checkin_to_read
from admit.checkin.lists import checkin_lists
from admit.checkin.redeem import Scanner
from admit.checkin.schemas import CheckinOut
from admit.db import utcnow
from admit.kit.http.body import read_object
from admit.kit.http.context import AnyEventPermission, EventContext
from admit.kit.http.errors import FieldErrors
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import flush_guard, validate_input
from admit.kit.resources.filtering import PK_MAX
from admit.kit.resources.schema import DateTime, LongText, WriteModel
from admit.models import Checkin, Item, ItemVariation, OrderPosition, SubEvent

SCAN = ("event.orders:checkin", "event.orders:write")
Reason = Literal[
    "canceled", "invalid", "unpaid", "product", "rules", "revoked", "incomplete",
    "already_redeemed", "ambiguous", "error", "blocked", "unapproved", "invalid_time",
]  # fmt: skip
Id = Annotated[int, Field(ge=1, le=PK_MAX)]

router = api_router(tags=["checkin"])


class FailedCheckinIn(WriteModel):
    error_reason: Reason
    error_explanation: LongText | None = None
    raw_barcode: Annotated[str, Field(min_length=1, max_length=10000)]
    raw_source_type: Annotated[str, Field(max_length=32)] = "barcode"
    datetime: DateTime | None = None
    type: Literal["entry", "exit"] = "entry"
    position: Id | None = None
    raw_item: Id | None = None
    raw_variation: Id | None = None
    raw_subevent: Id | None = None


async def _check_refs(ctx: EventContext, data: FailedCheckinIn) -> None:
    """400 naming each id that is not the event's."""
    event_id = ctx.event.id
    checks: list[tuple[str, int | None, Any]] = [
        ("position", data.position, select(OrderPosition.id).where(
            OrderPosition.id == data.position, OrderPosition.event_id == event_id)),
        ("raw_item", data.raw_item, select(Item.id).where(
            Item.id == data.raw_item, Item.event_id == event_id)),
        ("raw_variation", data.raw_variation, select(ItemVariation.id).join(Item).where(
            ItemVariation.id == data.raw_variation, Item.event_id == event_id)),
        ("raw_subevent", data.raw_subevent, select(SubEvent.id).where(
            SubEvent.id == data.raw_subevent, SubEvent.event_id == event_id)),
    ]  # fmt: skip
    errors: dict[str, list[str]] = {}
    for field, value, query in checks:
        if value is not None and await ctx.session.scalar(query) is None:
            errors[field] = [f'Invalid pk "{value}" - object does not exist.']
    if errors:
        raise FieldErrors(errors)


@router.post(
    "/organizers/{organizer}/events/{event}/checkinlists/{id}/failed_checkins/",
    name="checkinlists-failed-checkins",
    status_code=201,
    response_model=CheckinOut,
    openapi_extra=json_body(FailedCheckinIn),
)
async def failed_checkin(
    id: str, ctx: Annotated[EventContext, Depends(AnyEventPermission(*SCAN))]
) -> Response:
    """Upload a failed offline scan

    Records a scan a device refused while offline (for instance a revoked or blocked signed
    secret) as an unsuccessful check-in of the list, with the reason the device gave; it then
    shows in the check-in history. Needs permission to scan for the event.
    """
    clist = await checkin_lists.get_bare(ctx, id)
    data = validate_input(FailedCheckinIn, await read_object(ctx.request))
    assert isinstance(data, FailedCheckinIn)
    await _check_refs(ctx, data)
    scanner = Scanner.of(ctx)
    now = utcnow()
    row = Checkin(
        event_id=ctx.event.id,
        list_id=clist.id,
        position_id=data.position,
        type=data.type,
        datetime=data.datetime or now,
        created=now,
        successful=False,
        error_reason=data.error_reason,
        error_explanation=data.error_explanation,
        device_id=scanner.device_id,
        device_number=scanner.device_number,
        gate_id=scanner.gate_id,
        raw_barcode=data.raw_barcode,
        raw_source_type=data.raw_source_type,
        raw_item_id=data.raw_item,
        raw_variation_id=data.raw_variation,
        raw_subevent_id=data.raw_subevent,
    )
    ctx.session.add(row)
    await flush_guard(ctx.session.flush())
    return JSONResponse(checkin_to_read(row), status_code=201)
