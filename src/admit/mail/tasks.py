"""Delivering the outbox: the ``mail.send`` job, and the periodic task that gives mails held
while no SMTP server was configured (or whose job ended without an outcome) a new job.

A job may run more than once (a worker can die after any line), so it only sends a mail that
is still ``queued`` and still its own; the stable Message-ID lets a receiver recognise the
rare second delivery of a worker that died between sending and recording. Whatever a mail
holds, its failure is written to the mail and ends its job: it never stops other mails.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from email.message import EmailMessage
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import load_only

from admit.db import utcnow
from admit.jobs.queue import JobContext, JobFailed, RetryLater, enqueue, job_kind
from admit.jobs.scheduler import PeriodicTask, periodic
from admit.mail.message import BrokenMail, compose, sender_address, sender_name
from admit.mail.smtp import PermanentFailure, TemporaryFailure, deliver, parse_smtp_url
from admit.models import Job, OutgoingMail

if TYPE_CHECKING:
    from admit.config import Settings
    from admit.jobs.storage import FileStore


log = logging.getLogger("admit.mail")

SEND_KIND = "mail.send"
MAX_ATTEMPTS = 10
MAX_RETRY_SECONDS = 6 * 3600.0
REQUEUE_BATCH = 500
NO_SMTP = "No SMTP server is configured (ADMIT_SMTP_URL); the mail stays in the outbox."


async def enqueue_delivery(session: AsyncSession, mail: OutgoingMail) -> int:
    """A new ``mail.send`` job in the session's transaction, recorded as the mail's own."""
    job_id, _ = await enqueue(
        session,
        SEND_KIND,
        {"mail_id": mail.id},
        organizer_id=mail.organizer_id,
        event_id=mail.event_id,
    )
    mail.job_id = job_id
    return job_id


@job_kind(SEND_KIND, max_attempts=MAX_ATTEMPTS, keep_hours=24, time_limit=300)
async def send_mail(ctx: JobContext) -> str | None:
    """One attempt at one mail; the mail row records every outcome, so ``admit mail`` shows
    why a mail did not go out even after its job expired."""
    mail_id = ctx.input.get("mail_id")
    if not isinstance(mail_id, int) or isinstance(mail_id, bool):
        raise JobFailed("The job names no mail.")
    # Only reads: no transaction on PostgreSQL (``read_sessionmaker``), so no BEGIN and
    # ROLLBACK round trips around every mail at a rush.
    async with ctx.db.read_sessionmaker() as session:
        mail = await session.get(OutgoingMail, mail_id)
        if mail is None:
            return "The mail no longer exists."
        if mail.status != "queued":
            return f"The mail is {mail.status} already; it is not sent again."
        if mail.job_id is not None and mail.job_id != ctx.id:
            return f"Job {mail.job_id} delivers this mail now."
        if not ctx.settings.smtp_url:
            return NO_SMTP
        name = await sender_name(session, mail)
    # The session is closed: no database connection waits for the SMTP server.
    try:
        refused = await _attempt(ctx, mail, name)
    except PermanentFailure as exc:
        await _record(ctx, mail_id, status="failed", error=str(exc))
        raise JobFailed(str(exc)) from None
    except TemporaryFailure as exc:
        if ctx.attempt >= MAX_ATTEMPTS:
            await _record(ctx, mail_id, status="failed", error=str(exc))
            raise JobFailed(f"{exc} (no attempts left)") from None
        await _record(ctx, mail_id, status="queued", error=str(exc))
        delay = min(ctx.settings.mail_retry_seconds * 2 ** (ctx.attempt - 1), MAX_RETRY_SECONDS)
        raise RetryLater(str(exc), delay) from None
    refusals = "; ".join(f"{address}: {answer}" for address, answer in refused.items())
    error = f"Refused: {refusals}" if refused else None
    await _record(ctx, mail_id, status="sent", sent=utcnow(), error=error)
    count = len(mail.to) + len(mail.cc) + len(mail.bcc) - len(refused)
    return f"Sent to {count} recipient(s)." + (f" {error}" if error else "")


async def _attempt(ctx: JobContext, mail: OutgoingMail, name: str | None) -> dict[str, str]:
    """One delivery; every failure comes out as a TemporaryFailure or PermanentFailure."""
    try:
        server = parse_smtp_url(ctx.settings.smtp_url)
        address = sender_address(ctx.settings.mail_from)[1]
    except ValueError as exc:
        raise TemporaryFailure(str(exc)) from None  # fixable by an operator
    try:
        message: EmailMessage = await compose(
            mail, name=name, mail_from=ctx.settings.mail_from, store=ctx.store
        )
    except BrokenMail as exc:
        raise PermanentFailure(str(exc)) from None
    except Exception as exc:  # e.g. the file store unreachable
        log.exception("mail %s: could not be built", mail.id)
        raise TemporaryFailure(f"The mail could not be built ({type(exc).__name__}).") from None
    recipients = [*mail.to, *mail.cc, *mail.bcc]
    if not recipients:
        raise PermanentFailure("The mail has no recipients.")
    try:
        return await deliver(server, message, sender=address, recipients=recipients)
    except (TemporaryFailure, PermanentFailure):
        raise
    except Exception as exc:
        log.exception("mail %s: sending failed unexpectedly", mail.id)
        raise TemporaryFailure(f"Sending failed unexpectedly ({type(exc).__name__}).") from None


async def _record(ctx: JobContext, mail_id: int, **values: Any) -> None:
    """The outcome of one attempt, in a transaction of its own; a mail that left ``queued``
    meanwhile (another job's outcome) is not overwritten."""
    if values.get("error"):
        values["error"] = values["error"][:2000]
    async with ctx.db.sessionmaker() as session:
        await session.execute(
            update(OutgoingMail)
            .where(OutgoingMail.id == mail_id, OutgoingMail.status == "queued")
            .values(attempts=OutgoingMail.attempts + 1, **values)
        )
        await session.commit()


async def requeue_held_mails(session: AsyncSession, now: dt.datetime, *, settings: Any) -> int:
    """With an SMTP server configured, every queued mail whose job ended (or is gone) gets a
    new one: mails kept while there was no server go out once there is one."""
    if not settings.smtp_url:
        return 0
    active = (
        select(Job.id)
        .where(Job.id == OutgoingMail.job_id, Job.status.in_(("waiting", "running")))
        .exists()
    )
    held = (
        await session.scalars(
            select(OutgoingMail)
            .options(
                load_only(OutgoingMail.organizer_id, OutgoingMail.event_id, OutgoingMail.job_id)
            )
            .where(OutgoingMail.status == "queued", ~active)
            .order_by(OutgoingMail.id)
            .limit(REQUEUE_BATCH)
        )
    ).all()
    for mail in held:
        await enqueue_delivery(session, mail)
    if held:
        log.info("mail: %d held mail(s) handed to new jobs", len(held))
    return len(held)


@periodic
def _periodic_tasks(settings: Settings, store: FileStore) -> list[PeriodicTask]:
    return [
        PeriodicTask(
            "mail.requeue_held", 60, functools.partial(requeue_held_mails, settings=settings)
        )
    ]
