"""Writing a scan: one statement, guarded against concurrent scans of one ticket.

Concurrency without locks: a successful check-in takes the next number ``seq`` in its
ticket's sequence on the list (``1 + the highest the redeem saw``), and ``(position, list,
seq)`` is unique. Two scanners that decided on the same state ask for the same number; the
database lets one insert and the other ``ON CONFLICT DO NOTHING`` inserts nothing, so that
redeem reads the state again and decides once more (now seeing the winner's entry).
Annulling a check-in clears its ``seq``. The redeem is thus correct with any number of API
processes, needs no transaction of its own (each statement is atomic) and costs one round
trip per statement on the native pool. Failed scans carry no ``seq`` and never collide.

The check-ins table is its own outbox for ``service.event.checkin``: successful rows, in id
order, are the events a webhook sender announces (payload: :func:`checkin_payload`), so the
hot path writes one row, not two. Annulments, which change a row instead of adding one,
record ``service.event.checkin.reverted`` in ``notifications``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Checkin

CHECKIN_ACTION = "service.event.checkin"
REVERTED_ACTION = "service.event.checkin.reverted"


@dataclass
class NewCheckin:
    event_id: int
    list_id: int
    position_id: int | None
    seq: int | None
    type: str
    datetime: dt.datetime
    created: dt.datetime
    successful: bool
    error_reason: str | None = None
    error_explanation: str | None = None
    auto_checked_in: bool = False
    forced: bool = False
    nonce: str | None = None
    device_id: int | None = None
    device_number: int | None = None
    gate_id: int | None = None
    raw_barcode: str | None = None
    raw_source_type: str | None = None


_COLUMNS = tuple(NewCheckin.__dataclass_fields__)
_VALUES = ", ".join(f"${i}" for i in range(1, len(_COLUMNS) + 1))
_INSERT = (
    f"INSERT INTO checkins ({', '.join(_COLUMNS)}) VALUES ({_VALUES}) "
    "ON CONFLICT (position_id, list_id, seq) DO NOTHING RETURNING id"
)


def checkin_payload(
    organizer_slug: str,
    event_slug: str,
    order_code: str,
    position: dict[str, Any],
    list_id: int,
    kind: str,
    first: bool,
    action: str = CHECKIN_ACTION,
) -> dict[str, Any]:
    """The webhook payload of a check-in notification (the outbox row's id is its
    ``notification_id`` once delivered)."""
    return {
        "organizer": organizer_slug,
        "event": event_slug,
        "code": order_code,
        "action": action,
        "orderposition_id": position["id"],
        "orderposition_positionid": position["positionid"],
        "checkin_list": list_id,
        "type": kind,
        "first_checkin": first,
    }


async def insert_scan(session: AsyncSession, new: NewCheckin) -> int | None:
    """Stores the scan outside the request's transaction on PostgreSQL (one autocommit
    statement on the native pool), inside it on SQLite. None when its ``seq`` was taken
    meanwhile."""
    fast = session.info["fast"]
    values = {name: getattr(new, name) for name in _COLUMNS}  # asdict() would deep-copy
    if fast.native:
        fast.executed += 1
        pool = await fast.pool()  # the fast path's native pool
        return await pool.fetchval(_INSERT, *(values[c] for c in _COLUMNS))
    connection = await session.connection()
    try:
        async with session.begin_nested():
            result = await connection.execute(
                insert(Checkin).values(**values).returning(Checkin.id)
            )
            return result.scalar_one()
    except IntegrityError:
        return None
