"""Download results of background jobs, the one way exports, shredders and tickets answer.

200 with the file (streamed, its type and name), 409 ``{status, percentage}`` while it is
waiting or running (retry after a second), 410 ``{status: "failed", message}`` when it failed
for good, 404 for an unknown or expired job, a wrong secret, or another caller's job. A
download URL carries two opaque values (the job's uuid and its secret); neither alone fetches
anything, and a wrong one is indistinguishable from a missing job.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Collection
from urllib.parse import quote

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response, StreamingResponse

from admit.db import utcnow
from admit.jobs.storage import FileStore, StoredFileMissing
from admit.kit.http.context import Principal
from admit.kit.http.errors import APIError, not_found
from admit.kit.http.responses import JSONResponse
from admit.models import Job


def owner_of(principal: Principal) -> tuple[str, int]:
    """How a job records who asked for it (results go to that caller only)."""
    return principal.kind, principal.id


async def owned_job(
    session: AsyncSession,
    job_uuid: str,
    principal: Principal,
    *,
    organizer_id: int,
    event_id: int | None = None,
    kinds: Collection[str] | None = None,
) -> Job:
    """The caller's own job of this organizer (and event), not expired; else 404."""
    if not (0 < len(job_uuid) <= 32):
        raise not_found()
    query = select(Job).where(Job.uuid == job_uuid, Job.organizer_id == organizer_id)
    if event_id is not None:
        query = query.where(Job.event_id == event_id)
    job = (await session.execute(query)).scalar_one_or_none()
    if (
        job is None
        or (kinds is not None and job.kind not in kinds)
        or (job.owner_kind, job.owner_id) != owner_of(principal)
        or (job.expires is not None and job.expires <= utcnow())
    ):
        raise not_found()
    return job


async def download(
    session: AsyncSession,
    store: FileStore,
    principal: Principal,
    job_uuid: str,
    secret: str,
    *,
    organizer_id: int,
    event_id: int | None = None,
    kinds: Collection[str] | None = None,
) -> Response:
    job = await owned_job(
        session, job_uuid, principal, organizer_id=organizer_id, event_id=event_id, kinds=kinds
    )
    if not hmac.compare_digest(job.secret.encode(), secret.encode()[:128]):
        raise not_found()
    if job.status in ("waiting", "running"):
        return JSONResponse(
            {"status": job.status, "percentage": job.percentage},
            status_code=409,
            headers={"Retry-After": "1"},
        )
    if job.status == "failed":
        return JSONResponse(
            {"status": "failed", "message": job.message or "The job failed."}, status_code=410
        )
    if not job.result_key:
        raise APIError(404, "This job has no file to download.")
    chunks = store.open(job.result_key)
    try:
        first = await anext(chunks)
    except StoredFileMissing:
        raise not_found() from None
    except StopAsyncIteration:
        first = b""
    headers = {"Content-Disposition": content_disposition(job.result_name or "download")}
    if job.result_size is not None:
        headers["Content-Length"] = str(job.result_size)
    return StreamingResponse(
        _prepend(first, chunks),
        media_type=job.result_type or "application/octet-stream",
        headers=headers,
    )


async def _prepend(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if first:
        yield first
    async for chunk in rest:
        yield chunk


def content_disposition(filename: str) -> str:
    """``attachment`` with an ASCII fallback name and the exact UTF-8 one (RFC 6266)."""
    ascii_name = (
        "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in filename)
        or "download"
    )
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename, safe='')}"
