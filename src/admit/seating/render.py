"""The seat object shown on order positions and cart positions, loaded in one query per page."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Seat


def seat_name(seat: Seat) -> str:
    """A readable name: the zone, then the row and seat (their labels replace the numbers)."""
    parts = []
    if seat.zone_name:
        parts.append(seat.zone_name)
    if seat.row_label:
        parts.append(seat.row_label)
    elif seat.row_name:
        parts.append(f"Row {seat.row_name}")
    if seat.seat_label:
        parts.append(seat.seat_label)
    elif seat.seat_number:
        parts.append(f"Seat {seat.seat_number}")
    return ", ".join(parts) or seat.seat_guid


def position_seat(seat: Seat) -> dict[str, Any]:
    """The ``seat`` attribute of an order position or cart position."""
    return {
        "id": seat.id,
        "name": seat_name(seat),
        "zone_name": seat.zone_name,
        "row_name": seat.row_name,
        "row_label": seat.row_label,
        "seat_number": seat.seat_number,
        "seat_label": seat.seat_label,
        "seat_guid": seat.seat_guid,
    }


async def position_seats(
    session: AsyncSession, seat_ids: Iterable[int | None]
) -> dict[int, dict[str, Any]]:
    """Seat objects by id for the positions being rendered; no query when none has a seat."""
    ids = {i for i in seat_ids if i is not None}
    if not ids:
        return {}
    rows = await session.scalars(select(Seat).where(Seat.id.in_(ids)))
    return {seat.id: position_seat(seat) for seat in rows}
