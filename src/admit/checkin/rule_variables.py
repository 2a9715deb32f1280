"""What a check-in list rule reads: its variables and the operations beyond JsonLogic's.

Variables: ``product``, ``variation``, ``gate`` (ids), ``now`` (the check-in time),
``now_isoweekday`` (1 = Monday, in the event's time zone), ``entries_number`` (successful
entries on this list before this one), ``entries_today`` (of them since local midnight),
``entries_days`` (distinct local days with an entry), ``minutes_since_last_entry`` and
``minutes_since_first_entry`` (-1 without an entry). Operations beyond JsonLogic's:
``inList``, ``isBefore`` / ``isAfter`` (with an optional tolerance in minutes),
``buildTime`` (``custom`` ISO datetime, ``customtime`` "HH:MM" today, ``date_from``,
``date_to``, ``date_admission`` of the ticket's date), ``objectList`` and ``lookup``
(``["product", "12", "label"]`` stands for the id 12).

Validating, evaluating and explaining a rule is :mod:`admit.checkin.rules`.
"""

from __future__ import annotations

import datetime as dt
import math
import zoneinfo
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from admit.checkin.jsonlogic import Budget, Logic, RuleError

VARIABLES = frozenset(
    {
        "product",
        "variation",
        "gate",
        "now",
        "now_isoweekday",
        "entries_number",
        "entries_today",
        "entries_days",
        "minutes_since_last_entry",
        "minutes_since_first_entry",
    }
)
TIME_TYPES = frozenset({"custom", "customtime", "date_from", "date_to", "date_admission"})
OPERATORS = frozenset(
    {"and", "or", "!", "!!", "==", "!=", "===", "!==", "<", "<=", ">", ">=", "var", "if", "in"}
    | {"inList", "isBefore", "isAfter", "buildTime", "objectList", "lookup"}
)


@dataclass(frozen=True)
class EventDates:
    """The dates ``buildTime`` refers to: the ticket's subevent's, else the event's."""

    timezone: str
    date_from: dt.datetime
    date_to: dt.datetime | None = None
    date_admission: dt.datetime | None = None

    @property
    def tz(self) -> dt.tzinfo:
        try:
            return zoneinfo.ZoneInfo(self.timezone or "UTC")
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            return dt.UTC


def parse_datetime(text: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(text.strip().replace("z", "Z"))
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def parse_time(text: str) -> dt.time:
    return dt.time.fromisoformat(text.strip())


def build_time(dates: EventDates, now: dt.datetime, kind: Any, value: Any = None) -> dt.datetime:
    if kind == "custom":
        return parse_datetime(str(value))
    if kind == "customtime":
        local = now.astimezone(dates.tz)
        moment = parse_time(str(value))
        return dt.datetime.combine(local.date(), moment, tzinfo=dates.tz)
    if kind == "date_from":
        return dates.date_from
    if kind == "date_to":
        return dates.date_to or dates.date_from
    if kind == "date_admission":
        return dates.date_admission or dates.date_from
    raise RuleError(f'Unknown time type "{kind}".')


def tolerance_of(minutes: Any) -> dt.timedelta:
    if minutes in (None, "", "None"):
        return dt.timedelta(0)
    return dt.timedelta(minutes=float(minutes))


def is_before(a: Any, b: Any, tolerance: Any = None) -> bool:
    if not isinstance(a, dt.datetime) or not isinstance(b, dt.datetime):
        return False
    return a < b + tolerance_of(tolerance)


def is_after(a: Any, b: Any, tolerance: Any = None) -> bool:
    if not isinstance(a, dt.datetime) or not isinstance(b, dt.datetime):
        return False
    return a > b - tolerance_of(tolerance)


def logic_for(dates: EventDates, now: dt.datetime, budget: Budget | None = None) -> Logic:
    return Logic(
        {
            "inList": lambda a=None, b=None: isinstance(b, list) and a in b,
            "isBefore": is_before,
            "isAfter": is_after,
            "buildTime": lambda kind=None, value=None: build_time(dates, now, kind, value),
            "objectList": lambda *objects: list(objects),
            "lookup": lambda _model=None, pk=None, _label=None: int(pk),  # type: ignore[arg-type]
        },
        budget,
    )


# -- variables ------------------------------------------------------------------------------


@dataclass
class History:
    """The ticket's successful check-ins on the list, as (type, datetime), in time order."""

    scans: Sequence[tuple[str, dt.datetime]] = ()

    @property
    def entries(self) -> list[dt.datetime]:
        return [when for kind, when in self.scans if kind == "entry"]


@dataclass
class RuleVars(Mapping[str, Any]):
    """The variables of one scan, computed when a rule first asks for them."""

    now: dt.datetime
    dates: EventDates
    product: int
    variation: int | None
    gate: int | None
    history: History
    _cache: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        if name not in VARIABLES:
            raise KeyError(name)
        if name not in self._cache:
            self._cache[name] = self._compute(name)
        return self._cache[name]

    def __iter__(self) -> Iterator[str]:
        return iter(VARIABLES)

    def __len__(self) -> int:
        return len(VARIABLES)

    def _compute(self, name: str) -> Any:
        if name in ("now", "product", "variation", "gate"):
            return getattr(self, name)
        local_now = self.now.astimezone(self.dates.tz)
        if name == "now_isoweekday":
            return local_now.isoweekday()
        entries = self.history.entries
        if name == "entries_number":
            return len(entries)
        if name == "entries_today":
            midnight = local_now.replace(hour=0, minute=0, second=0, microsecond=0)
            return sum(1 for e in entries if e >= midnight)
        if name == "entries_days":
            return len({e.astimezone(self.dates.tz).date() for e in entries})
        if not entries:
            return -1
        since = entries[-1] if name == "minutes_since_last_entry" else entries[0]
        return math.floor((self.now - since).total_seconds() / 60)
