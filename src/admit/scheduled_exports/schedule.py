"""When a scheduled export runs: its recurrence rule, checked, and the next run it gives.

``schedule_rrule`` is RFC 5545 text of exactly two lines, one ``DTSTART`` and one ``RRULE``
(python-dateutil parses and expands it). The rule picks *days*; the time of day is always
``schedule_rrule_time``, wall-clock time in the export's zone (the event's, or ``timezone``
at organizer level). Only the date of DTSTART counts, as written (a time, ``Z`` or ``TZID``
on it change nothing), and likewise the date and time of UNTIL as written. A day on which
clocks go forward and the time does not exist runs at the same wall time with the old offset
(an hour later); a time that happens twice runs at the first. A run is never before its time
of day and may be later (the scheduler looks once a minute).

At most one run a day, so a rule is accepted when:

* ``FREQ`` is ``DAILY``, ``WEEKLY``, ``MONTHLY`` or ``YEARLY`` (not ``HOURLY``,
  ``MINUTELY``, ``SECONDLY``), and ``BYHOUR``, ``BYMINUTE``, ``BYSECOND`` have one value at
  most (several would mean several runs a day; one changes nothing, the time of day being
  ``schedule_rrule_time``);
* ``BYMONTHDAY``, ``BYYEARDAY``, ``BYWEEKNO`` and ``BYEASTER`` are absent (unsupported);
* the other parts are in their RFC ranges: ``INTERVAL`` 1-1000, ``COUNT`` at least 1 (not
  with ``UNTIL``), ``BYMONTH`` 1-12, ``BYDAY`` weekdays with an ordinal only for
  ``MONTHLY`` (±1-5) and ``YEARLY`` (±1-53, ±1-5 with ``BYMONTH``), ``BYSETPOS`` non-zero
  and no larger than the days a period can hold, ``WKST`` a weekday;
* DTSTART lies in the years 2000-2999, and the rule runs at all. dateutil expands a rule
  that never matches until the year 9999 (seconds of CPU), so such rules are refused: daily
  intervals that never land on the weekdays named, monthly intervals that never reach the
  months named, month days none of the months has, and for monthly and yearly rules any
  rule without a run in a whole 400-year calendar cycle (see :func:`_runs_in_last_cycle`).

A rule whose occurrences are all in the past (COUNT used up, UNTIL passed) has no next run.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import re
from dataclasses import dataclass

from dateutil.rrule import (
    DAILY,
    FR,
    MO,
    MONTHLY,
    SA,
    SU,
    TH,
    TU,
    WE,
    WEEKLY,
    YEARLY,
    rrule,
    rrulestr,
    weekday,
)

MAX_INTERVAL = 1000
FIRST_YEAR, LAST_YEAR = 2000, 2999

_FREQS = {"DAILY": DAILY, "WEEKLY": WEEKLY, "MONTHLY": MONTHLY, "YEARLY": YEARLY}
_SUBDAILY = ("HOURLY", "MINUTELY", "SECONDLY")
_UNSUPPORTED = ("BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYEASTER")
_KNOWN = frozenset(
    {"FREQ", "INTERVAL", "COUNT", "UNTIL", "BYDAY", "BYMONTH", "BYSETPOS", "WKST"}
    | {"BYHOUR", "BYMINUTE", "BYSECOND"}
)
_WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_WEEKDAY_OBJECTS = dict(zip(_WEEKDAYS, (MO, TU, WE, TH, FR, SA, SU), strict=True))
_BYDAY = re.compile(r"^([+-]?)(\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$")
_DTSTART = re.compile(r"^DTSTART(;[^:]*)?:(\d{4})(\d{2})(\d{2})(T\d{6}Z?)?$")
_INT = re.compile(r"^[+-]?\d{1,6}$")
_TIME_RANGES = {"BYHOUR": (0, 23), "BYMINUTE": (0, 59), "BYSECOND": (0, 60)}


class ScheduleError(ValueError):
    """The rule cannot be used; the message says why (it becomes the field's error)."""


@dataclass(frozen=True)
class Schedule:
    """A checked rule over dates: its occurrences are midnights of the days it runs on."""

    rule: rrule

    def days_from(self, start: dt.date) -> dt.date | None:
        """The first day on or after ``start`` the rule runs on."""
        found = self.rule.after(dt.datetime.combine(start, dt.time()), inc=True)
        return found.date() if found is not None else None


def parse(text: str) -> Schedule:
    """The schedule of ``text``; a :class:`ScheduleError` naming the problem otherwise."""
    lines = [line.strip() for line in text.replace("\r\n", "\n").split("\n") if line.strip()]
    names = sorted(re.split(r"[;:]", line, maxsplit=1)[0].upper() for line in lines)
    if names != ["DTSTART", "RRULE"]:
        raise ScheduleError(
            "Enter exactly two lines: one DTSTART line and one RRULE line "
            "(e.g. DTSTART:20250106T000000 and RRULE:FREQ=WEEKLY;BYDAY=MO)."
        )
    dtstart_line = next(line for line in lines if line.upper().startswith("DTSTART"))
    rrule_line = next(line for line in lines if line.upper().startswith("RRULE"))
    start = _start_date(dtstart_line)
    parts = _parts(rrule_line)
    freq = _frequency(parts)
    weekdays = _weekdays(parts, freq)
    months = _ints(parts, "BYMONTH", 1, 12)
    interval = _interval(parts)
    count = _count(parts)
    for name, (low, high) in _TIME_RANGES.items():
        values = _ints(parts, name, low, high)
        if len(values) > 1:
            raise ScheduleError(
                f"{name} with several values means several runs a day; a scheduled export "
                "runs once a day at most (at schedule_rrule_time)."
            )
    setpos = _ints(parts, "BYSETPOS", -366, 366)
    if 0 in setpos:
        raise ScheduleError("BYSETPOS values must not be 0.")
    limit = _set_size(freq, weekdays, months)
    if any(abs(p) > limit for p in setpos):
        raise ScheduleError(
            f"BYSETPOS must lie between -{limit} and {limit} here: a period of this rule "
            f"holds {limit} day(s) at most."
        )
    wkst = parts.get("WKST")
    if wkst is not None and wkst not in _WEEKDAYS:
        raise ScheduleError(f'WKST: "{wkst}" is not a weekday (MO, TU, WE, TH, FR, SA, SU).')
    _check_reachable(freq, interval, start, weekdays, months)
    until = _until(parts.get("UNTIL"))
    try:
        rrulestr("\n".join(lines))  # the rest of the RFC syntax, as dateutil reads it
        rule = rrule(
            freq,
            dtstart=dt.datetime.combine(start, dt.time()),
            interval=interval,
            count=count,
            until=until,
            byweekday=[_weekday(w) for w in weekdays] or None,
            bymonth=months or None,
            bysetpos=setpos or None,
            wkst=_WEEKDAYS.index(wkst) if wkst else None,
            cache=True,
        )
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        raise ScheduleError(f"This is not a valid recurrence rule ({exc}).") from None
    if freq in (MONTHLY, YEARLY) and not _runs_in_last_cycle(rule, freq, interval, start):
        raise ScheduleError(
            "The rule never runs: no date in the calendar matches all of its parts "
            "at this interval."
        )
    return Schedule(rule)


def next_run(
    schedule: Schedule, at: dt.time, zone: dt.tzinfo, after: dt.datetime
) -> dt.datetime | None:
    """The first run strictly after ``after`` (UTC): a day of the rule at ``at`` wall-clock
    time in ``zone``; None when the rule has no such day left."""
    day = schedule.days_from(after.astimezone(zone).date())
    while day is not None:
        moment = run_time(day, at, zone)
        if moment is None:
            return None
        if moment > after:
            return moment
        day = schedule.days_from(day + dt.timedelta(days=1))
    return None


def run_time(day: dt.date, at: dt.time, zone: dt.tzinfo) -> dt.datetime | None:
    """``at`` on ``day`` in ``zone``, in UTC (None past the calendar's end)."""
    try:
        local = dt.datetime.combine(day, at.replace(tzinfo=None), tzinfo=zone)
        return local.astimezone(dt.UTC)
    except OverflowError:
        return None


# -- the parts -------------------------------------------------------------------------------


def _start_date(line: str) -> dt.date:
    match = _DTSTART.match(line.upper())
    if match is None:
        raise ScheduleError("DTSTART must be a date or date-time, e.g. DTSTART:20250106T000000.")
    year, month, day = (int(match.group(i)) for i in (2, 3, 4))
    try:
        start = dt.date(year, month, day)
    except ValueError:
        raise ScheduleError("DTSTART is not a valid date.") from None
    if not FIRST_YEAR <= start.year <= LAST_YEAR:
        raise ScheduleError(f"DTSTART must lie in the years {FIRST_YEAR} to {LAST_YEAR}.")
    return start


def _parts(line: str) -> dict[str, str]:
    body = line.split(":", 1)[1] if ":" in line else ""
    parts: dict[str, str] = {}
    for chunk in body.upper().split(";"):
        if not chunk:
            continue
        name, _, value = chunk.partition("=")
        if name in parts:
            raise ScheduleError(f"{name} appears more than once.")
        parts[name] = value
    for name in _UNSUPPORTED:
        if name in parts:
            raise ScheduleError(f"{name} is not supported in scheduled exports.")
    unknown = sorted(set(parts) - _KNOWN)
    if unknown:
        raise ScheduleError(f"{unknown[0]} is not supported in scheduled exports.")
    return parts


def _frequency(parts: dict[str, str]) -> int:
    name = parts.get("FREQ")
    if name in _SUBDAILY:
        raise ScheduleError(
            f"FREQ={name} runs several times a day; a scheduled export runs once a day at "
            "most: use DAILY, WEEKLY, MONTHLY or YEARLY."
        )
    if name not in _FREQS:
        raise ScheduleError("FREQ must be DAILY, WEEKLY, MONTHLY or YEARLY.")
    return _FREQS[name]


def _ints(parts: dict[str, str], name: str, low: int, high: int) -> list[int]:
    raw = parts.get(name)
    if raw is None:
        return []
    values = []
    for item in raw.split(","):
        if not _INT.match(item) or not low <= int(item) <= high:
            raise ScheduleError(f"{name} values must be whole numbers from {low} to {high}.")
        values.append(int(item))
    return sorted(set(values))


def _interval(parts: dict[str, str]) -> int:
    values = _ints(parts, "INTERVAL", 1, MAX_INTERVAL) if "INTERVAL" in parts else [1]
    if len(values) != 1:
        raise ScheduleError("INTERVAL takes one value.")
    return values[0]


def _count(parts: dict[str, str]) -> int | None:
    if "COUNT" not in parts:
        return None
    values = _ints(parts, "COUNT", 1, 100_000)
    if len(values) != 1:
        raise ScheduleError("COUNT takes one value.")
    if "UNTIL" in parts:
        raise ScheduleError("COUNT and UNTIL must not be used together.")
    return values[0]


def _until(raw: str | None) -> dt.datetime | None:
    if raw is None:
        return None
    match = re.match(r"^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z?)?$", raw)
    if match is None:
        raise ScheduleError("UNTIL must be a date or date-time, e.g. UNTIL=20261231T000000.")
    try:
        return dt.datetime(*(int(g or 0) for g in match.groups()))  # type: ignore[misc]
    except ValueError:
        raise ScheduleError("UNTIL is not a valid date.") from None


def _weekdays(parts: dict[str, str], freq: int) -> list[tuple[int | None, str]]:
    raw = parts.get("BYDAY")
    if raw is None:
        return []
    found: list[tuple[int | None, str]] = []
    for item in raw.split(","):
        match = _BYDAY.match(item)
        if match is None:
            raise ScheduleError(f'BYDAY: "{item}" is not a weekday such as MO, TU or 1MO.')
        sign, number, day = match.groups()
        ordinal = None if number is None else int(number) * (-1 if sign == "-" else 1)
        if ordinal is not None:
            limit = {MONTHLY: 5, YEARLY: 5 if "BYMONTH" in parts else 53}.get(freq)
            if limit is None:
                raise ScheduleError(
                    "BYDAY ordinals (such as 1MO) need FREQ=MONTHLY or FREQ=YEARLY."
                )
            if not 1 <= abs(ordinal) <= limit:
                raise ScheduleError(f"BYDAY ordinals must lie between -{limit} and {limit}.")
        elif sign:
            raise ScheduleError(f'BYDAY: "{item}" is not a weekday such as MO, TU or 1MO.')
        if (ordinal, day) not in found:
            found.append((ordinal, day))
    return found


def _weekday(entry: tuple[int | None, str]) -> weekday:
    day = _WEEKDAY_OBJECTS[entry[1]]
    return day(entry[0]) if entry[0] is not None else day


def _set_size(freq: int, weekdays: list[tuple[int | None, str]], months: list[int]) -> int:
    """The most days one period of the rule can hold (BYSETPOS picks among them)."""
    plain = sum(1 for ordinal, _ in weekdays if ordinal is None)
    numbered = len(weekdays) - plain
    if freq == DAILY:
        return 1
    if freq == WEEKLY:
        return max(1, len(weekdays))
    if freq == MONTHLY:
        return 5 * plain + numbered if weekdays else 1
    spanned = len(months) or 12
    if not weekdays:
        return len(months) or 1
    return min(366, (5 * plain + numbered) * spanned if months else 53 * plain + numbered)


def _runs_in_last_cycle(rule: rrule, freq: int, interval: int, start: dt.date) -> bool:
    """Whether a monthly or yearly rule runs at all. The Gregorian calendar repeats every
    400 years, so the rule's days repeat every ``lcm(interval, 400 years)``: the rule moved
    forward by whole cycles to the last one before the year 9999 finds a day there (the
    expansion stops at 9999) exactly when it finds one in every cycle. That takes at most
    a few thousand periods; a rule that never runs would otherwise take ten thousands."""
    cycle = math.lcm(interval, 400 if freq == YEARLY else 4800)
    years = cycle if freq == YEARLY else cycle // 12
    shift = (dt.MAXYEAR - start.year - years) // years * years
    if shift <= 0:
        return True  # a cycle longer than the calendar: its expansion is short anyway
    moved = dt.datetime(start.year + shift, start.month, start.day)
    probe = rule.replace(dtstart=moved, count=None, until=None, cache=False)
    return probe.after(moved, inc=True) is not None


def _check_reachable(
    freq: int,
    interval: int,
    start: dt.date,
    weekdays: list[tuple[int | None, str]],
    months: list[int],
) -> None:
    """Refuses rules whose interval never lands on what they name."""
    if freq == DAILY and weekdays and interval % 7 == 0:
        if _WEEKDAYS[start.weekday()] not in {day for _, day in weekdays}:
            raise ScheduleError(
                f"With FREQ=DAILY and INTERVAL={interval} every run falls on a "
                f"{calendar.day_name[start.weekday()]}, which BYDAY excludes: it never runs."
            )
    reachable = set(range(1, 13))
    if freq == MONTHLY:
        step = math.gcd(interval, 12)
        reachable = {(start.month - 1 + k * step) % 12 + 1 for k in range(12 // step)}
        if months and not reachable & set(months):
            raise ScheduleError(
                f"With FREQ=MONTHLY and INTERVAL={interval} starting in month {start.month}, "
                "no run falls in the months BYMONTH names: it never runs."
            )
    if freq in (MONTHLY, YEARLY) and not weekdays and start.day > 28:
        # Without BYDAY the rule runs on DTSTART's day of the month.
        candidates = (set(months) or ({start.month} if freq == YEARLY else reachable)) & reachable
        longest = {m: 29 if m == 2 else calendar.monthrange(2001, m)[1] for m in range(1, 13)}
        if not any(longest[m] >= start.day for m in candidates):
            raise ScheduleError(
                f"The rule runs on day {start.day} of the month (from DTSTART), which none of "
                "its months has: it never runs."
            )
