"""``GET /api/v1/device/eventselection``: which event (or date of a series) and check-in list
a scanner should work on right now.

A scanner left at a venue for a festival, or for a series of shows, should move on to the next
date by itself. It sends what it has selected (``current_event``, ``current_subevent``,
``current_checkinlist``) and gets 304 when that is still right, 200 with the new selection
when it should switch, or 404 when there is nothing it could select. Only live events the
device may access count (series dates: active ones), and for a device at a gate only those
with a check-in list meant for that gate.

The choice, as the reference makes it: a date whose admission (or start) has passed and whose
end has not wins; a running current selection stays; otherwise between the last date that
started and the next one to start: the one that is today (in the event's time zone), and when
both are today, the earlier until half-way through the gap between its end and the next one's
admission.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fastapi import Depends, Query
from sqlalchemy import Select, exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.db import utcnow
from admit.devices.access import DeviceAccess, DeviceContext
from admit.kit.http.errors import FieldErrors, not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.models import CheckinList, Event, SubEvent, checkin_list_gates

router = api_router()

NOTHING_TO_SELECT = "No event is available for this device right now."


@dataclass(frozen=True)
class Date:
    """An event without dates, or one date of a series, with the times the choice uses."""

    event: Event
    subevent: SubEvent | None

    @property
    def _source(self) -> Event | SubEvent:
        return self.subevent if self.subevent is not None else self.event

    @property
    def date_from(self) -> dt.datetime:
        return self._source.date_from

    @property
    def date_to(self) -> dt.datetime | None:
        return self._source.date_to

    @property
    def first(self) -> dt.datetime:
        """Admission, or the start when there is no admission time."""
        return self._source.date_admission or self._source.date_from

    @property
    def last(self) -> dt.datetime:
        return self._source.date_to or self._source.date_from

    @property
    def key(self) -> tuple[int, int | None]:
        return self.event.id, self.subevent.id if self.subevent is not None else None


@dataclass(frozen=True)
class Selection:
    """The device and the scope of events it may see."""

    organizer_id: int
    event_ids: frozenset[int] | None  # None: every event of the organizer
    gate_id: int | None


def _plain_name(name: Any) -> str:
    """The event name as one string (English, else the first translation)."""
    if isinstance(name, dict):
        return str(name.get("en") or next((v for v in name.values() if v), ""))
    return str(name or "")


_EVENT_FIRST = func.coalesce(Event.date_admission, Event.date_from)
_SUBEVENT_FIRST = func.coalesce(SubEvent.date_admission, SubEvent.date_from)


def _event_query(scope: Selection) -> Select[Any]:
    query = select(Event).where(
        Event.organizer_id == scope.organizer_id,
        Event.live.is_(True),
        Event.has_subevents.is_(False),
    )
    if scope.event_ids is not None:
        query = query.where(Event.id.in_(scope.event_ids))
    if scope.gate_id is not None:
        query = query.where(
            exists()
            .where(CheckinList.event_id == Event.id)
            .where(checkin_list_gates.c.list_id == CheckinList.id)
            .where(checkin_list_gates.c.gate_id == scope.gate_id)
        )
    return query


def _subevent_query(scope: Selection) -> Select[Any]:
    query = (
        select(SubEvent, Event)
        .join(Event, Event.id == SubEvent.event_id)
        .where(
            Event.organizer_id == scope.organizer_id,
            Event.live.is_(True),
            SubEvent.active.is_(True),
        )
    )
    if scope.event_ids is not None:
        query = query.where(Event.id.in_(scope.event_ids))
    if scope.gate_id is not None:
        query = query.where(
            exists()
            .where(CheckinList.event_id == SubEvent.event_id)
            .where(or_(CheckinList.subevent_id.is_(None), CheckinList.subevent_id == SubEvent.id))
            .where(checkin_list_gates.c.list_id == CheckinList.id)
            .where(checkin_list_gates.c.gate_id == scope.gate_id)
        )
    return query


async def _nearest(
    session: AsyncSession, scope: Selection, now: dt.datetime, *, started: bool
) -> Date | None:
    """The date that started last (``started``) or starts next; on a tie a series date wins."""
    if started:
        ev_where, sub_where = _EVENT_FIRST <= now, _SUBEVENT_FIRST <= now
        ev_order = (_EVENT_FIRST.desc(), Event.id.desc())
        sub_order = (_SUBEVENT_FIRST.desc(), SubEvent.id.desc())
    else:
        ev_where, sub_where = _EVENT_FIRST > now, _SUBEVENT_FIRST > now
        ev_order = (_EVENT_FIRST.asc(), Event.id.asc())
        sub_order = (_SUBEVENT_FIRST.asc(), SubEvent.id.asc())
    event = (
        await session.execute(_event_query(scope).where(ev_where).order_by(*ev_order).limit(1))
    ).scalar_one_or_none()
    row = (
        await session.execute(_subevent_query(scope).where(sub_where).order_by(*sub_order).limit(1))
    ).first()
    a = Date(event, None) if event is not None else None
    b = Date(row[1], row[0]) if row is not None else None
    if a is None or b is None:
        return a or b
    if started:
        return a if a.first > b.first else b
    return a if a.first < b.first else b


def _int_param(name: str, raw: str | None) -> int | None:
    if raw is None or raw == "":
        return None
    if not (raw.isascii() and raw.isdigit()) or int(raw) > 2**31 - 1:
        raise FieldErrors.single(name, "A valid integer is required.")
    return int(raw)


async def _current(
    session: AsyncSession, organizer_id: int, slug: str | None, subevent_id: int | None
) -> tuple[Event | None, Date | None]:
    """The device's present selection: its event, and the date (None when unknown, or a
    series without a known date)."""
    if not slug:
        return None, None
    event = (
        await session.execute(
            select(Event).where(Event.organizer_id == organizer_id, Event.slug == slug)
        )
    ).scalar_one_or_none()
    if event is None:
        return None, None
    subevent = None
    if subevent_id is not None:
        subevent = (
            await session.execute(
                select(SubEvent).where(SubEvent.event_id == event.id, SubEvent.id == subevent_id)
            )
        ).scalar_one_or_none()
    if event.has_subevents and subevent is None:
        return None, None
    return event, Date(event, subevent)


async def _checkin_list(
    session: AsyncSession,
    scope: Selection,
    date: Date,
    current_event: Event | None,
    current_list_id: int | None,
) -> int | None:
    """The list to scan on at ``date``: one named like the current list (or the current list
    itself) when there is one, else the first by name."""
    query = select(CheckinList.id, CheckinList.name).where(CheckinList.event_id == date.event.id)
    if date.subevent is not None:
        query = query.where(
            or_(CheckinList.subevent_id.is_(None), CheckinList.subevent_id == date.subevent.id)
        )
    if scope.gate_id is not None:
        query = query.where(
            CheckinList.id.in_(
                select(checkin_list_gates.c.list_id).where(
                    checkin_list_gates.c.gate_id == scope.gate_id
                )
            )
        )
    candidates = (await session.execute(query.order_by(CheckinList.name, CheckinList.id))).all()
    if current_event is not None and current_list_id is not None:
        current_name = await session.scalar(
            select(CheckinList.name).where(
                CheckinList.event_id == current_event.id, CheckinList.id == current_list_id
            )
        )
        if current_name is not None:
            for list_id, name in candidates:
                if name == current_name or list_id == current_list_id:
                    return list_id
    return candidates[0][0] if candidates else None


async def select_event(
    session: AsyncSession,
    scope: Selection,
    now: dt.datetime,
    *,
    current_event: str | None,
    current_subevent: int | None,
    current_list: int | None,
) -> dict[str, Any] | None:
    """The selection the device should switch to, or None when it should keep its own
    (raises 404 when there is nothing to select)."""
    event, current = await _current(session, scope.organizer_id, current_event, current_subevent)

    async def suggest(date: Date) -> dict[str, Any] | None:
        answer = {
            "event": {"slug": date.event.slug, "name": _plain_name(date.event.name)},
            "subevent": date.subevent.id if date.subevent is not None else None,
            "checkinlist": await _checkin_list(session, scope, date, event, current_list),
        }
        unchanged = {
            "event": {
                "slug": event.slug if event is not None else None,
                "name": _plain_name(event.name) if event is not None else None,
            },
            "subevent": current_subevent,
            "checkinlist": current_list,
        }
        return None if answer == unchanged else answer

    started = await _nearest(session, scope, now, started=True)
    current_key = current.key if current is not None else None
    # Another date running now wins (admission times can make back-to-back dates overlap).
    if started is not None and started.key != current_key and started.date_to is not None:
        if now < started.date_to:
            return await suggest(started)
    if current is not None and current.date_to is not None and current.first <= now:
        if now < current.date_to:
            return None  # the current selection is running: keep it

    upcoming = await _nearest(session, scope, now, started=False)
    if upcoming is None and started is None:
        raise not_found(NOTHING_TO_SELECT)
    if upcoming is None or started is None:
        return await suggest(upcoming or started)  # type: ignore[arg-type]

    tz = _zone((event or upcoming.event).timezone)
    today = now.astimezone(tz).date()
    started_today = started.date_from.astimezone(tz).date() == today
    upcoming_today = upcoming.date_from.astimezone(tz).date() == today
    if started_today and not upcoming_today:
        return await suggest(started)
    if upcoming_today and not started_today:
        return await suggest(upcoming)
    # Both (or neither) today: switch half-way between the one's end and the next's admission.
    switch_at = started.last + (upcoming.first - started.last) / 2
    return await suggest(upcoming if now > switch_at else started)


def _zone(name: str) -> dt.tzinfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return dt.UTC


DeviceCtx = Annotated[DeviceContext, Depends(DeviceAccess())]


@router.get("/device/eventselection", tags=["device"])
async def event_selection(
    ctx: DeviceCtx,
    current_event: Annotated[str | None, Query()] = None,
    current_subevent: Annotated[str | None, Query()] = None,
    current_checkinlist: Annotated[str | None, Query()] = None,
) -> Response:
    """Which event, series date and check-in list the scanner should select now: 200 with
    ``{event: {slug, name}, subevent, checkinlist}``, 304 to keep the current selection, 404
    when no live event is available to the device."""
    subevent_id = _int_param("current_subevent", current_subevent)
    list_id = _int_param("current_checkinlist", current_checkinlist)
    grants = ctx.principal.grants_for(ctx.device.organizer_slug)
    event_ids: frozenset[int] | None = None
    if not any(g.all_events for g in grants):
        event_ids = frozenset().union(*(g.event_ids for g in grants))
    scope = Selection(ctx.device.organizer_id, event_ids, ctx.device.gate_id)
    answer = await select_event(
        ctx.session,
        scope,
        utcnow(),
        current_event=current_event,
        current_subevent=subevent_id,
        current_list=list_id,
    )
    if answer is None:
        return Response(status_code=304)
    return JSONResponse(answer)
