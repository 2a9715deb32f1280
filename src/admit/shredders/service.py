"""The rules of shredding, without HTTP: when it is allowed, starting the export and the shred,
and what a shred's status is.

Shredding is refused while the ticket shop is live or the event is not over yet (for a series:
its last date, the latest ``date_to`` or ``date_from`` of its dates), as the reference does;
there is no waiting period after the end. The refusal is checked when the export is asked for,
when the shred is asked for, and again in every transaction of the shred job.

A shred is a job whose id is derived from its export's: two requests to shred one export can
only ever insert one job (``INSERT … ON CONFLICT DO NOTHING`` on the unique id), so concurrent
requests start one shred, and the loser answers 409. A shred that failed gives way to a new
one for the same export (e.g. after taking the shop offline again).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.jobs.downloads import owned_job, owner_of
from admit.jobs.queue import enqueue, kick_after_commit, new_job_values
from admit.jobs.storage import FileStore
from admit.kit.http.context import Principal
from admit.kit.http.errors import APIError, FieldErrors, not_found
from admit.models import Event, Job, SubEvent
from admit.shredders.lookup import find

EXPORT_KIND = "shred.export"
SHRED_KIND = "shred.run"
PERMISSION = "event.orders:write"
# The export waits a day for its shred (and for its download); a shred's status an hour.
EXPORT_KEEP_HOURS = 24.0
STATUS_KEEP_HOURS = 1.0

NOT_OVER = (
    "The event is not over yet (its last date is {end}): data can only be shredded once it is."
)
LIVE = "The ticket shop is live: take it offline before shredding data."


async def last_date(session: AsyncSession, event: Event) -> dt.datetime:
    """When the event ends: for a series the latest date of any of its dates (falling back to
    the series' own dates when it has none), else ``date_to`` or ``date_from``."""
    if event.has_subevents:
        latest = (
            await session.execute(
                select(func.max(SubEvent.date_from), func.max(SubEvent.date_to)).where(
                    SubEvent.event_id == event.id
                )
            )
        ).one()
        dates = [d for d in latest if d is not None]
        if dates:
            return max(dates)
    return event.date_to or event.date_from


async def refusal(
    session: AsyncSession, event: Event, now: dt.datetime | None = None
) -> str | None:
    """Why the event's data may not be shredded now (every reason), or None."""
    reasons = []
    end = await last_date(session, event)
    if end >= (now or utcnow()):
        reasons.append(NOT_OVER.format(end=end.isoformat()))
    if event.live:
        reasons.append(LIVE)
    return " ".join(reasons) or None


def check_identifiers(body: dict[str, Any]) -> list[str]:
    """The ``shredders`` of an export request: a non-empty list of known identifiers, each
    once; else a 400 naming every problem."""
    raw = body.get("shredders")
    if raw is None:
        message = "This field is required." if "shredders" not in body else None
        raise FieldErrors.single("shredders", message or "This field may not be null.")
    if not isinstance(raw, list):
        kind = type(raw).__name__
        raise FieldErrors.single("shredders", f'Expected a list of items but got type "{kind}".')
    if not raw:
        raise FieldErrors.single("shredders", "This list may not be empty.")
    errors: list[str] = []
    seen: set[str] = set()
    for value in raw:
        if not isinstance(value, str):
            errors.append("Not a valid string.")
            continue
        if find(value) is None:
            errors.append(f'"{value[:100]}" is not a valid choice.')
        elif value in seen:
            errors.append(f'"{value}" was given more than once.')
        seen.add(value)
    if errors:
        raise FieldErrors({"shredders": errors})
    return list(raw)


async def start_export(
    session: AsyncSession, principal: Principal, event: Event, identifiers: Sequence[str]
) -> tuple[str, str]:
    """Refuses with 400 when the event's data may not be shredded; else enqueues the export
    and returns its uuid and secret (the two halves of its URLs)."""
    reason = await refusal(session, event)
    if reason:
        raise FieldErrors.general(reason)
    job_id, uuid = await enqueue(
        session,
        EXPORT_KIND,
        {"shredders": list(identifiers)},
        organizer_id=event.organizer_id,
        event_id=event.id,
        owner=owner_of(principal),
    )
    secret = await session.scalar(select(Job.secret).where(Job.id == job_id))
    assert secret is not None
    return uuid, secret


def shred_uuid(export_uuid: str) -> str:
    """The shred job's id, derived from its export's: one shred per export, by the unique
    index on job ids (unguessable because the export's id is)."""
    return hashlib.sha256(f"shred:{export_uuid}".encode()).hexdigest()[:32]


async def insert_shred(session: AsyncSession, values: dict[str, Any]) -> Any:
    """Inserts the shred job unless one with its id exists (or is being inserted by a
    concurrent transaction, which this one then waits for): its ``(id, secret)``, or None."""
    dialect = session.bind.dialect.name  # type: ignore[union-attr]
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = (
        insert(Job).on_conflict_do_nothing(index_elements=[Job.uuid]).returning(Job.id, Job.secret)
    )
    return (await session.execute(statement, values)).one_or_none()


async def find_export(
    session: AsyncSession, principal: Principal, event: Event, uuid: str, secret: str
) -> Job:
    """The caller's own export of this event; 404 for anything else."""
    export = await owned_job(
        session,
        uuid,
        principal,
        organizer_id=event.organizer_id,
        event_id=event.id,
        kinds={EXPORT_KIND},
    )
    if not hmac.compare_digest(export.secret.encode(), secret.encode()[:128]):
        raise not_found()
    return export


async def start_shred(
    session: AsyncSession,
    store: FileStore,
    principal: Principal,
    event: Event,
    export_uuid: str,
    secret: str,
) -> tuple[str, str]:
    """Enqueues the shred of a finished export; returns the shred's uuid and secret.

    404 unknown export (or another caller's, or a wrong secret, or one already shredded);
    400 the event's data may not be shredded now; 409 the export is still waiting or running,
    or this export's shred has started already; 410 the export failed."""
    export = await find_export(session, principal, event, export_uuid, secret)
    reason = await refusal(session, event)
    if reason:
        raise FieldErrors.general(reason)
    if export.status in ("waiting", "running"):
        raise APIError(
            409,
            "The export is not ready yet.",
            headers={"Retry-After": "1"},
            extra={"status": export.status, "percentage": export.percentage},
        )
    if export.status == "failed":
        raise APIError(
            410,
            "The export failed.",
            extra={"status": "failed", "message": export.message or "The job failed."},
        )
    if not export.result_key or await store.size(export.result_key) is None:
        raise not_found()
    uuid = shred_uuid(export.uuid)
    # A failed shred of this export gives way to a new one.
    await session.execute(
        delete(Job).where(Job.uuid == uuid, Job.kind == SHRED_KIND, Job.status == "failed")
    )
    values = new_job_values(
        SHRED_KIND,
        {"export": export.id, "shredders": list(export.input.get("shredders") or [])},
        organizer_id=event.organizer_id,
        event_id=event.id,
        owner=owner_of(principal),
    )
    values["uuid"] = uuid
    row = await insert_shred(session, values)
    if row is None:
        status = await session.scalar(select(Job.status).where(Job.uuid == uuid))
        raise APIError(
            409,
            "Shredding of this export has already started; its status URL tells how it goes.",
            extra={"status": status or "running"},
        )
    kick_after_commit(session, row.id)
    # The export outlives its shred (whose last step deletes it).
    keep = utcnow() + dt.timedelta(hours=EXPORT_KEEP_HOURS)
    if export.expires is None or export.expires < keep:
        export.expires = keep
    return uuid, row.secret


async def shred_status(
    session: AsyncSession, principal: Principal, event: Event, uuid: str, secret: str
) -> Job | None:
    """The caller's shred job, or None when unknown, expired (after about an hour),
    another caller's, or the secret is wrong: all one answer, 410."""
    if not (0 < len(uuid) <= 32):
        return None
    job = (
        await session.execute(
            select(Job).where(
                Job.uuid == uuid,
                Job.kind == SHRED_KIND,
                Job.organizer_id == event.organizer_id,
                Job.event_id == event.id,
            )
        )
    ).scalar_one_or_none()
    if (
        job is None
        or (job.owner_kind, job.owner_id) != owner_of(principal)
        or (job.expires is not None and job.expires <= utcnow())
        or not hmac.compare_digest(job.secret.encode(), secret.encode()[:128])
    ):
        return None
    return job
