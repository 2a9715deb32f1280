"""The job engine's per-job statements (a claim, an end, the organizers of a message) as SQL
written once and run on the native PostgreSQL pool (``kit/lanes/fastread``).

Why: every job, a buyer's mail at an on-sale included, costs a claim and an end. Through
SQLAlchemy each batch paid for building the statement, its cache key and the parameter and
result processing: at a rush about half of what the order lane's batching cost the worker.
Here the ids go as one array parameter, so the SQL never changes and asyncpg keeps it
prepared. The conditions and values are those of ``claims.CLAIM`` and of the runner's end
update, which SQLite (and an end with other values) still runs through SQLAlchemy.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, NamedTuple

TENANTS = "SELECT id, organizer_id FROM jobs WHERE id = ANY($1::bigint[])"

CLAIM = (
    "UPDATE jobs SET status = 'running', worker = $3, lease_until = $4, "
    "attempts = attempts + 1, started = $2, message = NULL "
    "WHERE id = ANY($1::bigint[]) AND status = 'waiting' AND run_after <= $2 "
    "RETURNING id, uuid, kind, input, attempts, max_attempts, organizer_id, event_id, "
    "owner_kind, owner_id"
)

# The values of an end (``JobEngine._end``), in the order of END's parameters from $3 on.
END_VALUES = (
    "status",
    "message",
    "percentage",
    "lease_until",
    "result_key",
    "result_name",
    "result_type",
    "result_size",
    "finished",
    "expires",
)
END = (
    "UPDATE jobs SET status = $3, message = $4, percentage = $5, lease_until = $6, "
    "result_key = $7, result_name = $8, result_type = $9, result_size = $10, "
    "finished = $11, expires = $12 "
    "WHERE id = ANY($1::bigint[]) AND worker = $2 AND status = 'running' RETURNING id"
)


class Claimed(NamedTuple):
    """A claimed job's row, read by attribute as a SQLAlchemy row is."""

    id: int
    uuid: str
    kind: str
    input: Any
    attempts: int
    max_attempts: int
    organizer_id: int | None
    event_id: int | None
    owner_kind: str | None
    owner_id: int | None


async def tenants(pool: Any, ids: list[int]) -> dict[int, int | None]:
    return {row["id"]: row["organizer_id"] for row in await pool.fetch(TENANTS, ids)}


async def claim(
    pool: Any, ids: list[int], now: dt.datetime, worker: str, lease_until: dt.datetime
) -> dict[int, Claimed]:
    rows = await pool.fetch(CLAIM, ids, now, worker, lease_until)
    return {row["id"]: Claimed(*row.values()) for row in rows}


async def end(pool: Any, ids: list[int], worker: str, values: dict[str, Any]) -> set[int]:
    """The ids still held that were ended with ``values`` (every name of END_VALUES)."""
    args = [values[name] for name in END_VALUES]
    return {row["id"] for row in await pool.fetch(END, ids, worker, *args)}
