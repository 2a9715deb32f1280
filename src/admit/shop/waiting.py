"""Joining the waiting list from the shop when a product (of a series: on one date) is sold
out: the entry the API's
waiting list resource would write (``waitinglist/service.py`` checks it: the product takes
entries, it is really not available, the address does not wait for it already), recorded with
the same notification. Handing out vouchers to the waiting stays the waiting list's job."""

from __future__ import annotations

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.events.settings import value
from admit.kit.http.errors import APIError, FieldErrors, validation_error
from admit.models import Event, WaitingListEntry
from admit.shop import dates
from admit.waitinglist import service
from admit.waitinglist.schemas import WaitingListEntryIn

DISABLED = "This event has no waiting list."
NO_DATE = "Choose one of the event's dates."


def enabled(event: Event) -> bool:
    return bool(value(event, "waiting_list_enabled"))


async def join(
    session: AsyncSession,
    event: Event,
    item: int,
    variation: int | None,
    email: str,
    name: str | None = None,
    locale: str = "en",
    subevent: int | None = None,
) -> WaitingListEntry:
    """Adds the address to the product's waiting list (of one date of a series: ``subevent``,
    a date the buyer may see); FieldErrors (400) naming why not."""
    if not enabled(event):
        raise FieldErrors.general(DISABLED)
    if event.has_subevents and await dates.load(session, event, subevent, utcnow()) is None:
        raise FieldErrors.single("subevent", NO_DATE)
    try:
        data = WaitingListEntryIn(
            item=item,
            variation=variation,
            email=email,
            name=name or None,
            locale=locale,
            subevent=subevent,
        )
    except ValidationError as exc:
        raise validation_error(exc) from None
    try:
        await service.validate_entry(session, event, data, None)
    except APIError as exc:  # the product takes no entries
        raise FieldErrors.general(exc.detail) from None
    entry = WaitingListEntry(event_id=event.id, created=utcnow())
    service.apply(entry, data)
    session.add(entry)
    await session.flush()
    await service.notify_entry(session, entry, service.ADDED, event.organizer_id)
    return entry
