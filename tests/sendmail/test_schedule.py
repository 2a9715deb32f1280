"""Send times without a database: offsets in the event's time zone, across clock changes."""

from __future__ import annotations

import datetime as dt

from admit.models import SendMailRule
from admit.sendmail.schedule import LATE_LIMIT, base_window, event_zone, is_due, send_time

UTC = dt.UTC
BERLIN = event_zone("Europe/Berlin")


def rule(**kw) -> SendMailRule:
    kw.setdefault("date_is_absolute", False)
    kw.setdefault("offset_to_event_end", False)
    kw.setdefault("offset_is_after", False)
    return SendMailRule(**kw)


def test_days_before_the_start_at_a_local_time():
    start = dt.datetime(2030, 5, 1, 22, 30, tzinfo=UTC)  # 00:30 on 2 May in Berlin
    r = rule(send_offset_days=1, send_offset_time=dt.time(9))
    assert send_time(r, start, None, BERLIN) == dt.datetime(2030, 5, 1, 7, tzinfo=UTC)
    assert send_time(r, start, None, UTC) == dt.datetime(2030, 4, 30, 9, tzinfo=UTC)


def test_days_after_the_end_and_a_date_without_end():
    start = dt.datetime(2030, 1, 10, 18, tzinfo=UTC)
    end = dt.datetime(2030, 1, 12, 18, tzinfo=UTC)
    r = rule(send_offset_days=2, send_offset_time=dt.time(8), offset_is_after=True)
    r.offset_to_event_end = True
    assert send_time(r, start, end, BERLIN) == dt.datetime(2030, 1, 14, 7, tzinfo=UTC)
    assert send_time(r, start, None, BERLIN) == dt.datetime(2030, 1, 12, 7, tzinfo=UTC)


def test_clock_changes():
    start = dt.datetime(2030, 4, 1, 10, tzinfo=UTC)
    # 31 March 2030, 02:30 does not exist in Berlin: read with the winter offset (03:30 CEST).
    gap = rule(send_offset_days=1, send_offset_time=dt.time(2, 30))
    assert send_time(gap, start, None, BERLIN) == dt.datetime(2030, 3, 31, 1, 30, tzinfo=UTC)
    # Summer and winter time of the same wall-clock hour.
    nine = rule(send_offset_days=0, send_offset_time=dt.time(9))
    summer = send_time(nine, dt.datetime(2030, 7, 1, 12, tzinfo=UTC), None, BERLIN)
    winter = send_time(nine, dt.datetime(2030, 12, 1, 12, tzinfo=UTC), None, BERLIN)
    assert (summer.hour, winter.hour) == (7, 8)


def test_absolute_incomplete_and_due_window():
    when = dt.datetime(2030, 3, 1, tzinfo=UTC)
    absolute = rule(date_is_absolute=True, send_date=when)
    assert send_time(absolute, when + dt.timedelta(days=9), None, BERLIN) == when
    assert send_time(rule(send_offset_days=1), when, None, BERLIN) is None
    assert not is_due(None, when)
    assert not is_due(when, when - dt.timedelta(seconds=1))
    assert is_due(when, when) and is_due(when, when + LATE_LIMIT - dt.timedelta(seconds=1))
    assert not is_due(when, when + LATE_LIMIT)


def test_base_window_holds_every_due_date():
    now = dt.datetime(2030, 6, 1, 12, tzinfo=UTC)
    for after in (False, True):
        r = rule(send_offset_days=3, send_offset_time=dt.time(23, 59), offset_is_after=after)
        lo, hi = base_window(r, now)
        base = lo - dt.timedelta(days=3)
        while base <= hi + dt.timedelta(days=3):
            moment = send_time(r, base, None, event_zone("Pacific/Kiritimati"))
            if is_due(moment, now):
                assert lo <= base <= hi, (after, base)
            base += dt.timedelta(minutes=30)
