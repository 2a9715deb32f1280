"""The two jobs of shredding: ``shred.export`` writes the ZIP, ``shred.run`` removes the data.

Both run with their owner's permissions at run time (``event.orders:write`` on the event): a
token that lost it between the request and the run gets a failed job, not the data.

``shred.run`` may run more than once (a worker can die after any line), so it records its
progress on its own job row in the transaction of each shredder: a re-run skips what is done.
Its first transaction also checks, right before the first removal, that every chosen
shredder's data is still what the export holds (see :mod:`admit.shredders.archive`): the
organizer's copy does not miss what is removed (short of a change in the milliseconds between
the check and the removal). Its last step deletes the export with its file (download 404).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.owners import current_principal, event_permission
from admit.db import utcnow, write_intent
from admit.jobs.queue import JobContext, JobFailed, RetryLater, job_kind
from admit.kit.http.errors import busy_error
from admit.models import Event, Job, Organizer
from admit.shredders.archive import ArchiveUnreadable, digest_of, read_manifest, write_archive
from admit.shredders.base import Shredder, ShredRun
from admit.shredders.lookup import find
from admit.shredders.service import (
    EXPORT_KEEP_HOURS,
    EXPORT_KIND,
    PERMISSION,
    SHRED_KIND,
    STATUS_KEEP_HOURS,
    refusal,
)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _chosen(job: JobContext) -> list[Shredder]:
    identifiers = job.input.get("shredders")
    if not isinstance(identifiers, list) or not identifiers:
        raise JobFailed("The job names no shredders.")
    chosen = [find(i) if isinstance(i, str) else None for i in identifiers]
    if any(s is None for s in chosen):
        raise JobFailed("A shredder of this job does not exist (any more).")
    return chosen  # type: ignore[return-value]


async def _check_owner(session: AsyncSession, job: JobContext) -> None:
    principal = await current_principal(session, job.owner_kind, job.owner_id)
    if principal is None:
        raise JobFailed("The credential that asked for this job is no longer valid.")
    assert job.organizer_id is not None and job.event_id is not None
    if not event_permission(principal, job.organizer_id, job.event_id, PERMISSION):
        raise JobFailed("You no longer have permission to change this event's orders.")


def _filename(organizer: str, event: str, when: dt.datetime) -> str:
    parts = (organizer, event, "shredder-export", when.strftime("%Y%m%d%H%M"))
    return "_".join(_UNSAFE.sub("-", p) for p in parts) + ".zip"


@job_kind(EXPORT_KIND, max_attempts=2, keep_hours=EXPORT_KEEP_HOURS)
async def export_job(job: JobContext) -> str | None:
    """The ZIP of what the chosen shredders would remove, read in one snapshot."""
    chosen = _chosen(job)
    token = write_intent.set(False)  # SQLite: a read transaction, no writer waits for it
    try:
        async with job.db.sessionmaker() as session:
            if not job.db.is_sqlite:
                await session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            await _check_owner(session, job)
            names = (
                await session.execute(
                    select(Organizer.slug, Event.slug)
                    .join(Organizer, Organizer.id == Event.organizer_id)
                    .where(Event.id == job.event_id)
                )
            ).one_or_none()
            if names is None:
                raise JobFailed("The event no longer exists.")
            now = utcnow()
            run = ShredRun(session, job.store, job.organizer_id or 0, job.event_id or 0)
            async with job.result_file(_filename(*names, now), "application/zip") as handle:
                await write_archive(
                    handle, chosen, run, organizer=names[0], event=names[1], exported=now
                )
    finally:
        write_intent.reset(token)
    return None


@contextlib.asynccontextmanager
async def _transaction(job: JobContext) -> AsyncIterator[AsyncSession]:
    """One shred transaction. A lock conflict or deadlock makes the job run again shortly
    (what is done stays done). Not REPEATABLE READ: the heartbeat updates the job's row,
    which records the progress too, and would fail such a transaction."""
    try:
        async with job.db.sessionmaker() as session:
            yield session
    except DBAPIError as exc:
        if busy_error(exc) is not None:
            raise RetryLater("The event's data was busy; the shred runs again.", 2.0) from None
        raise


async def _record(session: AsyncSession, job: JobContext, progress: dict[str, Any]) -> None:
    """Writes the progress onto the job's own row in the shred's transaction; a job that is
    no longer this run's (its lease was lost) rolls the transaction back."""
    job.input = {**job.input, "progress": progress}
    result = await session.execute(
        update(Job).where(Job.id == job.id, Job.status == "running").values(input=job.input)
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        raise RetryLater("The job was taken over; its next run continues.", 1.0)


async def _verify(run: ShredRun, chosen: list[Shredder], manifest: dict[str, Any]) -> None:
    exported = manifest.get("shredders") or {}
    for shredder in chosen:
        expected = exported.get(shredder.identifier)
        if not isinstance(expected, dict):
            raise JobFailed(f"The export holds no data of {shredder.identifier!r}.")
        now = await digest_of(shredder, run)
        if now.records and now.hexdigest() != expected.get("sha256"):
            raise JobFailed(
                f"{shredder.verbose_name}: the data changed after the export was taken. "
                "Take a new export and shred that one."
            )


@job_kind(SHRED_KIND, max_attempts=3, keep_hours=STATUS_KEEP_HOURS)
async def shred_job(job: JobContext) -> str | None:
    chosen = _chosen(job)
    export_id = job.input.get("export")
    progress = dict(job.input.get("progress") or {})
    done: list[str] = list(progress.get("done") or [])
    async with job.db.sessionmaker() as session:
        export = (
            await session.execute(
                select(Job).where(
                    Job.id == export_id, Job.kind == EXPORT_KIND, Job.event_id == job.event_id
                )
            )
        ).scalar_one_or_none()
        if export is None:
            if set(done) >= {s.identifier for s in chosen}:
                return None  # an earlier run shredded everything and deleted the export
            raise JobFailed("The export no longer exists; take a new export.")
        if export.status != "finished" or not export.result_key:
            raise JobFailed("The export has no file; take a new export.")
        await _check_owner(session, job)
        export_key = export.result_key
    manifest: dict[str, Any] = {}
    if not progress.get("verified"):
        try:
            manifest = await read_manifest(job.store, export_key)
        except ArchiveUnreadable as exc:
            raise JobFailed(f"{exc} Take a new export.") from None

    for index, shredder in enumerate(chosen):
        if shredder.identifier in done:
            continue
        async with _transaction(job) as session:
            event = await session.get(Event, job.event_id)
            if event is None:
                raise JobFailed("The event no longer exists.")
            reason = await refusal(session, event)
            if reason:
                raise JobFailed(reason)
            run = ShredRun(session, job.store, event.organizer_id, event.id)
            if not progress.get("verified"):
                await _verify(run, chosen, manifest)
            await shredder.shred(run)
            done.append(shredder.identifier)
            progress = {"verified": True, "done": done}
            await _record(session, job, progress)
            for key in run.delete_keys:  # the export keeps a copy; none may outlive the rows
                with contextlib.suppress(ValueError):
                    await job.store.delete(key)
            await session.commit()
        await job.progress(100 * (index + 1) // (len(chosen) + 1))

    async with job.db.sessionmaker() as session:
        await job.store.delete(export_key)
        await session.execute(delete(Job).where(Job.id == export_id))
        await session.commit()
    return None
