"""The caller's own background jobs: status and result download (an Admit extension).

Exports, shredders and ticket rendering answer their own download URLs with the same
semantics (:mod:`admit.jobs.downloads`); these routes show any job the caller started.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path
from starlette.responses import Response

from admit.jobs.downloads import download, owned_job
from admit.jobs.schemas import JobOut
from admit.kit.http.context import OrganizerAccess, OrgContext, public_base_url
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.models import Job

router = api_router(tags=["jobs"])

PATH = "/organizers/{organizer}/jobs/{job}"
JobId = Annotated[str, Path(description="The job's id, as its status or 202 answer gave it.")]


def serialize(base: str, organizer: str, job: Job) -> dict:
    url = None
    if job.status == "finished" and job.result_key:
        url = f"{base}/api/v1/organizers/{organizer}/jobs/{job.uuid}/download/{job.secret}/"
    return JobOut(
        id=job.uuid,
        kind=job.kind,
        status=job.status,
        percentage=job.percentage,
        message=job.message,
        created=job.created,
        started=job.started,
        finished=job.finished,
        expires=job.expires,
        download=url,
    ).model_dump(mode="json")


@router.get(f"{PATH}/", response_model=JobOut)
async def job_status(
    ctx: Annotated[OrgContext, Depends(OrganizerAccess())], job: JobId
) -> JSONResponse:
    """Get a background job

    Answers the state of a job the caller started (an export, a ticket batch): waiting, running
    with a percentage, done with the download URL, or failed with a message. Another caller's
    job is 404.
    """
    row = await owned_job(ctx.session, job, ctx.principal, organizer_id=ctx.organizer_id)
    return JSONResponse(serialize(public_base_url(ctx.request), ctx.organizer_slug, row))


@router.get(
    f"{PATH}/download/{{secret}}/",
    response_class=Response,
    responses={
        200: {"description": "The file."},
        409: {"description": "Still waiting or running: `{status, percentage}`."},
        410: {"description": 'Failed: `{status: "failed", message}`.'},
        404: {"description": "Unknown, expired, or another caller's job."},
    },
)
async def job_download(
    ctx: Annotated[OrgContext, Depends(OrganizerAccess())],
    job: JobId,
    secret: Annotated[str, Path(description="The download URL's second part.")],
) -> Response:
    """Download a job's file

    Answers the file a finished job produced. 409 while it is still waiting or running, 410
    when it failed, 404 when it is unknown, expired or another caller's.
    """
    store = ctx.request.app.state.background.store
    return await download(
        ctx.session, store, ctx.principal, job, secret, organizer_id=ctx.organizer_id
    )
