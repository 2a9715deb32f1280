"""Ticket rendering as background jobs.

``tickets.render_batch`` draws the parts of a render request (one page per part, in the
request's order) for whoever asked, checking again at run time that they may still read the
event's orders. ``tickets.render`` draws the tickets of one order or position for the download
cache (:mod:`admit.tickets.downloads`); its file serves every caller with access, so it has no
owner check of its own.

Either job reads the data as it is when it runs. A layout that cannot be drawn, a background
or picture that cannot be read, a position that is gone: the job fails with a message saying
which (no retry would help), and only that job: other jobs draw their own layouts.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from sqlalchemy import select

from admit.auth.owners import current_principal, event_permission
from admit.jobs.queue import JobContext, JobFailed, job_kind
from admit.models import Event, Organizer
from admit.tickets.documents import MissingPositions, Part, plan, render_pages
from admit.tickets.errors import RenderError
from admit.tickets.loading import load_batch

BATCH_KIND = "tickets.render_batch"
DOWNLOAD_KIND = "tickets.render"
READ = "event.orders:read"
PDF = "application/pdf"
# Batch results are fetched right after the job; download files are a cache, kept longer.
BATCH_KEEP_HOURS = 24.0
DOWNLOAD_KEEP_HOURS = 24.0 * 7

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_filename(*parts: str, extension: str = "pdf") -> str:
    stem = "_".join(_UNSAFE.sub("-", p).strip("-") for p in parts if p)
    return f"{stem or 'tickets'}.{extension}"


def batch_filename(organizer: str, event: str) -> str:
    return safe_filename(
        organizer, event, "tickets", dt.datetime.now(dt.UTC).strftime("%Y%m%d%H%M%S")
    )


def part_input(part: Part) -> dict[str, Any]:
    return {
        "orderposition": part.position_id,
        "override_channel": part.override_channel,
        "override_layout": part.override_layout,
    }


def _parts(raw: Any) -> list[Part]:
    try:
        return [
            Part(
                int(p["orderposition"]),
                p.get("override_channel") or None,
                int(p["override_layout"]) if p.get("override_layout") is not None else None,
            )
            for p in raw
        ]
    except (TypeError, KeyError, ValueError):
        raise JobFailed("The job's input is not a list of parts.") from None


async def _render(job: JobContext, parts: list[Part], filename: str, *, owner: bool) -> str:
    if not parts:
        raise JobFailed("There is nothing to render.")
    async with job.db.sessionmaker() as session:
        event = await session.get(Event, job.event_id) if job.event_id else None
        if event is None:
            raise JobFailed("The event no longer exists.")
        if owner:
            principal = await current_principal(session, job.owner_kind, job.owner_id)
            if principal is None or not event_permission(
                principal, event.organizer_id, event.id, READ
            ):
                raise JobFailed("You no longer have permission to read this event's orders.")
        overrides = {p.override_layout for p in parts if p.override_layout is not None}
        batch = await load_batch(
            session, event, [p.position_id for p in parts], layout_ids=overrides
        )
        gone = sorted(overrides - batch.layouts.keys())
        if gone:
            raise JobFailed(f"Ticket layout {gone[0]} no longer exists.")
        try:
            pages = plan(batch, parts)
        except MissingPositions as exc:
            raise JobFailed(f"Order position {exc.ids[0]} no longer exists.") from None
        slug = await session.scalar(
            select(Organizer.slug).where(Organizer.id == event.organizer_id)
        )
    title = f"Tickets – {slug}/{event.slug}"
    # A single ticket takes a fraction of a second: progress only for batches.
    progress = job.progress if len(pages) > 1 else None
    if progress is not None:
        await progress(10)
    try:
        async with job.result_file(filename, PDF) as handle:
            count = await render_pages(
                job.store,
                batch,
                pages,
                handle,
                title=title,
                progress=progress,
                stopped=lambda: job.overtime,
            )
    except RenderError as exc:
        raise JobFailed(str(exc)) from None
    return f"{count} ticket(s) rendered."


# Seconds a render may take: a thousand tickets draw in well under a minute.
RENDER_TIME_LIMIT = 300.0


@job_kind(BATCH_KIND, max_attempts=2, keep_hours=BATCH_KEEP_HOURS, time_limit=RENDER_TIME_LIMIT)
async def render_batch_job(job: JobContext) -> str | None:
    """Input: ``{"parts": [{orderposition, override_channel, override_layout}], "filename"}``."""
    parts = _parts(job.input.get("parts"))
    filename = str(job.input.get("filename") or "tickets.pdf")
    return await _render(job, parts, filename, owner=True)


@job_kind(
    DOWNLOAD_KIND, max_attempts=2, keep_hours=DOWNLOAD_KEEP_HOURS, time_limit=RENDER_TIME_LIMIT
)
async def render_download_job(job: JobContext) -> str | None:
    """Input: ``{"target", "positions": [ids], "filename"}`` (see ``downloads.py``)."""
    raw = job.input.get("positions")
    parts = _parts([{"orderposition": p} for p in raw] if isinstance(raw, list) else None)
    filename = str(job.input.get("filename") or "tickets.pdf")
    return await _render(job, parts, filename, owner=False)
