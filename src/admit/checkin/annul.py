"""``POST O/checkinrpc/annul/``: undo a check-in made in error (a turnstile that did not turn).

The check-in is found by its ``nonce`` among the named lists: none is 404, several are 400.
Only the device that made it may annul it (a check-in made with a team token is annulled with
a team token), only while it is a successful one, and only within the annulment window after
its time (``ADMIT_CHECKIN_ANNUL_WINDOW_MINUTES``, default 15). The check-in then reads
``successful: false, error_reason: "annulled"`` and a ``service.event.checkin.reverted``
notification is recorded. The change is one conditional UPDATE, so of two concurrent annuls
one wins and the other is told the check-in is already annulled.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select, update
from starlette.responses import Response

from admit.checkin.access import may_scan
from admit.checkin.redeem import Scanner, invalid_pk
from admit.checkin.schemas import AnnulIn
from admit.checkin.store import REVERTED_ACTION, checkin_payload
from admit.db import utcnow
from admit.kit.http.body import read_object
from admit.kit.http.context import OrgContext
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.http.responses import JSONResponse
from admit.kit.resources.crud import validate_input
from admit.models import Checkin, CheckinList, Event, Notification, Order, OrderPosition


def bad(detail: str) -> APIError:
    return APIError(400, detail)


async def annul(ctx: OrgContext) -> Response:
    data: AnnulIn = validate_input(AnnulIn, await read_object(ctx.request))  # type: ignore[assignment]
    session = ctx.session
    rows = await session.execute(
        select(CheckinList.id, CheckinList.event_id, Event.slug)
        .join(Event, Event.id == CheckinList.event_id)
        .where(CheckinList.id.in_(data.lists), Event.organizer_id == ctx.organizer_id)
    )
    lists = {pk: (event_id, slug) for pk, event_id, slug in rows if may_scan(ctx, event_id)}
    missing = [pk for pk in data.lists if pk not in lists]
    if missing:
        raise FieldErrors({"lists": [invalid_pk(pk) for pk in missing]})
    if len({event_id for event_id, _ in lists.values()}) != len(lists):
        raise FieldErrors.single("lists", "Each check-in list must belong to a different event.")

    found = list(
        await session.scalars(
            select(Checkin).where(Checkin.nonce == data.nonce, Checkin.list_id.in_(list(lists)))
        )
    )
    if not found:
        raise APIError(404, "No check-in was found for this nonce.")
    if len(found) > 1:
        raise bad("Several check-ins match this nonce.")
    checkin = found[0]
    if checkin.device_id != Scanner.of(ctx).device_id:
        raise bad("Only the device that made the check-in can annul it.")
    if not checkin.successful:
        if checkin.error_reason == "annulled":
            raise bad("This check-in has already been annulled.")
        raise bad("A failed check-in cannot be annulled.")
    when = data.datetime or utcnow()
    minutes = ctx.request.app.state.settings.checkin_annul_window_minutes
    if when > checkin.datetime + dt.timedelta(minutes=minutes):
        raise bad(f"A check-in can only be annulled within {minutes} minutes.")

    changed = await session.execute(
        update(Checkin)
        .where(Checkin.id == checkin.id, Checkin.successful.is_(True))
        .values(
            successful=False,
            error_reason="annulled",
            error_explanation=data.error_explanation,
            seq=None,
        )
        .returning(Checkin.id)
    )
    if changed.scalar() is None:
        raise bad("This check-in has already been annulled.")
    await _notify(ctx, checkin, lists[checkin.list_id][1])
    return JSONResponse({"status": "ok"})


async def _notify(ctx: OrgContext, checkin: Checkin, event_slug: str) -> None:
    if checkin.position_id is None:
        return
    row = (
        await ctx.session.execute(
            select(OrderPosition.id, OrderPosition.positionid, Order.code)
            .join(Order, Order.id == OrderPosition.order_id)
            .where(OrderPosition.id == checkin.position_id)
        )
    ).one()
    payload = checkin_payload(
        ctx.organizer_slug,
        event_slug,
        row.code,
        {"id": row.id, "positionid": row.positionid},
        checkin.list_id,
        checkin.type,
        False,
        action=REVERTED_ACTION,
    )
    payload["checkin_id"] = checkin.id
    ctx.session.add(
        Notification(
            organizer_id=ctx.organizer_id,
            event_id=checkin.event_id,
            action=REVERTED_ACTION,
            payload=payload,
            created=utcnow(),
        )
    )
    await ctx.session.flush()
