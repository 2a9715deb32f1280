"""An event series in the shop: the dates a buyer may pick (upcoming, active, public), whether a
date sells now, and its availability in one word.

A date's products and prices come from the same catalog listing as a single event's
(``catalog.products`` with the date: its price overrides, its disabled products, its own sale
windows and quotas), so this module only finds dates and says whether one is open.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.kit.resources.filtering import INT_MAX, parse_int
from admit.kit.resources.i18n import localized
from admit.models import Event, Quota, SubEvent
from admit.quotas import availability

MAX_DATES = 200  # the list a buyer picks from (later dates appear as earlier ones pass)
PICK = "Choose a date first."
UNKNOWN = "This date is not on sale."


def _upcoming(event: Event, now: dt.datetime) -> Any:
    return (
        select(SubEvent)
        .where(
            SubEvent.event_id == event.id,
            SubEvent.active.is_(True),
            SubEvent.is_public.is_(True),
            or_(
                SubEvent.date_to >= now,
                (SubEvent.date_to.is_(None)) & (SubEvent.date_from >= now),
            ),
        )
        .options(selectinload(SubEvent.item_overrides), selectinload(SubEvent.variation_overrides))
    )


def parse_id(raw: str | None) -> int | None:
    """A date's id as a buyer sent it (a form field, a query parameter); None for anything
    that cannot be one (not ASCII digits, zero, past what an INTEGER column holds)."""
    try:
        value = parse_int(raw or "")
    except ValueError:
        return None
    return value if 0 < value <= INT_MAX else None


async def load(
    session: AsyncSession, event: Event, subevent_id: int | None, now: dt.datetime
) -> SubEvent | None:
    """The date ``subevent_id`` of the series when a buyer may see it (active, public, not
    over), its price overrides loaded; None otherwise."""
    if subevent_id is None or not 0 < subevent_id <= INT_MAX or not event.has_subevents:
        return None  # (a larger id must not reach PostgreSQL: the page's path takes any digits)
    return (await session.scalars(_upcoming(event, now).where(SubEvent.id == subevent_id))).first()


async def load_many(session: AsyncSession, event: Event, ids: set[int]) -> dict[int, SubEvent]:
    """Dates by id (whatever their state: a cart's or order's positions name them)."""
    if not ids:
        return {}
    rows = await session.scalars(
        select(SubEvent)
        .where(SubEvent.event_id == event.id, SubEvent.id.in_(ids))
        .options(selectinload(SubEvent.item_overrides), selectinload(SubEvent.variation_overrides))
    )
    return {s.id: s for s in rows}


def refusal(subevent: SubEvent, now: dt.datetime) -> str | None:
    """Why this date sells nothing right now (None: it sells)."""
    if not subevent.active:
        return UNKNOWN
    if subevent.presale_start is not None and now < subevent.presale_start:
        return "The sale for this date has not started yet."
    if subevent.presale_end is not None and now > subevent.presale_end:
        return "The sale for this date has ended."
    end = subevent.date_to or subevent.date_from
    if end < now:
        return "This date is over."
    return None


def label(subevent: SubEvent, locale: str = "en") -> str:
    """A date as a buyer reads it: its name (when it has one) and when it starts."""
    when = subevent.date_from.strftime("%a %d %b %Y, %H:%M")
    name = localized(subevent.name, locale)
    return f"{name} – {when}" if name else when


@dataclass
class Date:
    subevent: SubEvent
    label: str
    location: str
    state: str  # available | sold_out | not_yet | ended

    def as_dict(self) -> dict[str, Any]:
        s = self.subevent
        return {
            "id": s.id,
            "name": localized(s.name, "en"),
            "label": self.label,
            "date_from": s.date_from.isoformat(),
            "date_to": s.date_to.isoformat() if s.date_to else None,
            "location": self.location,
            "availability": self.state,
        }


async def upcoming(session: AsyncSession, event: Event, now: dt.datetime) -> list[Date]:
    """The dates a buyer may pick, soonest first, each with its availability: available when
    one of its quotas still has room (the products' own list says which)."""
    rows = list(
        await session.scalars(
            _upcoming(event, now).order_by(SubEvent.date_from, SubEvent.id).limit(MAX_DATES)
        )
    )
    quotas: dict[int, list[Quota]] = {}
    if rows:
        for quota in await session.scalars(
            select(Quota).where(
                Quota.event_id == event.id, Quota.subevent_id.in_([s.id for s in rows])
            )
        ):
            quotas.setdefault(quota.subevent_id or 0, []).append(quota)
    every = [q for qs in quotas.values() for q in qs]
    counted = await availability.count(session, every, now, informational=False) if every else {}
    found = []
    for s in rows:
        state = refusal(s, now)
        if state is None:
            open_ = any(counted[q.id].available for q in quotas.get(s.id, []))
            word = "available" if open_ else "sold_out"
        else:
            word = "not_yet" if s.presale_start and now < s.presale_start else "ended"
        found.append(Date(s, label(s), localized(s.location or {}, "en"), word))
    return found
