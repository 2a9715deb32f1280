"""When a ticket sold now is valid: the item's ``validity_mode`` decides ``valid_from`` and
``valid_until`` of the position at sale (``null``: the event decides at check-in).

``fixed`` copies the item's two dates. ``dynamic`` starts at the sale (or at the start the
client asked for, when the item lets customers choose, at most ``day_limit`` days ahead) and
runs for the item's months, days, hours and minutes. Whole months and days end at the end of
the last day in the event's time zone (a one-day ticket bought at noon ends that midnight, a
month pass started March 1st ends on the last day of March); hours and minutes are added on
top. Computed once and stored with the ticket, so later item changes leave sold tickets alone.
"""

from __future__ import annotations

import calendar
import datetime as dt
import zoneinfo
from collections.abc import Iterable
from typing import Any

from admit.models import Event, Item

END_OF_DAY = dt.time(23, 59, 59)
Window = tuple[dt.datetime | None, dt.datetime | None]


def add_months(day: dt.date, months: int) -> dt.date:
    """``day`` moved by ``months``; a last-of-month stays last-of-month, a 31st in a short
    month becomes its last day."""
    last = calendar.monthrange(day.year, day.month)[1]
    want = 31 if day.day == last else day.day
    index = day.year * 12 + (day.month - 1) + months
    year, month = divmod(index, 12)
    month += 1
    return dt.date(year, month, min(want, calendar.monthrange(year, month)[1]))


def _local(day: dt.date, tz: zoneinfo.ZoneInfo) -> dt.datetime:
    """End of ``day`` in ``tz``; a wall time that does not exist (DST gap) moves an hour on."""
    moment = dt.datetime.combine(day, END_OF_DAY, tzinfo=tz)
    back = moment.astimezone(dt.UTC).astimezone(tz)
    if back.replace(tzinfo=None) != moment.replace(tzinfo=None):
        moment += dt.timedelta(hours=1)
    return moment


def dynamic_end(item: Item, start: dt.datetime, tz: zoneinfo.ZoneInfo) -> dt.datetime:
    local = start.astimezone(tz)
    months = item.validity_dynamic_duration_months or 0
    days = item.validity_dynamic_duration_days or 0
    end = local
    if months:
        # The day before the start, moved by the months: a pass bought on the 25th ends on
        # the 24th (at midnight) of the last month; extra days are added after that.
        day = add_months(local.date() - dt.timedelta(days=1), months) + dt.timedelta(days=days)
        end = _local(day, tz)
    elif days:
        end = _local(local.date() + dt.timedelta(days=days - 1), tz)
    end += dt.timedelta(
        hours=item.validity_dynamic_duration_hours or 0,
        minutes=item.validity_dynamic_duration_minutes or 0,
    )
    return end.astimezone(dt.UTC)


def compute(
    item: Item, event: Event, requested_start: dt.datetime | None, now: dt.datetime
) -> Window:
    """The window a ticket of ``item`` sold at ``now`` gets; ``(None, None)`` without a mode."""
    if item.validity_mode == "fixed":
        return item.validity_fixed_from, item.validity_fixed_until
    if item.validity_mode != "dynamic":
        return None, None
    start = requested_start if item.validity_dynamic_start_choice and requested_start else now
    limit = item.validity_dynamic_start_choice_day_limit
    if limit is not None:
        start = min(start, now + dt.timedelta(days=limit))
    tz = zoneinfo.ZoneInfo(event.timezone or "UTC")
    return start.astimezone(dt.UTC), dynamic_end(item, start, tz)


def windows(event: Event, drafts: Iterable[Any], now: dt.datetime) -> dict[int, Window]:
    """``positionid`` -> window for order creation. A client that sends ``valid_from`` or
    ``valid_until`` sets the window itself; otherwise the item's mode decides. Items without
    a mode cost nothing here."""
    found: dict[int, Window] = {}
    for draft in drafts:
        data = draft.data
        if data.valid_from is not None or data.valid_until is not None:
            found[draft.positionid] = (data.valid_from, data.valid_until)
            continue
        item = draft.line.item
        if item.validity_mode is None:
            found[draft.positionid] = (None, None)
        else:
            found[draft.positionid] = compute(item, event, data.requested_valid_from, now)
    return found
