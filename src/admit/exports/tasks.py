"""Running an exporter as a background job, with its owner's permissions at run time.

``export.run`` is the job a run request enqueues; scheduled exports call :func:`run_export`
from their own job kind and mail the file afterwards. Either way the owner's credential is
looked up again when the job starts: an owner that lost access (a deactivated token, a team
without the orders permission, an event taken out of its team) gets a failed job with a
message, never the data.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from sqlalchemy import select

from admit.auth.owners import current_principal, event_permission, organizer_permission
from admit.db import write_intent
from admit.exports.base import EVENT, ORGANIZER, Exporter, ExportRun
from admit.exports.lookup import find
from admit.jobs.queue import JobContext, JobFailed, job_kind
from admit.models import Event, Organizer

EXPORT_KIND = "export.run"
# Results are large and fetched soon after: kept a day, as the reference keeps them.
KEEP_HOURS = 24.0


def export_input(
    *,
    level: str,
    identifier: str,
    organizer_id: int,
    event_id: int | None,
    form_data: dict[str, Any],
    locale: str,
) -> dict[str, Any]:
    """The job input :func:`run_export` reads (``export.run`` jobs store exactly this)."""
    return {
        "level": level,
        "identifier": identifier,
        "organizer_id": organizer_id,
        "event_id": event_id,
        "form_data": form_data,
        "locale": locale,
    }


def permitted_event_ids(
    principal: Any, organizer_id: int, candidates: list[int], permission: str
) -> list[int]:
    if permission.startswith("organizer."):
        return candidates if organizer_permission(principal, organizer_id, permission) else []
    return [e for e in candidates if event_permission(principal, organizer_id, e, permission)]


async def run_export(job: JobContext, spec: dict[str, Any], owner: tuple[str, int]) -> None:
    """Runs the exporter ``spec`` names (as built by :func:`export_input`) for ``owner``;
    the file becomes the job's result. Raises ``JobFailed`` with a message for the owner."""
    level, identifier = spec["level"], spec["identifier"]
    exporter = find(level, identifier)
    if exporter is None:
        raise JobFailed(f"The exporter {identifier!r} does not exist (any more).")
    try:
        params = exporter.Input.model_validate(spec.get("form_data") or {})
    except ValidationError as exc:
        raise JobFailed(
            f"The export's input is no longer valid: {exc.errors()[0]['msg']}"
        ) from None
    organizer_id = int(spec["organizer_id"])
    # An export only reads. On SQLite its session then begins a deferred (read) transaction
    # instead of taking the write lock for the whole run, which would hold up the job's own
    # progress and heartbeat writes (and every other writer) until it ends.
    token = write_intent.set(False)
    try:
        await _run(job, spec, owner, exporter, params, organizer_id)
    finally:
        write_intent.reset(token)
    if not job.result:
        raise JobFailed("The export produced no file.")


async def _run(
    job: JobContext,
    spec: dict[str, Any],
    owner: tuple[str, int],
    exporter: Exporter,
    params: Any,
    organizer_id: int,
) -> None:
    """The owner's permissions as they are now, then the exporter, in one read snapshot."""
    level = spec["level"]
    async with job.db.sessionmaker() as session:
        if not job.db.is_sqlite:
            # One snapshot for the whole file: chunks read later see what the first saw.
            await session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
        principal = await current_principal(session, *owner)
        if principal is None:
            raise JobFailed("The credential that asked for this export is no longer valid.")
        slug = await session.scalar(select(Organizer.slug).where(Organizer.id == organizer_id))
        if slug is None:
            raise JobFailed("The organizer no longer exists.")
        if level == EVENT:
            candidates = [int(spec["event_id"])]
        else:
            assert level == ORGANIZER
            wanted = getattr(params, "events", None)
            query = select(Event.id).where(Event.organizer_id == organizer_id).order_by(Event.id)
            if wanted:
                query = query.where(Event.slug.in_(list(wanted)))
            candidates = list((await session.scalars(query)).all())
        event_ids = permitted_event_ids(principal, organizer_id, candidates, exporter.permission)
        if level == EVENT and not event_ids:
            raise JobFailed("You no longer have permission to export this event's data.")
        if level == ORGANIZER and candidates and not event_ids:
            raise JobFailed("You no longer have permission to export the data of these events.")
        run = ExportRun(
            job=job,
            session=session,
            exporter=exporter,
            organizer_id=organizer_id,
            organizer_slug=slug,
            event_ids=event_ids,
            params=params,
            locale=str(spec.get("locale") or "en"),
            principal=principal,
        )
        await exporter.export(run)


@job_kind(EXPORT_KIND, max_attempts=2, keep_hours=KEEP_HOURS, time_limit=1800)
async def export_job(job: JobContext) -> str | None:
    if job.owner_kind is None or job.owner_id is None:
        raise JobFailed("The export has no owner.")
    await run_export(job, job.input, (job.owner_kind, job.owner_id))
    return None
