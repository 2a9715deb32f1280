"""When a rule sends: its send time for one event date, and the window in which it is due.

An absolute rule sends at ``send_date``. A relative rule takes the start of the date (or its
end, ``offset_to_event_end``; a date without an end counts its start), reads the calendar day
in the event's time zone, goes ``send_offset_days`` days back (or forward, with
``offset_is_after``) and sends at ``send_offset_time`` on that day, wall-clock time in the
event's time zone (a time that does not exist on a day clocks go forward is read as the same
wall time with the old offset, i.e. an hour later).

A rule is due from its send time until :data:`LATE_LIMIT` after it. Recipients found while it
is due are mailed (also orders placed or paid in that window); afterwards it sends nothing
more, so a rule created or enabled long after its time does not mail everyone.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo

from admit.models import SendMailRule

LATE_LIMIT = dt.timedelta(days=2)
# A relative send time lies within this of (event date ± offset days), whatever the zone.
_SLACK = dt.timedelta(days=2)


def event_zone(name: str | None) -> dt.tzinfo:
    try:
        return zoneinfo.ZoneInfo(name or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def send_time(
    rule: SendMailRule, start: dt.datetime, end: dt.datetime | None, zone: dt.tzinfo
) -> dt.datetime | None:
    """The moment ``rule`` sends for a date from ``start`` to ``end`` (UTC); None when the rule
    lacks what it needs."""
    if rule.date_is_absolute:
        return rule.send_date
    if rule.send_offset_days is None or rule.send_offset_time is None:
        return None
    base = (end or start) if rule.offset_to_event_end else start
    days = rule.send_offset_days if rule.offset_is_after else -rule.send_offset_days
    day = base.astimezone(zone).date() + dt.timedelta(days=days)
    local = dt.datetime.combine(day, rule.send_offset_time.replace(tzinfo=None), tzinfo=zone)
    return local.astimezone(dt.UTC)


def is_due(moment: dt.datetime | None, now: dt.datetime) -> bool:
    return moment is not None and moment <= now < moment + LATE_LIMIT


def base_window(rule: SendMailRule, now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """Event dates (start, or end with ``offset_to_event_end``) outside this range cannot make
    the relative ``rule`` due at ``now``: a cheap pre-filter for series with many dates."""
    offset = dt.timedelta(days=rule.send_offset_days or 0)
    if rule.offset_is_after:
        offset = -offset
    # send time ≈ base - offset, and due means now - LATE_LIMIT < send time <= now
    return now - LATE_LIMIT + offset - _SLACK, now + offset + _SLACK
