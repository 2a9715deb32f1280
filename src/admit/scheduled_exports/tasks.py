"""Running scheduled exports: the periodic task that starts due ones, and the job that runs the
exporter and mails the file.

``scheduled_exports.start_due`` (every minute) looks for exports whose ``schedule_next_run``
has come, that failed fewer than :data:`MAX_FAILURES` times in a row and have no run under way
(``job_id`` empty or its job ended). Each is claimed in a transaction of its own: a
``scheduled_export.run`` job is inserted and the export moved to it and to its following run
by one conditional UPDATE that only matches the state read before. Of two schedulers (or
processes) claiming the same export at once, the second matches nothing and rolls back its
job, so an export runs once per due time. A scheduler that was down runs a missed export
once, not once per missed day.

The job runs the exporter with the owner's permissions at run time
(:func:`admit.exports.tasks.run_export`) and queues one mail with the file attached, to the
owner and ``mail_additional_recipients`` (cc and bcc as given). The mail, the reset of
``error_counter`` and the job's record that it mailed are one transaction, conditional on the
job still being this run's: a re-run of the job (a worker stopped) finds the record and does
not mail again, and a worker that lost its job mails nothing. A failure (the exporter's
refusal, the owner without permission, an error on the last attempt) adds one to
``error_counter`` once per job; a worker that died on the last attempt is counted when the
next run is claimed. At :data:`MAX_FAILURES` the export no longer runs: ``schedule_next_run``
keeps the next due time, and any change through the API resets the counter and starts it
again.

The file is the job's result and lives as long as the job (:data:`KEEP_HOURS`): longer than
mail delivery retries take (10 attempts, hours at most), so the attachment is there when the
mail goes out; a mail held that long without an SMTP server fails with a message instead.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.exports.base import EVENT, ORGANIZER
from admit.exports.tasks import export_input, run_export
from admit.jobs.queue import JobContext, JobFailed, enqueue, job_kind
from admit.jobs.scheduler import PeriodicTask, periodic
from admit.kit.http.transaction import commit_and_notify
from admit.mail.outbox import queue_mail
from admit.models import Event, Job, ScheduledExport, User
from admit.scheduled_exports.schemas import split_recipients
from admit.scheduled_exports.service import compute_next_run

if TYPE_CHECKING:
    from admit.config import Settings
    from admit.jobs.storage import FileStore


log = logging.getLogger("admit.scheduled_exports")

RUN_KIND = "scheduled_export.run"
INTERVAL_SECONDS = 60
MAX_FAILURES = 5
MAX_ATTEMPTS = 2
KEEP_HOURS = 7 * 24.0
BATCH = 200  # exports started per run at most; the rest a minute later
ACTIVE = ("waiting", "running")

_html = Environment(
    loader=PackageLoader("admit.mail", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_BODY = _html.from_string(
    '{% extends "layout.html" %}{% block content %}'
    "{% for paragraph in paragraphs %}<p>"
    "{% for line in paragraph %}{{ line }}{% if not loop.last %}<br>{% endif %}{% endfor %}"
    "</p>\n{% endfor %}{% endblock %}"
)


# -- the scheduler side ------------------------------------------------------------------------


async def start_due(session: AsyncSession, now: dt.datetime | None = None) -> list[int]:
    """Starts a run of every export due at ``now``; returns the ids of the jobs started."""
    now = now or utcnow()
    active = select(Job.id).where(Job.id == ScheduledExport.job_id, Job.status.in_(ACTIVE))
    due = list(
        await session.scalars(
            select(ScheduledExport.id)
            .where(
                ScheduledExport.schedule_next_run <= now,
                ScheduledExport.error_counter < MAX_FAILURES,
                ~active.exists(),
            )
            .order_by(ScheduledExport.schedule_next_run, ScheduledExport.id)
            .limit(BATCH)
        )
    )
    await session.rollback()  # read only so far: each claim is a transaction of its own
    started = []
    for export_id in due:
        try:
            job_id = await claim(session, export_id, now)
            await commit_and_notify(session)
        except Exception:
            await session.rollback()
            session.info.pop("after_commit", None)
            log.exception("scheduled export %s: could not be started", export_id)
            continue
        if job_id is not None:
            started.append(job_id)
    return started


async def claim(session: AsyncSession, export_id: int, now: dt.datetime) -> int | None:
    """Starts one run of the export if it is due and nobody else started it; the caller
    commits. Returns the new job's id."""
    export = await session.get(ScheduledExport, export_id, populate_existing=True)
    if export is None or export.schedule_next_run is None or export.schedule_next_run > now:
        return None
    counter = export.error_counter
    if export.job_id is not None:
        previous = await session.get(Job, export.job_id, populate_existing=True)
        if previous is not None and previous.status in ACTIVE:
            return None
        if previous is not None and previous.status == "failed":
            if not (previous.input or {}).get("outcome"):
                counter += 1  # its worker died on the last attempt: a failure not yet counted
    if counter >= MAX_FAILURES:
        await _move(session, export, error_counter=counter)
        return None
    zone_name = export.timezone
    if export.event_id is not None:
        zone_name = await session.scalar(select(Event.timezone).where(Event.id == export.event_id))
    following = compute_next_run(export.schedule_rrule, export.schedule_rrule_time, zone_name, now)
    job_id, _ = await enqueue(
        session,
        RUN_KIND,
        {"export_id": export.id},
        organizer_id=export.organizer_id,
        event_id=export.event_id,
        owner=("user", export.owner_id),
    )
    moved = await _move(
        session, export, job_id=job_id, schedule_next_run=following, error_counter=counter
    )
    if not moved:
        await session.rollback()  # someone else started it (or changed it) meanwhile
        session.info.pop("after_commit", None)
        return None
    return job_id


