"""The sweep: the scheduler's periodic pass over the jobs table.

It puts jobs whose worker died (lease expired) back to ``waiting`` or, with no attempts left,
``failed``; hands due retries and waiting jobs the broker never delivered to the broker (after
the commit); deletes expired jobs with their result files; and logs the jobs per status.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import and_, case, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import Database
from admit.jobs.queue import kick_after_commit
from admit.jobs.storage import FileStore
from admit.kit.http.transaction import commit_and_notify
from admit.models import Job

log = logging.getLogger("admit.jobs")

SWEEP_BATCH = 5000


async def sweep(
    session: AsyncSession, now: dt.datetime, settings: Any, store: FileStore
) -> dict[str, int]:
    """Reaps jobs whose lease ran out, hands due and undelivered waiting jobs to the broker
    (after the commit), deletes expired results, and logs the jobs per status."""
    expired_lease = and_(Job.status == "running", Job.lease_until < now)
    used_up = Job.attempts >= Job.max_attempts
    keep = dt.timedelta(hours=settings.job_result_hours)
    reaped = (
        await session.execute(
            update(Job)
            .where(expired_lease)
            .values(
                status=case((used_up, "failed"), else_="waiting"),
                message=case(
                    (used_up, "The worker running this job stopped; no attempts are left."),
                    else_="The worker running this job stopped; it runs again.",
                ),
                finished=case((used_up, now), else_=None),
                expires=case((used_up, now + keep), else_=None),
                worker=None,
                lease_until=None,
                run_after=now,
                enqueued_at=None,
            )
            .returning(Job.id, Job.status)
            .execution_options(synchronize_session=False)
        )
    ).all()
    for job_id, status in reaped:
        log.warning("job %s: its worker stopped (lease expired); now %s", job_id, status)

    redeliver = now - dt.timedelta(seconds=settings.job_redeliver_seconds)
    due = (
        (
            await session.execute(
                select(Job.id)
                .where(
                    Job.status == "waiting",
                    Job.run_after <= now,
                    or_(Job.enqueued_at.is_(None), Job.enqueued_at < redeliver),
                )
                .order_by(Job.id)
                .limit(SWEEP_BATCH)
            )
        )
        .scalars()
        .all()
    )
    if due:
        await session.execute(
            update(Job).where(Job.id.in_(due)).values(enqueued_at=now),
            execution_options={"synchronize_session": False},
        )
        for job_id in due:
            kick_after_commit(session, job_id)

    gone = (
        await session.execute(
            select(Job.id, Job.result_key).where(Job.expires < now).limit(SWEEP_BATCH)
        )
    ).all()
    for _job_id, key in gone:
        if key:
            await store.delete(key)
    if gone:
        await session.execute(delete(Job).where(Job.id.in_([g[0] for g in gone])))

    counts = dict(
        (await session.execute(select(Job.status, func.count()).group_by(Job.status))).all()
    )
    log.info(
        "jobs: %s; reaped %d, sent %d, deleted %d",
        ", ".join(f"{s} {counts.get(s, 0)}" for s in ("waiting", "running", "finished", "failed")),
        len(reaped),
        len(due),
        len(gone),
    )
    return {"reaped": len(reaped), "sent": len(due), "deleted": len(gone), **counts}


async def run_in_session(db: Database, work: Callable[[AsyncSession], Awaitable[Any]]) -> Any:
    """Runs ``work`` in a transaction of its own and, after the commit, what it registered."""
    async with db.sessionmaker() as session:
        result = await work(session)
        await commit_and_notify(session)
        return result


async def remove_partial_files(store: FileStore, older_than: float) -> int:
    """Partial files of writers that were killed (a worker's SIGKILL mid-export leaves one in
    the shared file store): removed once older than any run may take. Stores without
    partial files (S3: an unfinished upload is no object) have nothing to do."""
    remove = getattr(store, "remove_partials", None)
    if remove is None:
        return 0
    removed = await remove(older_than)
    if removed:
        log.warning("files: removed %d partial file(s) left by stopped writers", removed)
    return removed
