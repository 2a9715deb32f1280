"""Ticket downloads of an order or a position: rendered once per content, served from a cache.

``GET E/orders/{code}/download/pdf/`` and ``GET E/orderpositions/{id}/download/pdf/`` compute
the fingerprint of what the tickets print (:mod:`admit.tickets.documents`) and look for a
``ticket_files`` row of that target and fingerprint. None: this request queues a
``tickets.render`` job, records the row and answers 409 (retry after a second); the job
running or waiting: 409 with its progress; finished: 200 with the PDF. Any change to what the
tickets print gives a new fingerprint and so a new rendering; an unchanged ticket is rendered
once, whoever asks and however often.

Concurrent first requests create one job: the row is inserted with ``ON CONFLICT DO NOTHING``
on the unique ``(target, fingerprint)``, in the same transaction as the job, so a request that
loses the race rolls its job back and serves the winner's. A job that failed is answered 410
with its message for :data:`RETRY_FAILED_AFTER`, then rendered again; an expired or lost file
is rendered again at once.

Which tickets exist (else 404): not for canceled positions or orders, expired orders, orders
waiting for approval, or pending orders, unless the order is ``valid_if_pending`` (the event
has no setting for downloads of pending orders); not for products whose ``generate_tickets`` is
false. Products that leave it unset (null) follow the default: a ticket for every position
that is not an add-on (add-ons are printed on their main position's ticket, as ``addons``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response, StreamingResponse

from admit.db import utcnow, write_intent
from admit.jobs.downloads import content_disposition, owner_of
from admit.jobs.queue import enqueue
from admit.jobs.storage import StoredFileMissing
from admit.kit.http.context import EventContext
from admit.kit.http.errors import APIError
from admit.kit.http.responses import JSONResponse
from admit.kit.http.transaction import commit_and_notify
from admit.models import Job, TicketFile
from admit.tickets.documents import Part, fingerprint, plan
from admit.tickets.loading import Batch, PositionData, load_batch
from admit.tickets.tasks import DOWNLOAD_KIND

RETRY_FAILED_AFTER = dt.timedelta(minutes=5)


def no_ticket(reason: str) -> APIError:
    return APIError(404, reason)


def order_refusal(order: Any) -> str | None:
    """Why the order's tickets cannot be downloaded now, or None."""
    if order.status == "c":
        return "This order is canceled."
    if order.status == "e":
        return "This order is expired."
    if order.require_approval:
        return "This order has not been approved yet."
    if order.status == "n" and not order.valid_if_pending:
        return "This order is not paid yet."
    if order.status not in ("p", "n"):
        return "Tickets of this order are not available."
    return None


def generates_ticket(data: PositionData) -> bool:
    chosen = data.item.generate_tickets
    if chosen is not None:
        return bool(chosen)
    return data.position.addon_to_id is None


def position_refusal(data: PositionData) -> str | None:
    if data.position.canceled:
        return "This position is canceled."
    refusal = order_refusal(data.order)
    if refusal:
        return refusal
    if not generates_ticket(data):
        return "This product does not generate tickets."
    return None


async def _cached(session: AsyncSession, event_id: int, target: str, print_hash: str) -> Any:
    return (
        await session.execute(
            select(TicketFile.id, Job)
            .join(Job, Job.id == TicketFile.job_id)
            .where(
                TicketFile.event_id == event_id,
                TicketFile.target == target,
                TicketFile.fingerprint == print_hash,
            )
        )
    ).first()


def _stale(job: Job, now: dt.datetime) -> bool:
    if job.expires is not None and job.expires <= now:
        return True
    return job.status == "failed" and (job.finished or job.created) < now - RETRY_FAILED_AFTER


def _waiting(status: str, percentage: int | None) -> Response:
    return JSONResponse(
        {"status": status, "percentage": percentage},
        status_code=409,
        headers={"Retry-After": "1"},
    )


async def _start(
    ctx: EventContext,
    target: str,
    print_hash: str,
    position_ids: Sequence[int],
    filename: str,
    replace: int | None,
) -> bool:
    """Queues the rendering and records it; False when a concurrent request did first."""
    db = ctx.request.app.state.db
    token = write_intent.set(True)  # SQLite: this GET writes, so it takes the write lock first
    try:
        async with db.sessionmaker() as session:
            if replace is not None:
                await session.execute(delete(TicketFile).where(TicketFile.id == replace))
            job_id, _ = await enqueue(
                session,
                DOWNLOAD_KIND,
                {"target": target, "positions": list(position_ids), "filename": filename},
                organizer_id=ctx.organizer_id,
                event_id=ctx.event.id,
                owner=owner_of(ctx.principal),
            )
            insert = postgresql.insert if db.engine.dialect.name == "postgresql" else sqlite.insert
            row = (
                await session.execute(
                    insert(TicketFile)
                    .values(
                        event_id=ctx.event.id,
                        target=target,
                        fingerprint=print_hash,
                        job_id=job_id,
                        created=utcnow(),
                    )
                    .on_conflict_do_nothing(index_elements=["target", "fingerprint"])
                    .returning(TicketFile.id)
                )
            ).first()
            if row is None:  # the other request's job renders it: ours goes with the rollback
                await session.rollback()
                return False
            await commit_and_notify(session)
            return True
    finally:
        write_intent.reset(token)


async def _stream(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if first:
        yield first
    async for chunk in rest:
        yield chunk


async def _file(ctx: EventContext, job: Job) -> Response | None:
    """The finished job's PDF; None when its file is gone from the store."""
    if not job.result_key:
        return None
    chunks = ctx.request.app.state.background.store.open(job.result_key)
    try:
        first = await anext(chunks)
    except StoredFileMissing:
        return None
    except StopAsyncIteration:
        first = b""
    headers = {"Content-Disposition": content_disposition(job.result_name or "tickets.pdf")}
    if job.result_size is not None:
        headers["Content-Length"] = str(job.result_size)
    return StreamingResponse(
        _stream(first, chunks), media_type=job.result_type or "application/pdf", headers=headers
    )


async def serve_tickets(
    ctx: EventContext, target: str, batch: Batch, position_ids: Sequence[int], filename: str
) -> Response:
    """The cached PDF of ``position_ids`` (in that order), or 409 while it is rendered."""
    pages = plan(batch, [Part(pid) for pid in position_ids])
    print_hash = fingerprint(batch, pages)
    for _attempt in range(3):
        found = await _cached(ctx.session, ctx.event.id, target, print_hash)
        replace = None
        if found is not None:
            row_id, job = found
            if not _stale(job, utcnow()):
                if job.status in ("waiting", "running"):
                    return _waiting(job.status, job.percentage)
                if job.status == "failed":
                    body = {"status": "failed", "message": job.message or "Rendering failed."}
                    return JSONResponse(body, status_code=410)
                response = await _file(ctx, job)
                if response is not None:
                    return response
            replace = row_id
        # Nothing of the read transaction is needed any more; SQLite's reader must not hold
        # a snapshot while this request writes.
        await ctx.session.rollback()
        if await _start(ctx, target, print_hash, position_ids, filename, replace):
            return _waiting("waiting", None)
    return _waiting("waiting", None)


async def tickets_of(ctx: EventContext, position_ids: Sequence[int]) -> Batch:
    return await load_batch(ctx.session, ctx.event, position_ids)
