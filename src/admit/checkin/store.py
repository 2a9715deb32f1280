"""Writing a scan: one statement that inserts the check-in (and, when it admitted someone,
its ``service.event.checkin`` notification), guarded against concurrent scans of one ticket.

Concurrency without locks: a successful check-in takes the next number ``seq`` in its
ticket's sequence on the list (``1 + the highest the redeem saw``), and ``(position, list,
seq)`` is unique. Two scanners that decided on the same state ask for the same number; the
database lets one insert and the other ``ON CONFLICT DO NOTHING`` inserts nothing, so that
redeem reads the state again and decides once more (now seeing the winner's entry).
Annulling a check-in clears its ``seq``. The redeem is thus correct with any number of API
processes, needs no transaction of its own (each statement is atomic) and costs one round
trip per statement on the native pool. Failed scans carry no ``seq`` and never collide.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Checkin, Notification

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
_N = len(_COLUMNS)
_INSERT_NOTIFIED = (
    f"WITH ins AS ({_INSERT}), note AS ("
    "INSERT INTO notifications (organizer_id, event_id, action, payload, created) "
    f"SELECT ${_N + 1}::int, ${_N + 2}::int, ${_N + 3}::varchar, ${_N + 4}::jsonb || "
    f"jsonb_build_object('checkin_id', ins.id), ${_N + 5}::timestamptz FROM ins) "
    "SELECT id FROM ins"
)


@dataclass
class NewNotification:
    organizer_id: int
    event_id: int | None
    action: str
    payload: dict[str, Any]


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


async def insert_scan(
    session: AsyncSession, new: NewCheckin, note: NewNotification | None = None
) -> int | None:
    """Stores the scan outside the request's transaction on PostgreSQL (one autocommit
    statement), inside it on SQLite. None when its ``seq`` was taken meanwhile."""
    fast = session.info["fast"]
    values = {name: getattr(new, name) for name in _COLUMNS}  # asdict() would deep-copy
    if fast.native:
        pool = await fast._get_pool()  # the fast path's native pool
        args = [values[c] for c in _COLUMNS]
        fast.executed += 1
        if note is None:
            return await pool.fetchval(_INSERT, *args)
        return await pool.fetchval(
            _INSERT_NOTIFIED,
            *args,
            note.organizer_id,
            note.event_id,
            note.action,
            note.payload,
            new.created,
        )
    conn = await session.connection()
    try:
        async with session.begin_nested():
            new_id = (
                await conn.execute(insert(Checkin).values(**values).returning(Checkin.id))
            ).scalar_one()
    except IntegrityError:
        return None
    if note is not None:
        payload = {**note.payload, "checkin_id": new_id}
        await conn.execute(
            insert(Notification).values(
                organizer_id=note.organizer_id,
                event_id=note.event_id,
                action=note.action,
                payload=payload,
                created=new.created,
            )
        )
    return new_id
