"""``E/shredders/``: descriptors, the export, its download, the shred and its status.

Every route needs ``event.orders:write`` on the event: shredding changes orders for good, and
the export holds all of their personal data, so reading it takes the same right (a device,
which only reads orders and checks in, gets none of it).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path
from starlette.responses import Response

from admit.jobs.downloads import download
from admit.kit.http.body import read_object
from admit.kit.http.context import EventAccess, EventContext, public_base_url
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import Page
from admit.kit.resources.pagination import paginate_list
from admit.shredders import service
from admit.shredders.lookup import shredders
from admit.shredders.schemas import (
    ShredderOut,
    ShredExportIn,
    ShredExportOut,
    ShredStartedOut,
    ShredStatusOut,
)

router = api_router(tags=["shredders"])

PATH = "/organizers/{organizer}/events/{event}/shredders"
Access = Annotated[EventContext, Depends(EventAccess(service.PERMISSION))]
Id1 = Annotated[str, Path(description="The first opaque value of the URL you were given.")]
Id2 = Annotated[str, Path(description="The second opaque value of the URL you were given.")]


def _url(ctx: EventContext, action: str, first: str, second: str) -> str:
    base = public_base_url(ctx.request)
    return (
        f"{base}/api/v1/organizers/{ctx.organizer_slug}/events/{ctx.event.slug}"
        f"/shredders/{action}/{first}/{second}/"
    )


@router.get(f"{PATH}/", response_model=Page[ShredderOut])
async def list_shredders(ctx: Access) -> Response:
    """The shredders of this event, in identifier order; query ``page``."""
    return JSONResponse(paginate_list(ctx.request, [s.descriptor() for s in shredders()]))


@router.post(
    f"{PATH}/export/",
    status_code=202,
    response_model=ShredExportOut,
    openapi_extra=json_body(ShredExportIn),
    responses={400: {"description": "Bad `shredders`, or the event is live or not over."}},
)
async def export(ctx: Access) -> Response:
    """Export the data to be shredded

    Starts the export of the data the chosen shredders would remove (a ZIP with a folder
    per shredder). 400 while the shop is live or the event is not over yet."""
    identifiers = service.check_identifiers(await read_object(ctx.request))
    uuid, secret = await service.start_export(ctx.session, ctx.principal, ctx.event, identifiers)
    body = {
        "download": _url(ctx, "download", uuid, secret),
        "shred": _url(ctx, "shred", uuid, secret),
    }
    return JSONResponse(body, status_code=202)


@router.get(
    f"{PATH}/download/{{id1}}/{{id2}}/",
    response_class=Response,
    responses={
        200: {"description": "The ZIP."},
        409: {"description": "Still waiting or running: `{status, percentage}`."},
        410: {"description": 'Failed: `{status: "failed", message}`.'},
        404: {"description": "Unknown, expired, shredded, or another caller's export."},
    },
)
async def download_export(ctx: Access, id1: Id1, id2: Id2) -> Response:
    """Download the data to be shredded

    Answers the export of the data the shredder will remove, once it is ready (409 while it is
    being made). The shredding itself starts only when it is asked for.
    """
    store = ctx.request.app.state.background.store
    return await download(
        ctx.session,
        store,
        ctx.principal,
        id1,
        id2,
        organizer_id=ctx.organizer_id,
        event_id=ctx.event.id,
        kinds={service.EXPORT_KIND},
    )


@router.post(
    f"{PATH}/shred/{{id1}}/{{id2}}/",
    status_code=202,
    response_model=ShredStartedOut,
    responses={
        400: {"description": "The shop is live or the event is not over."},
        404: {"description": "Unknown, expired, shredded, or another caller's export."},
        409: {"description": "The export is not ready yet, or its shred has started already."},
        410: {"description": "The export failed."},
    },
)
async def shred(ctx: Access, id1: Id1, id2: Id2) -> Response:
    """Shred the exported data

    Starts removing the data once the export file exists; 202 with the status URL. A
    second request for the same export answers 409 while its shred waits or runs, 404 once
    it succeeded (the export is gone); after a failed shred it starts a new one (202, with a
    new status URL)."""
    store = ctx.request.app.state.background.store
    uuid, secret = await service.start_shred(ctx.session, store, ctx.principal, ctx.event, id1, id2)
    return JSONResponse({"status": _url(ctx, "status", uuid, secret)}, status_code=202)


@router.get(
    f"{PATH}/status/{{id1}}/{{id2}}/",
    response_model=ShredStatusOut,
    responses={
        409: {"description": "Still waiting or running: `{status}`."},
        410: {"description": "Unknown (over about an hour ago, or never)."},
        417: {"description": 'Failed: `{status: "failed", message}`.'},
    },
)
async def shred_status(ctx: Access, id1: Id1, id2: Id2) -> Response:
    """Get the state of a shredding

    Answers whether the shredding is waiting, running, done or failed.
    """
    job = await service.shred_status(ctx.session, ctx.principal, ctx.event, id1, id2)
    if job is None:
        return JSONResponse(
            {
                "status": "unknown",
                "detail": "No shred is known under this URL (statuses are kept about an hour).",
            },
            status_code=410,
        )
    if job.status in ("waiting", "running"):
        return JSONResponse(
            {"status": job.status, "percentage": job.percentage},
            status_code=409,
            headers={"Retry-After": "1"},
        )
    if job.status == "failed":
        message = job.message or "Shredding failed."
        return JSONResponse({"status": "failed", "message": message}, status_code=417)
    return JSONResponse({"status": "finished"})
