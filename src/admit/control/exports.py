"""Exports in the back office: every exporter the user may run (the event's and the
organizer's), each with a form generated from its descriptor's ``input_parameters``; running
one is the API's own ``start`` (same checks, same 429 slot limit, a job owned by the user);
a progress page follows the job and offers the file when it is done. The scheduled exports
the user may see (the API's list and visibility rules) are listed below the forms.

The progress page works without JavaScript (``<noscript>`` meta refresh every two seconds);
with it, ``exports.js`` polls the job's JSON (``…/status``) and updates the progress bar,
reloading the page once the job ended. The file is served by the API's ``fetch`` (the
download semantics of ``jobs.downloads``) for the job's owner only.
"""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.api_call import Errors, answer, run, with_body
from admit.control.editing import listed
from admit.control.export_forms import exporter_fields, form_body
from admit.control.fields import defaults, typed
from admit.control.nav import event_nav, organizer_nav
from admit.control.render import render
from admit.exports import routes as export_routes
from admit.exports.base import EVENT, ORGANIZER
from admit.exports.tasks import EXPORT_KIND
from admit.jobs.downloads import owned_job
from admit.kit.http.context import EventAccess, EventContext, OrganizerAccess, OrgContext, Session
from admit.kit.http.errors import forbidden, not_found
from admit.kit.http.responses import JSONResponse
from admit.models import Job
from admit.scheduled_exports import service as scheduled
from admit.web.forms import Pairs
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
EVENT_PATH = "/control/event/{organizer}/{event}/exports"
ORG_PATH = "/control/organizer/{organizer}/exports"
JOB = "/{identifier}/{id1}/{id2}"


def _exporter_check(ctx: OrgContext, level: str, identifier: str, event_id: int | None) -> None:
    """404 for an unknown exporter, 403 when the user may not run it (the API's rule)."""
    from admit.exports.lookup import find  # loads the exporters (reportlab) on first use only

    exporter = find(level, identifier)
    if exporter is None:
        raise not_found("No exporter with this identifier exists.")
    if not export_routes.may_run(ctx, exporter, event_id):
        raise forbidden()


class EventExportAccess(EventAccess):
    """The event, and the permission of the exporter named by the URL's ``{identifier}``."""

    exporter_level = EVENT

    async def __call__(  # type: ignore[override]
        self, request: Request, session: Session, organizer: str, event: str
    ) -> EventContext:
        ctx = await super().__call__(request, session, organizer, event)
        _exporter_check(ctx, EVENT, request.path_params.get("identifier", ""), ctx.event.id)
        return ctx


class OrganizerExportAccess(OrganizerAccess):
    """The organizer, and the permission of the organizer-level exporter of the URL."""

    exporter_level = ORGANIZER

    async def __call__(  # type: ignore[override]
        self, request: Request, session: Session, organizer: str
    ) -> OrgContext:
        ctx = await super().__call__(request, session, organizer)
        _exporter_check(ctx, ORGANIZER, request.path_params.get("identifier", ""), None)
        return ctx


def level_of(ctx: OrgContext) -> str:
    return EVENT if isinstance(ctx, EventContext) else ORGANIZER


def exports_base(ctx: OrgContext) -> str:
    if isinstance(ctx, EventContext):
        return f"/control/event/{ctx.organizer_slug}/{ctx.event.slug}/exports/"
    return f"/control/organizer/{ctx.organizer_slug}/exports/"


async def exports_nav(page: Page, ctx: OrgContext) -> Any:
    if isinstance(ctx, EventContext):
        return await event_nav(page, ctx, "exports")
    return await organizer_nav(page, ctx, "exports")


async def descriptors(ctx: OrgContext) -> list[dict[str, Any]]:
    """The API's list of the exporters the user may run here."""
    req = with_body(ctx, None, "GET")
    if isinstance(req, EventContext):
        answered = await export_routes.list_event_exporters(req)
    else:
        answered = await export_routes.list_organizer_exporters(req)
    return answer(answered)["results"]


async def _list_page(page: Page, ctx: OrgContext, failed: str = "", values: dict[str, Any]
                     | None = None, errors: Errors | None = None, status: int = 200
                     ) -> Response:  # fmt: skip
    forms = []
    for desc in await descriptors(ctx):
        fields = await exporter_fields(ctx, level_of(ctx), desc)
        mine = desc["identifier"] == failed
        forms.append({
            "identifier": desc["identifier"], "name": desc["verbose_name"], "fields": fields,
            "typed": values if mine and values is not None else defaults(fields),
            "errors": (errors or {}) if mine else {},
        })  # fmt: skip
    those = scheduled.event_exports if level_of(ctx) == EVENT else scheduled.organizer_exports
    listing = await listed(ctx, those)
    names = {f["identifier"]: f["name"] for f in forms}
    return render(page, "exports.html", status, nav=await exports_nav(page, ctx), forms=forms,
                  base=exports_base(ctx), level=level_of(ctx), failed=failed, names=names,
                  scheduled=listing["results"], scheduled_count=listing["count"])  # fmt: skip


async def _start(page: Page, ctx: OrgContext, pairs: Pairs, identifier: str) -> Response:
    desc = next((d for d in await descriptors(ctx) if d["identifier"] == identifier), None)
    if desc is None:  # the access object let them through: the list agrees
        raise not_found()
    fields = await exporter_fields(ctx, level_of(ctx), desc)
    body = form_body(fields, pairs)

    async def work() -> Any:
        req = with_body(ctx, body)
        if isinstance(req, EventContext):
            return await export_routes.run_event_exporter(req, identifier)
        return await export_routes.run_organizer_exporter(req, identifier)

    started, errors = await run(page, ctx, work)
    if errors:
        return await _list_page(page, ctx, identifier, typed(fields, pairs), errors, 400)
    # ``…/{identifier}/download/{uuid}/{secret}/``: the job's two opaque values.
    id1, id2 = started["download"].rstrip("/").rsplit("/", 2)[-2:]
    page.web.flash("The export was started.")
    return page.redirect(f"{exports_base(ctx)}{identifier}/{id1}/{id2}/")


