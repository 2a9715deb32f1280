"""The seating plan layout: validation and the flat list of seats it describes.

The layout follows the JSON shape of the reference's seating plan schema: an object with a
``name``, ``categories`` (``[{name, color?}]``) and ``zones``; a zone has ``rows`` (and optional
drawing attributes such as ``name``, ``position``, ``areas``); a row has ``row_number``, an
optional ``row_label`` and ``seats``; a seat has ``seat_guid``, ``seat_number``, ``category``
(naming one of the categories), an optional ``seat_label`` and ``position``. Drawing attributes
this service does not use are kept as sent, so layouts from newer editors stay accepted; the
fields seats are made of are checked strictly, and ``seat_guid`` must be unique in the plan.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from admit.models.seating import SEAT_TEXT_LENGTH

MAX_SEATS = 100_000
MAX_MESSAGES = 20


@dataclass(frozen=True)
class SeatSpec:
    """One seat as the layout describes it (``rank`` is its place in layout order)."""

    guid: str
    zone_name: str
    row_name: str
    row_label: str | None
    seat_number: str
    seat_label: str | None
    category: str
    rank: int


class LayoutError(ValueError):
    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


class _Checker:
    def __init__(self) -> None:
        self.messages: list[str] = []

    def fail(self, where: str, message: str) -> None:
        if len(self.messages) < MAX_MESSAGES:
            self.messages.append(f"{where}: {message}" if where else message)

    def object(self, value: Any, where: str) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.fail(where, "Expected an object.")
            return None
        return value

    def list(self, parent: dict[str, Any], key: str, where: str, required: bool = True) -> list:
        value = parent.get(key)
        if value is None and not required and key not in parent:
            return []
        if not isinstance(value, list):
            self.fail(_join(where, key), "Expected a list." if key in parent else _REQUIRED)
            return []
        return value

    def text(
        self, parent: dict[str, Any], key: str, where: str, *, required: bool, blank: bool = True
    ) -> str | None:
        if key not in parent or (parent[key] is None and not required):
            if required:
                self.fail(_join(where, key), _REQUIRED)
            return None
        value = parent[key]
        if not isinstance(value, str):
            self.fail(_join(where, key), "Expected a string.")
            return None
        if not blank and not value.strip():
            self.fail(_join(where, key), "This field may not be blank.")
            return None
        if len(value) > SEAT_TEXT_LENGTH:
            self.fail(_join(where, key), f"Ensure this has at most {SEAT_TEXT_LENGTH} characters.")
            return None
        return value

    def position(self, parent: dict[str, Any], where: str) -> None:
        if "position" not in parent:
            return
        pos = parent["position"]
        valid = isinstance(pos, dict) and all(
            isinstance(pos.get(axis), int | float) and not isinstance(pos.get(axis), bool)
            for axis in ("x", "y")
        )
        if not valid:
            self.fail(_join(where, "position"), 'Expected an object with numbers "x" and "y".')


_REQUIRED = "This field is required."


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _categories(check: _Checker, layout: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for index, raw in enumerate(check.list(layout, "categories", "")):
        where = f"categories[{index}]"
        category = check.object(raw, where)
        if category is None:
            continue
        name = check.text(category, "name", where, required=True, blank=False)
        check.text(category, "color", where, required=False)
        if name is not None:
            if name in names:
                check.fail(_join(where, "name"), f'The category "{name}" is defined twice.')
            names.add(name)
    return names


def _seats(check: _Checker, layout: dict[str, Any], categories: set[str]) -> Iterator[SeatSpec]:
    rank = 0
    for z, raw_zone in enumerate(check.list(layout, "zones", "")):
        zone_where = f"zones[{z}]"
        zone = check.object(raw_zone, zone_where)
        if zone is None:
            continue
        zone_name = check.text(zone, "name", zone_where, required=False) or ""
        check.position(zone, zone_where)
        check.list(zone, "areas", zone_where, required=False)
        for r, raw_row in enumerate(check.list(zone, "rows", zone_where)):
            row_where = f"{zone_where}.rows[{r}]"
            row = check.object(raw_row, row_where)
            if row is None:
                continue
            row_name = check.text(row, "row_number", row_where, required=True)
            row_label = check.text(row, "row_label", row_where, required=False)
            check.position(row, row_where)
            for s, raw_seat in enumerate(check.list(row, "seats", row_where)):
                where = f"{row_where}.seats[{s}]"
                seat = check.object(raw_seat, where)
                if seat is None:
                    continue
                guid = check.text(seat, "seat_guid", where, required=True, blank=False)
                number = check.text(seat, "seat_number", where, required=True)
                label = check.text(seat, "seat_label", where, required=False)
                category = check.text(seat, "category", where, required=True)
                check.position(seat, where)
                if category is not None and category not in categories:
                    check.fail(_join(where, "category"), f'Unknown category "{category}".')
                    continue
                if None in (guid, number, category, row_name):
                    continue
                rank += 1
                yield SeatSpec(
                    guid=guid,  # type: ignore[arg-type]
                    zone_name=zone_name,
                    row_name=row_name,  # type: ignore[arg-type]
                    row_label=row_label,
                    seat_number=number,  # type: ignore[arg-type]
                    seat_label=label,
                    category=category,  # type: ignore[arg-type]
                    rank=rank,
                )


def parse_layout(layout: Any) -> tuple[list[SeatSpec], set[str]]:
    """The seats and category names of a layout; :class:`LayoutError` lists what is wrong."""
    check = _Checker()
    root = check.object(layout, "")
    if root is None:
        raise LayoutError(check.messages)
    check.text(root, "name", "", required=True)
    categories = _categories(check, root)
    seats: list[SeatSpec] = []
    seen: set[str] = set()
    for spec in _seats(check, root, categories):
        if spec.guid in seen:
            check.fail("", f'The seat_guid "{spec.guid}" is used for more than one seat.')
            continue
        seen.add(spec.guid)
        seats.append(spec)
        if len(seats) > MAX_SEATS:
            check.fail("", f"A seating plan may hold at most {MAX_SEATS} seats.")
            break
    if check.messages:
        raise LayoutError(check.messages)
    return seats, categories


def seat_categories(layout: Any) -> set[str]:
    """Category names of a stored (valid) layout."""
    if not isinstance(layout, dict):
        return set()
    return {
        c["name"]
        for c in layout.get("categories") or ()
        if isinstance(c, dict) and isinstance(c.get("name"), str)
    }
