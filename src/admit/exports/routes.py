"""``E/exporters/`` and ``O/exporters/``: descriptors, run requests and their downloads.

A run request is checked now (the exporter exists: else 404; the caller holds its
permission: else 403; the input is valid: else 400 with field errors; at organizer level every
event named in ``events`` exists and is permitted: else 400; fewer than two of the caller's
exports are waiting or running: else 429 with ``Retry-After``) and becomes an ``export.run``
job owned by the caller; the answer is 202 with the download URL. The job checks the owner's
permissions again when it runs. Lists show the exporters the caller may run.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import Depends, Path
from pydantic import ValidationError
from sqlalchemy import select
from starlette.responses import Response

from admit.exports.base import EVENT, ORGANIZER, Exporter
from admit.exports.limits import reserve_slot
from admit.exports.lookup import exporters, find
from admit.exports.schemas import ExporterOut, ExportRunIn, ExportStartedOut
from admit.exports.tasks import EXPORT_KIND, export_input
from admit.jobs.downloads import download, owned_job, owner_of
from admit.jobs.queue import enqueue
from admit.kit.http.body import read_object
from admit.kit.http.context import (
    EventAccess,
    EventContext,
    OrganizerAccess,
    OrgContext,
    public_base_url,
)
from admit.kit.http.errors import FieldErrors, forbidden, not_found, validation_error
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import Page
from admit.kit.resources.pagination import paginate_list
from admit.models import Event, Job

router = api_router(tags=["exporters"])

O_PATH = "/organizers/{organizer}/exporters"
E_PATH = "/organizers/{organizer}/events/{event}/exporters"
EventCtx = Annotated[EventContext, Depends(EventAccess())]
OrgCtx = Annotated[OrgContext, Depends(OrganizerAccess())]
Identifier = Annotated[str, Path(description="The exporter's identifier (see its descriptor).")]
Id1 = Annotated[str, Path(description="The first opaque value of the download URL.")]
Id2 = Annotated[str, Path(description="The second opaque value of the download URL.")]

_LOCALE = re.compile(r"^[A-Za-z]{1,8}(?:[-_][A-Za-z0-9]{1,8})*$")
_RUN_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"description": "Invalid input: `{field: [message]}`."},
    403: {"description": "The caller lacks the exporter's permission."},
    404: {"description": "No exporter with this identifier."},
    429: {"description": "Two of the caller's exports are running already (`Retry-After`)."},
}
_DOWNLOAD_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "The file."},
    409: {"description": "Still waiting or running: `{status, percentage}`."},
    410: {"description": 'Failed: `{status: "failed", message}`.'},
    404: {"description": "Unknown, expired, or another caller's export."},
}


def may_run(ctx: OrgContext, exporter: Exporter, event_id: int | None) -> bool:
    """Whether the caller holds the exporter's permission now: for an event, in that event;
    at organizer level, an organizer permission, or an event permission in some event."""
    permission = exporter.permission
    if permission.startswith("organizer."):
        return ctx.has_organizer_permission(permission)
    if event_id is not None:
        return ctx.has_event_permission(event_id, permission)
    return any(
        g.has_event_permission(permission) and (g.all_events or g.event_ids) for g in ctx.grants
    )


def request_locale(value: Any, accept_language: str | None) -> str:
    """The body's ``locale``, else the first language of ``Accept-Language``, else English."""
    if value is not None:
        if not isinstance(value, str) or len(value) > 32 or not _LOCALE.match(value):
            raise FieldErrors.single("locale", "Enter a language code such as en or de-DE.")
        return value
    for part in (accept_language or "").split(","):
        tag = part.split(";")[0].strip()
        if tag and len(tag) <= 32 and _LOCALE.match(tag):
            return tag
        if tag:
            break  # a "*" or garbage first choice: no preference we can honour
    return "en"


async def check_events(ctx: OrgContext, exporter: Exporter, slugs: list[str]) -> None:
    """400 naming each slug that is no event of this organizer the caller may export."""
    wanted = list(dict.fromkeys(slugs))
    if not wanted:
        return
    query = select(Event.slug, Event.id).where(
        Event.organizer_id == ctx.organizer_id, Event.slug.in_(wanted)
    )
    known = {slug: event_id for slug, event_id in await ctx.session.execute(query)}
    permission = exporter.permission
    bad = [
        slug
        for slug in wanted
        if slug not in known
        or not (
            ctx.has_organizer_permission(permission)
            if permission.startswith("organizer.")
            else ctx.has_event_permission(known[slug], permission)
        )
    ]
    if bad:
        raise FieldErrors({"events": [f'"{slug}" is not a valid choice.' for slug in bad]})


