"""The rule and the next run: wall-clock time across DST changes, never before the time of
day, the end of a rule, and rules that would search for centuries."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from dateutil.rrule import _iterinfo
from hypothesis import given, settings
from hypothesis import strategies as st

from admit.scheduled_exports.schedule import ScheduleError, next_run, parse

# The days dateutil examines (the work of an expansion, on any machine): a rule searched to
# the year 9999 examines millions (2.9 million from 2025, whatever its frequency); checking a
# rule (its 400-year cycle probe included) and finding its next run until 2031 from as early
# as 2000 takes at most about 105,000 (measured on every rule below).
DAYS_BUDGET = 250_000


@contextmanager
def days_examined() -> Iterator[dict[str, int]]:
    """Counts the days dateutil's expansion walks through (each period's day set) while
    the block runs: ``counted["days"]``."""
    counted = {"days": 0}
    originals = {name: getattr(_iterinfo, name) for name in ("ydayset", "mdayset", "wdayset",
                                                              "ddayset")}  # fmt: skip

    def counting(original):
        def dayset(self, year, month, day):
            found, start, end = original(self, year, month, day)
            counted["days"] += end - start
            return found, start, end

        return dayset

    for name, original in originals.items():
        setattr(_iterinfo, name, counting(original))
    try:
        yield counted
    finally:
        for name, original in originals.items():
            setattr(_iterinfo, name, original)


BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
UTC = dt.UTC
DAILY = parse("DTSTART:20250101T000000\nRRULE:FREQ=DAILY")

BAD_RULES = [
    ("RRULE:FREQ=DAILY", "exactly two lines"),
    ("DTSTART:20250101T000000", "exactly two lines"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=DAILY\nRRULE:FREQ=WEEKLY", "exactly two lines"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=DAILY\nEXDATE:20250102T000000", "exactly two lines"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=HOURLY", "FREQ=HOURLY"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=MINUTELY;INTERVAL=1440", "FREQ=MINUTELY"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=SECONDLY", "FREQ=SECONDLY"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=FORTNIGHTLY", "FREQ must be"),
    ("DTSTART:20250101T000000\nRRULE:INTERVAL=2", "FREQ must be"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=DAILY;BYHOUR=9,17", "BYHOUR"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=DAILY;BYMINUTE=0,30", "BYMINUTE"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=WEEKLY;BYSECOND=1,2", "BYSECOND"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=MONTHLY;BYMONTHDAY=1", "BYMONTHDAY"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=YEARLY;BYYEARDAY=100", "BYYEARDAY"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=YEARLY;BYEASTER=0", "BYEASTER"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=YEARLY;BYWEEKNO=20", "BYWEEKNO"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=DAILY;INTERVAL=0", "INTERVAL"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=DAILY;COUNT=0", "COUNT"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=DAILY;COUNT=3;UNTIL=20260101", "COUNT and UNTIL"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=DAILY;UNTIL=tomorrow", "UNTIL"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=MONTHLY;BYMONTH=13", "BYMONTH"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=WEEKLY;BYDAY=XX", "BYDAY"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=WEEKLY;BYDAY=1MO", "ordinals"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=MONTHLY;BYDAY=6MO", "between -5 and 5"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=MONTHLY;BYDAY=MO;BYSETPOS=6", "BYSETPOS"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=DAILY;BYSETPOS=2", "BYSETPOS"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=DAILY;INTERVAL=7;BYDAY=TU", "never runs"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=MONTHLY;INTERVAL=2;BYMONTH=2", "never runs"),
    ("DTSTART:20250131T000000\nRRULE:FREQ=YEARLY;BYMONTH=2,4", "never runs"),
    # Fifth Mondays in February come in leap years only, which odd years never reach.
    ("DTSTART:20250101T000000\nRRULE:FREQ=YEARLY;INTERVAL=2;BYMONTH=2;BYDAY=5MO", "never runs"),
    ("DTSTART:20250201T000000\nRRULE:FREQ=MONTHLY;INTERVAL=48;BYDAY=5MO", "never runs"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=YEARLY;BYMONTH=2,4;BYDAY=5MO;BYSETPOS=2", "never runs"),
    (
        "DTSTART:20250101T000000\nRRULE:FREQ=YEARLY;BYMONTH=1,6,12;BYDAY=MO,TU,WE,TH,FR,SA,SU;"
        "BYSETPOS=100",
        "never runs",
    ),  # 92 days
    ("DTSTART:19990101T000000\nRRULE:FREQ=DAILY", "2000 to 2999"),
    ("DTSTART:20251301T000000\nRRULE:FREQ=DAILY", "not a valid date"),
    ("DTSTART:tomorrow\nRRULE:FREQ=DAILY", "DTSTART must be"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=DAILY;FOO=1", "FOO"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=DAILY;FREQ=WEEKLY", "more than once"),
    ("DTSTART:20250101T000000\nRRULE:FREQ=WEEKLY;WKST=XY", "WKST"),
    ("DTSTART:20250101T000000Z\nRRULE:FREQ=DAILY;UNTIL=20260101T000000", "not a valid"),
]


@pytest.mark.parametrize(("rule", "message"), BAD_RULES)
def test_bad_rules_are_refused_with_the_reason(rule: str, message: str):
    with pytest.raises(ScheduleError) as refused:
        parse(rule)
    assert message in str(refused.value)


def runs(schedule, at: dt.time, zone, start: dt.datetime, count: int) -> list[dt.datetime]:
    found, moment = [], start
    for _ in range(count):
        moment = next_run(schedule, at, zone, moment)
        assert moment is not None
        found.append(moment)
    return found


def test_berlin_spring_forward_keeps_nine_oclock():
    # Clocks go from 02:00 CET to 03:00 CEST on Sunday 30 March 2025.
    found = runs(DAILY, dt.time(9), BERLIN, dt.datetime(2025, 3, 27, 12, tzinfo=UTC), 5)
    assert [m.astimezone(BERLIN).time() for m in found] == [dt.time(9)] * 5
    assert [m.hour for m in found] == [8, 8, 7, 7, 7]  # UTC: CET then CEST
    assert [m.date() for m in found] == [dt.date(2025, 3, d) for d in (28, 29, 30, 31)] + [
        dt.date(2025, 4, 1)
    ]


def test_berlin_fall_back_keeps_nine_oclock():
    found = runs(DAILY, dt.time(9), BERLIN, dt.datetime(2025, 10, 24, 12, tzinfo=UTC), 4)
    assert [m.astimezone(BERLIN).time() for m in found] == [dt.time(9)] * 4
    # Clocks go back at 03:00 CEST on Sunday 26 October: that day's 09:00 is CET already.
    assert [m.date().day for m in found] == [25, 26, 27, 28]
    assert [m.hour for m in found] == [7, 8, 8, 8]


def test_a_time_that_does_not_exist_runs_an_hour_later():
    found = runs(DAILY, dt.time(2, 30), BERLIN, dt.datetime(2025, 3, 29, 12, tzinfo=UTC), 2)
    # 30 March 02:30 does not exist in Berlin: it runs at 03:30 CEST (01:30 UTC).
    assert found[0] == dt.datetime(2025, 3, 30, 1, 30, tzinfo=UTC)
    assert found[0].astimezone(BERLIN).time() == dt.time(3, 30)
    assert found[1] == dt.datetime(2025, 3, 31, 0, 30, tzinfo=UTC)


def test_a_time_that_happens_twice_runs_at_the_first():
    # New York falls back on 2 November 2025: 01:30 happens at EDT and again at EST.
    found = runs(DAILY, dt.time(1, 30), NEW_YORK, dt.datetime(2025, 11, 1, 12, tzinfo=UTC), 2)
    assert found[0] == dt.datetime(2025, 11, 2, 5, 30, tzinfo=UTC)  # 01:30 EDT
    assert found[1] == dt.datetime(2025, 11, 3, 6, 30, tzinfo=UTC)  # 01:30 EST


def test_new_york_spring_forward_week():
    found = runs(DAILY, dt.time(9), NEW_YORK, dt.datetime(2025, 3, 6, 20, tzinfo=UTC), 7)
    assert [m.astimezone(NEW_YORK).time() for m in found] == [dt.time(9)] * 7
    assert [m.hour for m in found] == [14, 14, 13, 13, 13, 13, 13]


def test_never_before_the_time_of_day():
    day = dt.datetime(2025, 6, 2, tzinfo=BERLIN)
    # Asked before 09:00 local time: today at 09:00; at or after it: tomorrow.
    before = next_run(DAILY, dt.time(9), BERLIN, (day + dt.timedelta(hours=8, minutes=59)))
    assert before == dt.datetime(2025, 6, 2, 9, tzinfo=BERLIN)
    at = next_run(DAILY, dt.time(9), BERLIN, day + dt.timedelta(hours=9))
    assert at == dt.datetime(2025, 6, 3, 9, tzinfo=BERLIN)
    # The UTC date differs from the local one just after midnight in Berlin.
    late = next_run(DAILY, dt.time(0, 30), BERLIN, dt.datetime(2025, 6, 2, 22, 10, tzinfo=UTC))
    assert late == dt.datetime(2025, 6, 3, 0, 30, tzinfo=BERLIN)


def test_weekly_and_monthly_days():
    weekly = parse("DTSTART:20250106T000000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TH")
    found = runs(weekly, dt.time(7), BERLIN, dt.datetime(2025, 3, 25, tzinfo=UTC), 4)
    assert [m.astimezone(BERLIN).strftime("%a %d %H:%M") for m in found] == [
        "Thu 27 07:00",
        "Mon 31 07:00",
        "Thu 03 07:00",
        "Mon 07 07:00",
    ]
    last_friday = parse("DTSTART:20250101T000000\nRRULE:FREQ=MONTHLY;BYDAY=-1FR")
    found = runs(last_friday, dt.time(18), NEW_YORK, dt.datetime(2025, 1, 1, tzinfo=UTC), 3)
    assert [m.astimezone(NEW_YORK).date() for m in found] == [
        dt.date(2025, 1, 31),
        dt.date(2025, 2, 28),
        dt.date(2025, 3, 28),
    ]
    fortnightly = parse("DTSTART:20250106T000000\nRRULE:FREQ=WEEKLY;INTERVAL=2")
    found = runs(fortnightly, dt.time(9), UTC, dt.datetime(2025, 1, 7, tzinfo=UTC), 2)
    assert [m.date() for m in found] == [dt.date(2025, 1, 20), dt.date(2025, 2, 3)]


def test_only_the_date_of_dtstart_counts():
    for line in (
        "DTSTART:20250106T230000Z",
        "DTSTART;TZID=America/New_York:20250106T235959",
        "DTSTART;VALUE=DATE:20250106",
    ):
        schedule = parse(f"{line}\nRRULE:FREQ=WEEKLY")
        first = next_run(schedule, dt.time(9), UTC, dt.datetime(2025, 1, 1, tzinfo=UTC))
        assert first == dt.datetime(2025, 1, 6, 9, tzinfo=UTC), line


def test_the_end_of_a_rule():
    counted = parse("DTSTART:20250101T000000\nRRULE:FREQ=DAILY;COUNT=3")
    start = dt.datetime(2024, 12, 31, tzinfo=UTC)
    assert len(runs(counted, dt.time(9), UTC, start, 3)) == 3
    assert next_run(counted, dt.time(9), UTC, dt.datetime(2025, 1, 3, 9, tzinfo=UTC)) is None
    until = parse("DTSTART:20250101T000000\nRRULE:FREQ=DAILY;UNTIL=20250103")
    assert next_run(until, dt.time(9), UTC, dt.datetime(2025, 1, 2, 10, tzinfo=UTC)) == (
        dt.datetime(2025, 1, 3, 9, tzinfo=UTC)
    )
    assert next_run(until, dt.time(9), UTC, dt.datetime(2025, 1, 3, 9, tzinfo=UTC)) is None
    late = parse("DTSTART:29991231T000000\nRRULE:FREQ=YEARLY;INTERVAL=1000;COUNT=8")
    far = dt.datetime(9999, 1, 1, tzinfo=UTC)
    # 23:00 on 31 December 9999 at UTC-5 would be in the year 10000.
    assert next_run(late, dt.time(23), NEW_YORK, far) is None
    assert next_run(late, dt.time(9), NEW_YORK, far) == dt.datetime(9999, 12, 31, 14, tzinfo=UTC)


# Rules that dateutil would expand until the year 9999 when nothing matches:
# each is either refused or answered quickly.
SLOW_CANDIDATES = [
    "FREQ=DAILY;INTERVAL=7;BYDAY=TU",
    "FREQ=DAILY;INTERVAL=14;BYDAY=WE",
    "FREQ=DAILY;BYSETPOS=2",
    "FREQ=WEEKLY;BYDAY=MO;BYSETPOS=2",
    "FREQ=MONTHLY;BYDAY=6MO",
    "FREQ=MONTHLY;BYMONTH=2;BYDAY=MO;BYSETPOS=5",
    "FREQ=MONTHLY;INTERVAL=48;BYMONTH=2;BYDAY=5MO",
    "FREQ=MONTHLY;INTERVAL=12;BYMONTH=3",
    "FREQ=MONTHLY;BYMONTH=2;BYSETPOS=1",
    "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYDAY=5SU",
    "FREQ=YEARLY;BYMONTH=2;BYDAY=MO;BYSETPOS=-5",
    "FREQ=DAILY;INTERVAL=28;BYMONTH=2;BYDAY=SA",
    "FREQ=WEEKLY;INTERVAL=52;BYMONTH=7",
    "FREQ=DAILY;INTERVAL=365;BYMONTH=6;BYDAY=FR",
    "FREQ=YEARLY;BYDAY=53MO",
]


@pytest.mark.parametrize("rule", SLOW_CANDIDATES)
def test_no_rule_searches_for_centuries(rule: str):
    with days_examined() as counted:
        try:
            schedule = parse(f"DTSTART:20250131T000000\nRRULE:{rule}")
        except ScheduleError:
            pass
        else:
            next_run(schedule, dt.time(9), BERLIN, dt.datetime(2025, 6, 1, tzinfo=UTC))
    assert counted["days"] < DAYS_BUDGET, counted


_PARTS = st.sampled_from(
    [
        "FREQ=DAILY",
        "FREQ=WEEKLY",
        "FREQ=MONTHLY",
        "FREQ=YEARLY",
        "FREQ=HOURLY",
        "INTERVAL=2",
        "INTERVAL=7",
        "INTERVAL=12",
        "INTERVAL=0",
        "COUNT=5",
        "UNTIL=20300101",
        "BYDAY=MO",
        "BYDAY=MO,WE,FR",
        "BYDAY=2TU",
        "BYDAY=-1SU",
        "BYDAY=5SA",
        "BYMONTH=2",
        "BYMONTH=1,6,12",
        "BYSETPOS=1",
        "BYSETPOS=-1",
        "BYSETPOS=3",
        "BYSETPOS=20",
        "BYHOUR=9",
        "BYHOUR=9,10",
        "WKST=SU",
        "BYMONTHDAY=31",
        "FOO=BAR",
        "",
        "=",
        ";",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(_PARTS, max_size=5),
    start=st.dates(dt.date(2000, 1, 1), dt.date(2040, 12, 31)),
)
def test_any_rule_is_refused_cleanly_or_answers_quickly(parts: list[str], start: dt.date):
    text = f"DTSTART:{start:%Y%m%d}T000000\nRRULE:{';'.join(parts)}"
    with days_examined() as counted:
        try:
            schedule = parse(text)
        except ScheduleError as exc:
            assert str(exc)
            return
        found = next_run(schedule, dt.time(9), BERLIN, dt.datetime(2031, 1, 1, tzinfo=UTC))
    assert found is None or found > dt.datetime(2031, 1, 1, tzinfo=UTC)
    assert counted["days"] < DAYS_BUDGET, (text, counted)