async def _move(session: AsyncSession, export: ScheduledExport, **values: Any) -> bool:
    """One conditional UPDATE: only the state read before is moved on."""
    seen_job = (
        ScheduledExport.job_id.is_(None)
        if export.job_id is None
        else ScheduledExport.job_id == export.job_id
    )
    result = await session.execute(
        update(ScheduledExport)
        .where(
            ScheduledExport.id == export.id,
            ScheduledExport.schedule_next_run == export.schedule_next_run,
            ScheduledExport.error_counter == export.error_counter,
            seen_job,
        )
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1  # type: ignore[attr-defined]


# -- the job -----------------------------------------------------------------------------------


@job_kind(RUN_KIND, max_attempts=MAX_ATTEMPTS, keep_hours=KEEP_HOURS)
async def run_scheduled_export(job: JobContext) -> str | None:
    export_id = job.input.get("export_id")
    if not isinstance(export_id, int) or isinstance(export_id, bool):
        raise JobFailed("The job names no scheduled export.")
    outcome = job.input.get("outcome")
    if outcome == "mailed":
        await _keep_file(job)
        return f"Mailed already (mail {job.input.get('mail_id')})."
    if outcome == "failed":
        raise JobFailed(str(job.input.get("message") or "The scheduled export failed."))
    async with job.db.sessionmaker() as session:
        export = await session.get(ScheduledExport, export_id)
        if export is None:
            return "The scheduled export no longer exists."
        spec = export_input(
            level=EVENT if export.event_id is not None else ORGANIZER,
            identifier=export.export_identifier,
            organizer_id=export.organizer_id,
            event_id=export.event_id,
            form_data=dict(export.export_form_data or {}),
            locale=export.locale,
        )
        owner = ("user", export.owner_id)
    try:
        await run_export(job, spec, owner)
    except JobFailed as exc:
        await _record_failure(job, export_id, str(exc))
        raise
    except Exception:
        if job.attempt >= MAX_ATTEMPTS:
            await _record_failure(job, export_id, "The export failed unexpectedly.")
        raise
    return await _mail(job, export_id)


async def _mail(job: JobContext, export_id: int) -> str:
    """Queues the mail, resets the counter and records both on the job, in one transaction."""
    async with job.db.sessionmaker() as session:
        export = await session.get(ScheduledExport, export_id)
        if export is None:
            return "The scheduled export was deleted while it ran; nothing was mailed."
        owner = await session.scalar(select(User.email).where(User.id == export.owner_id))
        if not owner:
            raise JobFailed("The owner of the scheduled export no longer exists.")
        to = _unique([owner, *split_recipients(export.mail_additional_recipients)])
        cc = _unique(split_recipients(export.mail_additional_recipients_cc), skip=to)
        bcc = _unique(split_recipients(export.mail_additional_recipients_bcc), skip=[*to, *cc])
        subject = " ".join(export.mail_subject.split())
        text = export.mail_template.replace("\r\n", "\n")
        paragraphs = [block.splitlines() for block in text.split("\n\n")]
        file = {"key": job.result["key"], "name": job.result["name"], "type": job.result["type"]}
        mail = await queue_mail(
            session,
            to=to,
            cc=cc,
            bcc=bcc,
            subject=subject[:998],
            body=text,
            html=_BODY.render(subject=subject, paragraphs=[p for p in paragraphs if p]),
            attachments=[
                {"key": file["key"], "filename": file["name"], "content_type": file["type"]}
            ],
            organizer_id=export.organizer_id,
            event_id=export.event_id,
        )
        record = {**job.input, "outcome": "mailed", "mail_id": mail.id, "file": file}
        if not await _record(session, job, record):
            await session.rollback()
            session.info.pop("after_commit", None)
            return "This run lost its job to another worker; it mailed nothing."
        await session.execute(
            update(ScheduledExport)
            .where(ScheduledExport.id == export_id)
            .values(error_counter=0)
            .execution_options(synchronize_session=False)
        )
        await commit_and_notify(session)
    recipients = len(to) + len(cc) + len(bcc)
    return f"Mailed {file['name']} to {recipients} recipient(s) (mail {mail.id})."


async def _record_failure(job: JobContext, export_id: int, message: str) -> None:
    """One more consecutive failure, counted once per job."""
    async with job.db.sessionmaker() as session:
        record = {**job.input, "outcome": "failed", "message": message}
        if not await _record(session, job, record):
            await session.rollback()
            return
        await session.execute(
            update(ScheduledExport)
            .where(ScheduledExport.id == export_id, ScheduledExport.job_id == job.id)
            .values(error_counter=ScheduledExport.error_counter + 1)
            .execution_options(synchronize_session=False)
        )
        await session.commit()
    log.warning("scheduled export %s: run failed (job %s): %s", export_id, job.id, message)


async def _record(session: AsyncSession, job: JobContext, record: dict[str, Any]) -> bool:
    """Writes the outcome into the job's input, if the job is still this run's (running, and
    not claimed again since); the re-run of a job reads it there."""
    result = await session.execute(
        update(Job)
        .where(Job.id == job.id, Job.status == "running", Job.attempts == job.attempt)
        .values(input=record)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1  # type: ignore[attr-defined]


async def _keep_file(job: JobContext) -> None:
    """A re-run after the mail went out: the file stays the job's result (deleted with it)."""
    file = job.input.get("file") or {}
    key = file.get("key")
    if key and await job.store.size(key) is not None:
        job.result.update(key=key, name=file.get("name"), type=file.get("type"))


def _unique(addresses: Sequence[str], skip: Sequence[str] = ()) -> list[str]:
    """The addresses once each (case-insensitively), leaving out those in ``skip``."""
    seen = {a.lower() for a in skip}
    found = []
    for address in addresses:
        if address.lower() not in seen:
            seen.add(address.lower())
            found.append(address)
    return found


@periodic
def _periodic_tasks(settings: Settings, store: FileStore) -> list[PeriodicTask]:
    return [PeriodicTask("scheduled_exports.start_due", 60, start_due)]
