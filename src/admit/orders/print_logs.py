"""``POST E/orderpositions/{id}/printlog/``: a client records that it printed a ticket, badge or
certificate of a position; the position's ``print_logs`` lists these records.

A device that reports is recorded as the printing device (its organizer-local ``device_id`` is
shown). Canceled positions can still be logged: the print happened.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Depends
from pydantic import Field
from sqlalchemy import select
from starlette.responses import Response

from admit.db import utcnow
from admit.kit.http.body import read_object
from admit.kit.http.context import EventAccess, EventContext
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import flush_guard, validate_input
from admit.kit.resources.schema import DateTime, WriteModel
from admit.models import Device, PrintLog
from admit.orders.order_fields import print_log_dict
from admit.orders.positions import PATH, WRITE, load_position

router = api_router(tags=["orderpositions"])


class PrintLogIn(WriteModel):
    source: Annotated[str, Field(min_length=1, max_length=255)]
    type: Literal["badge", "ticket", "certificate", "other"]
    datetime: DateTime | None = None  # when it was printed (offline clients report later)
    info: dict[str, Any] = Field(default_factory=dict)


@router.post(PATH + "{id}/printlog/", status_code=201, openapi_extra=json_body(PrintLogIn))
async def create_print_log(
    id: str, ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]
) -> Response:
    """Record a print

    Records that a ticket, badge or certificate of the position was printed (by which source
    and when; offline clients may send an earlier time) and answers the record with 201.
    """
    data: PrintLogIn = validate_input(PrintLogIn, await read_object(ctx.request))  # type: ignore[assignment]
    position = await load_position(ctx, id)
    device_pk = ctx.principal.device_id if ctx.principal.kind == "device" else None
    log = PrintLog(
        position_id=position.id,
        datetime=data.datetime or utcnow(),
        source=data.source,
        type=data.type,
        info=data.info,
        device_id=device_pk,
    )
    ctx.session.add(log)
    position.has_print_logs = True
    await flush_guard(ctx.session.flush())
    number = None
    if device_pk is not None:
        number = await ctx.session.scalar(select(Device.device_id).where(Device.id == device_pk))
    return JSONResponse(print_log_dict(log, number), status_code=201)