async def _job(ctx: OrgContext, identifier: str, id1: str, id2: str) -> Job:
    """The user's own export job of this exporter and place, by both opaque values; else
    404, as the API's download answers."""
    event_id = ctx.event.id if isinstance(ctx, EventContext) else None
    job = await owned_job(ctx.session, id1, ctx.principal, organizer_id=ctx.organizer_id,
                          event_id=event_id, kinds={EXPORT_KIND})  # fmt: skip
    spec = job.input or {}
    if (
        not hmac.compare_digest(job.secret.encode(), id2.encode()[:128])
        or spec.get("identifier") != identifier
        or spec.get("level") != level_of(ctx)
        or (event_id is None and job.event_id is not None)
    ):
        raise not_found()
    return job


def _state(job: Job, url: str) -> dict[str, Any]:
    done = job.status == "finished"
    return {"status": job.status, "percentage": job.percentage or 0, "message": job.message,
            "download": url + "download" if done and job.result_key else None}  # fmt: skip


async def _progress(page: Page, ctx: OrgContext, identifier: str, id1: str, id2: str) -> Response:
    job = await _job(ctx, identifier, id1, id2)
    url = f"{exports_base(ctx)}{identifier}/{id1}/{id2}/"
    name = next((d["verbose_name"] for d in await descriptors(ctx)
                 if d["identifier"] == identifier), identifier)  # fmt: skip
    return render(page, "export_progress.html", nav=await exports_nav(page, ctx),
                  job=_state(job, url), url=url, name=name, base=exports_base(ctx),
                  filename=job.result_name,
                  size=job.result_size, scripts=True)  # fmt: skip


async def _status(ctx: OrgContext, identifier: str, id1: str, id2: str) -> Response:
    job = await _job(ctx, identifier, id1, id2)
    return JSONResponse(_state(job, f"{exports_base(ctx)}{identifier}/{id1}/{id2}/"),
                        headers={"Cache-Control": "no-store"})  # fmt: skip


async def _download(page: Page, ctx: OrgContext, identifier: str, id1: str, id2: str
                    ) -> Response:  # fmt: skip
    """The file (the API's download); while it runs or after it failed, the progress page."""
    event_id = ctx.event.id if isinstance(ctx, EventContext) else None
    response = await export_routes.fetch(ctx, level_of(ctx), identifier, event_id, id1, id2)
    if response.status_code in (409, 410):
        return page.redirect(f"{exports_base(ctx)}{identifier}/{id1}/{id2}/")
    return response


# -- event level ---------------------------------------------------------------------------


@router.get(EVENT_PATH + "/")
@control_page(EventAccess())
async def event_exports(page: Page, ctx: EventContext) -> Response:
    return await _list_page(page, ctx)


@router.post(EVENT_PATH + "/{identifier}/run")
@control_page(EventExportAccess(), form=True)
async def event_export_run(page: Page, ctx: EventContext, pairs: Pairs, identifier: str
                           ) -> Response:  # fmt: skip
    return await _start(page, ctx, pairs, identifier)


@router.get(EVENT_PATH + JOB + "/")
@control_page(EventAccess())
async def event_export_progress(page: Page, ctx: EventContext, identifier: str, id1: str,
                                id2: str) -> Response:  # fmt: skip
    return await _progress(page, ctx, identifier, id1, id2)


@router.get(EVENT_PATH + JOB + "/status")
@control_page(EventAccess())
async def event_export_status(page: Page, ctx: EventContext, identifier: str, id1: str,
                              id2: str) -> Response:  # fmt: skip
    return await _status(ctx, identifier, id1, id2)


@router.get(EVENT_PATH + JOB + "/download")
@control_page(EventAccess())
async def event_export_download(page: Page, ctx: EventContext, identifier: str, id1: str,
                                id2: str) -> Response:  # fmt: skip
    return await _download(page, ctx, identifier, id1, id2)


# -- organizer level -----------------------------------------------------------------------


@router.get(ORG_PATH + "/")
@control_page(OrganizerAccess())
async def organizer_exports(page: Page, ctx: OrgContext) -> Response:
    return await _list_page(page, ctx)


@router.post(ORG_PATH + "/{identifier}/run")
@control_page(OrganizerExportAccess(), form=True)
async def organizer_export_run(page: Page, ctx: OrgContext, pairs: Pairs, identifier: str
                               ) -> Response:  # fmt: skip
    return await _start(page, ctx, pairs, identifier)


@router.get(ORG_PATH + JOB + "/")
@control_page(OrganizerAccess())
async def organizer_export_progress(page: Page, ctx: OrgContext, identifier: str, id1: str,
                                    id2: str) -> Response:  # fmt: skip
    return await _progress(page, ctx, identifier, id1, id2)


@router.get(ORG_PATH + JOB + "/status")
@control_page(OrganizerAccess())
async def organizer_export_status(page: Page, ctx: OrgContext, identifier: str, id1: str,
                                  id2: str) -> Response:  # fmt: skip
    return await _status(ctx, identifier, id1, id2)


@router.get(ORG_PATH + JOB + "/download")
@control_page(OrganizerAccess())
async def organizer_export_download(page: Page, ctx: OrgContext, identifier: str, id1: str,
                                    id2: str) -> Response:  # fmt: skip
    return await _download(page, ctx, identifier, id1, id2)
