"""Availability states for the event and date lists (``?with_availability_for=``).

A state comes from quotas, which belong to sales; the catalog must not depend on sales, so the
quotas package tells this module how to compute them (:func:`provide_availability`) when it is
imported, and the event and date lists ask here. The app imports the quotas package with its
routes, so a list never runs without a source; a source missing all the same is an error, not a
silent null.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Event, SubEvent

# ``states(session, rows, channel)``: best_availability_state by row id (None: not known).
EventStates = Callable[[AsyncSession, list[Event], str], Awaitable[dict[int, int | None]]]
SubEventStates = Callable[[AsyncSession, list[SubEvent], str], Awaitable[dict[int, int | None]]]


@dataclass(frozen=True)
class AvailabilitySource:
    events: EventStates
    subevents: SubEventStates


_sources: list[AvailabilitySource] = []


def provide_availability(source: AvailabilitySource) -> None:
    """Called once by the quotas package; a later call replaces the earlier source."""
    _sources[:] = [source]


def _source() -> AvailabilitySource:
    if not _sources:
        raise RuntimeError("no availability source: admit.quotas.service was never imported")
    return _sources[0]


async def event_states(
    session: AsyncSession, events: Sequence[Event], channel: str
) -> dict[int, int | None]:
    """best_availability_state of each event; for a series the best of its active dates."""
    return await _source().events(session, list(events), channel)


async def subevent_states(
    session: AsyncSession, subevents: Sequence[SubEvent], channel: str
) -> dict[int, int | None]:
    """best_availability_state of each date, from the quotas of that date."""
    return await _source().subevents(session, list(subevents), channel)