async def start(
    ctx: OrgContext, level: str, identifier: str, event: Event | None, url_base: str
) -> JSONResponse:
    exporter = find(level, identifier)
    if exporter is None:
        raise not_found("No exporter with this identifier exists.")
    event_id = event.id if event is not None else None
    if not may_run(ctx, exporter, event_id):
        raise forbidden()
    data = await read_object(ctx.request)
    locale = request_locale(data.pop("locale", None), ctx.request.headers.get("accept-language"))
    try:
        params = exporter.Input.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from None
    if level == ORGANIZER and isinstance(getattr(params, "events", None), list):
        await check_events(ctx, exporter, params.events)
    errors = await exporter.check_input(ctx.session, event_id, params)
    if errors:
        raise FieldErrors(errors)
    owner = owner_of(ctx.principal)
    await reserve_slot(ctx.session, owner)
    spec = export_input(
        level=level,
        identifier=identifier,
        organizer_id=ctx.organizer_id,
        event_id=event_id,
        form_data=params.model_dump(mode="json", by_alias=True),
        locale=locale,
    )
    job_id, job_uuid = await enqueue(
        ctx.session,
        EXPORT_KIND,
        spec,
        organizer_id=ctx.organizer_id,
        event_id=event_id,
        owner=owner,
    )
    secret = await ctx.session.scalar(select(Job.secret).where(Job.id == job_id))
    url = f"{url_base}/{identifier}/download/{job_uuid}/{secret}/"
    return JSONResponse({"download": url}, status_code=202)


async def fetch(
    ctx: OrgContext, level: str, identifier: str, event_id: int | None, id1: str, id2: str
) -> Response:
    """The download semantics, for an export of this exporter and level only."""
    job = await owned_job(
        ctx.session,
        id1,
        ctx.principal,
        organizer_id=ctx.organizer_id,
        event_id=event_id,
        kinds={EXPORT_KIND},
    )
    spec = job.input or {}
    if spec.get("identifier") != identifier or spec.get("level") != level:
        raise not_found()
    store = ctx.request.app.state.background.store
    return await download(
        ctx.session,
        store,
        ctx.principal,
        id1,
        id2,
        organizer_id=ctx.organizer_id,
        event_id=event_id,
        kinds={EXPORT_KIND},
    )


def descriptors(ctx: OrgContext, level: str, event_id: int | None) -> list[dict[str, Any]]:
    return [e.descriptor() for e in exporters(level) if may_run(ctx, e, event_id)]


def _event_base(ctx: EventContext) -> str:
    base = public_base_url(ctx.request)
    return f"{base}/api/v1/organizers/{ctx.organizer_slug}/events/{ctx.event.slug}/exporters"


def _organizer_base(ctx: OrgContext) -> str:
    return f"{public_base_url(ctx.request)}/api/v1/organizers/{ctx.organizer_slug}/exporters"


@router.get(f"{E_PATH}/", response_model=Page[ExporterOut])
async def list_event_exporters(ctx: EventCtx) -> Response:
    """The event's exporters the caller may run, in identifier order; query ``page``."""
    return JSONResponse(paginate_list(ctx.request, descriptors(ctx, EVENT, ctx.event.id)))


@router.post(
    f"{E_PATH}/{{identifier}}/run/",
    status_code=202,
    response_model=ExportStartedOut,
    openapi_extra=json_body(ExportRunIn),
    responses=_RUN_RESPONSES,
)
async def run_event_exporter(ctx: EventCtx, identifier: Identifier) -> Response:
    """Starts the export in the background; 202 with the URL to fetch the file from."""
    return await start(ctx, EVENT, identifier, ctx.event, _event_base(ctx))


@router.get(
    f"{E_PATH}/{{identifier}}/download/{{id1}}/{{id2}}/",
    response_class=Response,
    responses=_DOWNLOAD_RESPONSES,
)
async def download_event_export(
    ctx: EventCtx, identifier: Identifier, id1: Id1, id2: Id2
) -> Response:
    """Download an event export

    Answers the file an event export produced, once it is ready (409 while it runs, 410 when it
    failed).
    """
    return await fetch(ctx, EVENT, identifier, ctx.event.id, id1, id2)


@router.get(f"{O_PATH}/", response_model=Page[ExporterOut])
async def list_organizer_exporters(ctx: OrgCtx) -> Response:
    """The cross-event exporters the caller may run, in identifier order; query ``page``."""
    return JSONResponse(paginate_list(ctx.request, descriptors(ctx, ORGANIZER, None)))


@router.post(
    f"{O_PATH}/{{identifier}}/run/",
    status_code=202,
    response_model=ExportStartedOut,
    openapi_extra=json_body(ExportRunIn),
    responses=_RUN_RESPONSES,
)
async def run_organizer_exporter(ctx: OrgCtx, identifier: Identifier) -> Response:
    """Starts the export in the background; 202 with the URL to fetch the file from.
    ``events`` (a list of event slugs, where the exporter takes it) limits it to those
    events; each must exist and be permitted to the caller."""
    return await start(ctx, ORGANIZER, identifier, None, _organizer_base(ctx))


@router.get(
    f"{O_PATH}/{{identifier}}/download/{{id1}}/{{id2}}/",
    response_class=Response,
    responses=_DOWNLOAD_RESPONSES,
)
async def download_organizer_export(
    ctx: OrgCtx, identifier: Identifier, id1: Id1, id2: Id2
) -> Response:
    """Download an organizer export

    Answers the file a cross-event export produced, once it is ready (409 while it runs, 410
    when it failed).
    """
    return await fetch(ctx, ORGANIZER, identifier, None, id1, id2)
