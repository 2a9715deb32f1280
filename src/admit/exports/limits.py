"""At most two running exports per caller (the spec's limit); a third request answers 429.
Ticket batches (``render_batch``) are limited the same way, with their own count.

"Running" means a job of the kind owned by the caller that is waiting or running.
The count and the new job's insert must not interleave between two requests of one caller, or
both could see one free slot and both start: on PostgreSQL the request takes a transaction-
scoped advisory lock on the owner before it counts, so a second request of the same owner
counts only once the first committed (its job row included) or rolled back; SQLite write
transactions are serialized already (they begin with ``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.exports.tasks import EXPORT_KIND
from admit.kit.http.errors import APIError
from admit.models import Job

MAX_RUNNING = 2
# Seconds a refused caller is told to wait when no running export gives a better estimate.
DEFAULT_RETRY_AFTER = 5
MAX_RETRY_AFTER = 60

_LOCK = text("SELECT pg_advisory_xact_lock(hashtext(:key))")


async def reserve_slot(
    session: AsyncSession,
    owner: tuple[str, int],
    kind: str = EXPORT_KIND,
    limit: int = MAX_RUNNING,
    what: str = "exports",
) -> None:
    """Raises 429 (with ``Retry-After``) when ``owner`` has ``limit`` jobs of ``kind``
    waiting or running. Call it in the transaction that enqueues the job, right before."""
    if session.bind.dialect.name == "postgresql":
        await session.execute(_LOCK, {"key": f"admit.{kind}:{owner[0]}:{owner[1]}"})
    query = (
        select(Job.status, Job.percentage, Job.started)
        .where(Job.kind == kind, Job.status.in_(("waiting", "running")))
        .where(Job.owner_kind == owner[0], Job.owner_id == owner[1])
    )
    rows = (await session.execute(query)).all()
    if len(rows) >= limit:
        raise APIError(
            429,
            f"You can run at most {limit} {what} at the same time. Please wait until "
            "one of them has finished.",
            headers={"Retry-After": str(retry_after(rows))},
        )


def retry_after(rows: list[tuple[str, int | None, object]]) -> int:
    """When a slot is likely free: the soonest end of the running exports, extrapolated from
    their progress so far (bounded to a minute), else a few seconds."""
    now = utcnow()
    estimates = []
    for status, percentage, started in rows:
        if status == "running" and percentage and started is not None:
            elapsed = (now - started).total_seconds()  # type: ignore[operator]
            estimates.append(elapsed * (100 - percentage) / percentage)
    if not estimates:
        return DEFAULT_RETRY_AFTER
    return max(1, min(MAX_RETRY_AFTER, round(min(estimates))))
