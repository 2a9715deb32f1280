"""Scheduled exports in the back office (event and organizer level): a form to schedule one of
the exporters the user may run (its own fields, from its descriptor, and the mail and
schedule), a form to change one, and a confirm page to delete one. The pages run the API's own
code (``scheduled_exports.service``: its create, PATCH and DELETE handlers), so who sees an
export, who may change it (the exporter's permission, the editor becoming its owner), the
checks of the exporter's input and of the schedule are the API's and its messages are shown
by the fields.

The exporter's fields are named ``x-<name>`` in the form, so they never clash with the
schedule's (an exporter reading ``locale`` or ``timezone``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.api_call import Errors, run, with_body
from admit.control.editing import found
from admit.control.export_forms import exporter_fields, form_body
from admit.control.exports import descriptors, exports_base, exports_nav, level_of
from admit.control.fields import Field, defaults, to_body, to_form, typed
from admit.control.render import render
from admit.kit.http.context import EventAccess, EventContext, OrganizerAccess, OrgContext
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.crud import Resource
from admit.kit.resources.schema import LOCALES
from admit.scheduled_exports import routes as api
from admit.scheduled_exports import service
from admit.web.forms import Pairs, first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
EVENT_PATH = "/control/event/{organizer}/{event}/exports/scheduled"
ORG_PATH = "/control/organizer/{organizer}/exports/scheduled"
X = "x-"  # the exporter's fields in the form


def schedule_fields(ctx: OrgContext) -> list[Field]:
    fields = [
        Field("mail_subject", "Subject of the e-mail", required=True),
        Field("mail_template", "Text of the e-mail", "textarea", required=True),
        Field("mail_additional_recipients", "Also to", optional_null=False,
              help="Addresses separated by commas; the file always goes to you."),
        Field("mail_additional_recipients_cc", "Copy to", optional_null=False),
        Field("mail_additional_recipients_bcc", "Blind copy to", optional_null=False),
        Field("schedule_rrule", "Repeats", "textarea", required=True,
              default=f"DTSTART:{dt.date.today():%Y%m%d}T000000\nRRULE:FREQ=WEEKLY;BYDAY=MO",
              help="A recurrence rule (RFC 5545) of two lines: DTSTART (from when) and RRULE "
                   "(how often), e.g. RRULE:FREQ=DAILY or RRULE:FREQ=WEEKLY;BYDAY=MO,TH."),
        Field("schedule_rrule_time", "At", required=True, default="08:00",
              help="A time of day, hh:mm."),
        Field("locale", "Language of the file", "select", required=True, default="en",
              choices=[(code, code) for code in sorted(LOCALES)]),
    ]  # fmt: skip
    if not isinstance(ctx, EventContext):
        fields.append(Field("timezone", "Time zone of the schedule", required=True,
                            default="UTC"))  # fmt: skip
    return fields


def _resource(ctx: OrgContext) -> Resource[Any]:
    return service.event_exports if isinstance(ctx, EventContext) else service.organizer_exports


async def _exporter(ctx: OrgContext, identifier: str) -> tuple[dict[str, Any] | None,
                                                                list[Field]]:  # fmt: skip
    """The exporter's descriptor (None when the user may not run it here) and its fields,
    named as the form names them."""
    desc = next((d for d in await descriptors(ctx) if d["identifier"] == identifier), None)
    if desc is None:
        return None, []
    return desc, await exporter_fields(ctx, level_of(ctx), desc)


def _prefixed(fields: list[Field]) -> list[Field]:
    return [dataclasses.replace(f, name=X + f.name) for f in fields]


def _export_data(fields: list[Field], pairs: Pairs) -> dict[str, Any]:
    own = [(k[len(X) :], v) for k, v in pairs if k.startswith(X)]
    return form_body(fields, own)


async def _form(page: Page, ctx: OrgContext, obj: dict[str, Any] | None, identifier: str,
                values: dict[str, Any], errors: Errors, status: int = 200) -> Response:  # fmt: skip
    desc, fields = await _exporter(ctx, identifier) if identifier else (None, [])
    choices = [(d["identifier"], d["verbose_name"]) for d in await descriptors(ctx)]
    return render(page, "scheduled_export.html", status, nav=await exports_nav(page, ctx),
                  base=exports_base(ctx), obj=obj, identifier=identifier, exporter=desc,
                  choices=choices, export_fields=_prefixed(fields),
                  fields=schedule_fields(ctx), values=values, errors=errors)  # fmt: skip


async def _new(page: Page, ctx: OrgContext) -> Response:
    identifier = page.request.query_params.get("exporter", "")
    desc, fields = await _exporter(ctx, identifier) if identifier else (None, [])
    if desc is None:  # the first step: which export
        return await _form(page, ctx, None, "", {}, {})
    values = defaults(schedule_fields(ctx))
    values.update({X + k: v for k, v in defaults(fields).items()})
    values["mail_subject"] = desc["verbose_name"]
    values["mail_template"] = "The export is attached."
    return await _form(page, ctx, None, identifier, values, {})


async def _remapped(work: Callable[[], Awaitable[Any]]) -> Any:
    """``work()``, its refusal of the exporter's input shown by the exporter's fields."""
    try:
        return await work()
    except FieldErrors as exc:
        inner = exc.errors.get("export_form_data") if isinstance(exc.errors, dict) else None
        if not isinstance(inner, dict):
            raise
        errors = {k: v for k, v in exc.errors.items() if k != "export_form_data"}
        errors.update({X + str(k): v for k, v in inner.items()})
        raise FieldErrors(errors) from None


def _typed(ctx: OrgContext, fields: list[Field], pairs: Pairs) -> dict[str, Any]:
    return {**typed(schedule_fields(ctx), pairs), **typed(_prefixed(fields), pairs)}


def _body(ctx: OrgContext, fields: list[Field], pairs: Pairs, identifier: str) -> dict[str, Any]:
    body = to_body(schedule_fields(ctx), pairs)
    body.update(export_identifier=identifier, export_form_data=_export_data(fields, pairs))
    return body


async def _create(page: Page, ctx: OrgContext, pairs: Pairs) -> Response:
    identifier = first(pairs, "export_identifier").strip()
    desc, fields = await _exporter(ctx, identifier)
    if desc is None:
        errors = {"export_identifier": ["Choose one of the exports you may run here."]}
        return await _form(page, ctx, None, "", {}, errors, 400)
    body = _body(ctx, fields, pairs, identifier)

    async def work() -> Any:
        req = with_body(ctx, body)
        if isinstance(req, EventContext):
            return await api.create_event_export(req)
        return await api.create_organizer_export(req)

    created, errors = await run(page, ctx, lambda: _remapped(work))
    if errors:
        return await _form(page, ctx, None, identifier, _typed(ctx, fields, pairs), errors, 400)
    page.web.flash("The export was scheduled.")
    return page.redirect(f"{exports_base(ctx)}scheduled/{created['id']}/")


async def _missing(page: Page, ctx: OrgContext) -> Response:
    return render(page, "forbidden.html", 404, nav=await exports_nav(page, ctx),
                  detail="There is no such scheduled export here.")  # fmt: skip


async def _edit(page: Page, ctx: OrgContext, id: str) -> Response:
    obj = await found(ctx, _resource(ctx), id)
    if obj is None:
        return await _missing(page, ctx)
    _, fields = await _exporter(ctx, obj["export_identifier"])
    values = to_form(schedule_fields(ctx), obj)
    values["schedule_rrule_time"] = values["schedule_rrule_time"][:5]
    values.update(to_form(_prefixed(fields), {X + k: v for k, v in
                                              obj["export_form_data"].items()}))  # fmt: skip
    return await _form(page, ctx, obj, obj["export_identifier"], values, {})


async def _update(page: Page, ctx: OrgContext, pairs: Pairs, id: str) -> Response:
    res = _resource(ctx)
    obj = await found(ctx, res, id)
    if obj is None:
        return await _missing(page, ctx)
    identifier = obj["export_identifier"]
    desc, fields = await _exporter(ctx, identifier)
    body = _body(ctx, fields, pairs, identifier)
    if desc is None:  # an exporter the user may not run: its input is left as it is
        body.pop("export_form_data")

    async def work() -> Any:
        req = with_body(ctx, body, "PATCH")
        await res.prepare(req, {"id": id})
        return await res.handle_update(req, id, partial=True)

    _, errors = await run(page, ctx, lambda: _remapped(work))
    if errors:
        return await _form(page, ctx, obj, identifier, _typed(ctx, fields, pairs), errors, 400)
    page.web.flash("The scheduled export was saved.")
    return page.redirect(f"{exports_base(ctx)}scheduled/{id}/")


async def _delete(page: Page, ctx: OrgContext, id: str, confirmed: bool) -> Response:
    res = _resource(ctx)
    obj = await found(ctx, res, id)
    if obj is None:
        return await _missing(page, ctx)
    errors: Errors = {}
    if confirmed:

        async def work() -> Any:
            req = with_body(ctx, None, "DELETE")
            await res.prepare(req, {"id": id})
            return await res.handle_delete(req, id)

        _, errors = await run(page, ctx, work)
        if not errors:
            page.web.flash("The scheduled export was deleted.")
            return page.redirect(exports_base(ctx))
    return render(page, "scheduled_delete.html", 409 if errors else 200,
                  nav=await exports_nav(page, ctx), base=exports_base(ctx), obj=obj,
                  refusal=" ".join(m for ms in errors.values() for m in ms))  # fmt: skip


# -- the routes, at both levels -----------------------------------------------------------

EVENT_CREATE = api.EventCreateAccess()
ORG_CREATE = api.OrganizerCreateAccess()


@router.get(EVENT_PATH + "/new")
@control_page(EVENT_CREATE)
async def event_scheduled_new(page: Page, ctx: EventContext) -> Response:
    return await _new(page, ctx)


@router.post(EVENT_PATH + "/new")
@control_page(EVENT_CREATE, form=True)
async def event_scheduled_create(page: Page, ctx: EventContext, pairs: Pairs) -> Response:
    return await _create(page, ctx, pairs)


@router.get(EVENT_PATH + "/{id}/")
@control_page(EventAccess())
async def event_scheduled_edit(page: Page, ctx: EventContext, id: str) -> Response:
    return await _edit(page, ctx, id)


@router.post(EVENT_PATH + "/{id}/")
@control_page(EventAccess(), form=True)
async def event_scheduled_update(page: Page, ctx: EventContext, pairs: Pairs, id: str
                                 ) -> Response:  # fmt: skip
    return await _update(page, ctx, pairs, id)


@router.get(EVENT_PATH + "/{id}/delete")
@control_page(EventAccess())
async def event_scheduled_delete_confirm(page: Page, ctx: EventContext, id: str) -> Response:
    return await _delete(page, ctx, id, False)


@router.post(EVENT_PATH + "/{id}/delete")
@control_page(EventAccess(), form=True)
async def event_scheduled_delete(page: Page, ctx: EventContext, id: str) -> Response:
    return await _delete(page, ctx, id, True)


@router.get(ORG_PATH + "/new")
@control_page(ORG_CREATE)
async def organizer_scheduled_new(page: Page, ctx: OrgContext) -> Response:
    return await _new(page, ctx)


@router.post(ORG_PATH + "/new")
@control_page(ORG_CREATE, form=True)
async def organizer_scheduled_create(page: Page, ctx: OrgContext, pairs: Pairs) -> Response:
    return await _create(page, ctx, pairs)


@router.get(ORG_PATH + "/{id}/")
@control_page(OrganizerAccess())
async def organizer_scheduled_edit(page: Page, ctx: OrgContext, id: str) -> Response:
    return await _edit(page, ctx, id)


@router.post(ORG_PATH + "/{id}/")
@control_page(OrganizerAccess(), form=True)
async def organizer_scheduled_update(page: Page, ctx: OrgContext, pairs: Pairs, id: str
                                     ) -> Response:  # fmt: skip
    return await _update(page, ctx, pairs, id)


@router.get(ORG_PATH + "/{id}/delete")
@control_page(OrganizerAccess())
async def organizer_scheduled_delete_confirm(page: Page, ctx: OrgContext, id: str) -> Response:
    return await _delete(page, ctx, id, False)


@router.post(ORG_PATH + "/{id}/delete")
@control_page(OrganizerAccess(), form=True)
async def organizer_scheduled_delete(page: Page, ctx: OrgContext, id: str) -> Response:
    return await _delete(page, ctx, id, True)
