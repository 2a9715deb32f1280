"""Scheduled exports ``E/scheduled_exports/`` and ``O/scheduled_exports/``: who sees them, what
is valid, and the schedule they get.

Visibility, as the spec's permission rules say: a caller holding the settings permission
(``event.settings.general:write`` at event level, ``organizer.settings.general:write`` at
organizer level) sees and changes every scheduled export there; a user (OAuth) without it sees
and changes only their own; a team token or device without it sees none (an empty list, 404
for one). Only a user can create one (it runs with that user's permissions and is mailed to
them): a team token or device gets 403.

Changing one (PATCH or PUT) needs the exporter's permission in the caller's own right, and a
change by anyone but the owner makes the caller the owner: the export runs with its owner's
permissions and mails its file to the owner's recipients, so whoever chooses the recipients,
the schedule or the input must be someone allowed to read what it contains. Without that an
editor holding only the settings permission could point another user's gift card export at
their own address. A team token or device cannot own one, so it may change none (403); it may
still delete one (that discloses nothing).

Valid means: ``export_identifier`` names an exporter of the level that the caller holds the
permission for, ``export_form_data`` is valid input for it (400 with its field errors under
``export_form_data``), the addresses are e-mail addresses, the locale is known, and the rule
passes :mod:`admit.scheduled_exports.schedule`. Every change (PATCH or PUT, even one that
changes nothing) resets ``error_counter`` to 0 and computes ``schedule_next_run`` anew: that
is how an export stopped after failures is started again.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError
from sqlalchemy import Select, false, select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.db import utcnow
from admit.exports.base import EVENT, ORGANIZER, Exporter
from admit.exports.lookup import find
from admit.kit.http.context import EventContext, OrgContext
from admit.kit.http.errors import FieldErrors, errors_from_pydantic, forbidden
from admit.kit.http.responses import JSONResponse
from admit.kit.resources.crud import Resource
from admit.kit.resources.filtering import Ordering
from admit.kit.resources.pagination import paginate
from admit.models import ScheduledExport, User
from admit.scheduled_exports import schedule
from admit.scheduled_exports.schemas import (
    EventExportIn,
    EventExportOut,
    OrganizerExportIn,
    OrganizerExportOut,
)

USER_KINDS = frozenset({"user", "oauth"})
CREATE_REFUSED = "Creation of a scheduled export requires user-specific API access (OAuth)."
CHANGE_REFUSED = (
    "Changing a scheduled export requires user-specific API access (OAuth): the editor "
    "becomes its owner."
)
EVENT_SETTINGS = "event.settings.general:write"
ORGANIZER_SETTINGS = "organizer.settings.general:write"

COLUMNS = (
    "export_identifier export_form_data locale mail_additional_recipients "
    "mail_additional_recipients_cc mail_additional_recipients_bcc mail_subject mail_template "
    "schedule_rrule schedule_rrule_time"
).split()


def zone(name: str | None) -> dt.tzinfo:
    try:
        return zoneinfo.ZoneInfo(name or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def caller_user_id(ctx: OrgContext) -> int | None:
    principal = ctx.principal
    return principal.user_id if principal.kind in USER_KINDS else None


async def owner_emails(session: AsyncSession, ids: Sequence[int]) -> dict[int, str]:
    if not ids:
        return {}
    rows = await session.execute(select(User.id, User.email).where(User.id.in_(set(ids))))
    return {user_id: email for user_id, email in rows}


def compute_next_run(
    rrule_text: str, at: dt.time, zone_name: str | None, now: dt.datetime
) -> dt.datetime | None:
    """The next run after ``now`` of a stored export (its rule was checked when saved; a
    rule that no longer parses has no next run)."""
    try:
        parsed = schedule.parse(rrule_text)
    except schedule.ScheduleError:
        return None
    return schedule.next_run(parsed, at, zone(zone_name), now)


class ScheduledExports(Resource[ScheduledExport]):
    """What both levels share; the subclasses name the level."""

    model = ScheduledExport
    level: ClassVar[str]
    settings_permission: ClassVar[str]
    tag = "scheduled_exports"
    # Create has an access check of its own (routes.py): any permission, then user-only.
    actions = frozenset({"list", "retrieve", "update", "delete"})
    ordering = Ordering(
        fields={
            "id": ScheduledExport.id,
            "export_identifier": ScheduledExport.export_identifier,
            "schedule_next_run": ScheduledExport.schedule_next_run,
        },
        default=("id",),
        pk=ScheduledExport.id,
    )

    # -- who sees what ------------------------------------------------------------------------

    def sees_all(self, ctx: OrgContext) -> bool:
        raise NotImplementedError

    def tenant_query(self, ctx: OrgContext) -> Select[Any]:
        raise NotImplementedError

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        query = self.tenant_query(ctx)
        if self.sees_all(ctx):
            return query
        user_id = caller_user_id(ctx)
        if user_id is None:
            return query.where(false())
        return query.where(ScheduledExport.owner_id == user_id)

    def zone_name(self, ctx: OrgContext, data: BaseModel) -> str:
        raise NotImplementedError

    # -- reading ------------------------------------------------------------------------------

    async def handle_list(self, ctx: OrgContext) -> Response:
        body = await paginate(ctx.request, ctx.session, self.list_query(ctx), list)
        rows = body["results"]
        ctx.extra["owners"] = await owner_emails(ctx.session, [r.owner_id for r in rows])
        body["results"] = [self.serialize(ctx, r) for r in rows]
        return JSONResponse(body)

    async def get_object(self, ctx: OrgContext, raw_pk: str) -> ScheduledExport:
        obj = await super().get_object(ctx, raw_pk)
        ctx.extra.setdefault("owners", {}).update(await owner_emails(ctx.session, [obj.owner_id]))
        return obj

    def to_read(self, ctx: OrgContext, obj: ScheduledExport) -> Any:
        data = {name: getattr(obj, name) for name in COLUMNS}
        data.update(
            id=obj.id,
            owner=ctx.extra.get("owners", {}).get(obj.owner_id, ""),
            schedule_next_run=obj.schedule_next_run,
            error_counter=obj.error_counter,
            timezone=obj.timezone,
        )
        return data

    # -- writing ------------------------------------------------------------------------------

    async def handle_create(self, ctx: OrgContext) -> Response:
        if caller_user_id(ctx) is None:
            raise forbidden(CREATE_REFUSED)
        return await super().handle_create(ctx)

    def new_object(self, ctx: OrgContext) -> ScheduledExport:
        user_id = caller_user_id(ctx)
        assert user_id is not None
        obj = ScheduledExport(organizer_id=ctx.organizer_id, owner_id=user_id)
        if isinstance(ctx, EventContext):
            obj.event_id = ctx.event.id
        return obj

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: ScheduledExport | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, EventExportIn)
        if obj is not None and caller_user_id(ctx) is None:
            raise forbidden(CHANGE_REFUSED)
        errors: dict[str, Any] = {}
        exporter = find(self.level, data.export_identifier)
        if exporter is None:
            errors["export_identifier"] = [
                f'"{data.export_identifier}" is not a valid choice: there is no such '
                f"exporter at {self.level} level."
            ]
        else:
            changed = obj is None or obj.export_identifier != data.export_identifier
            if not changed and not self.may_use(ctx, exporter):
                # The stored exporter: the caller may not read what it exports.
                raise forbidden(
                    f'Changing this export needs the permission its exporter "'
                    f'{exporter.identifier}" needs ({exporter.permission}).'
                )
            if changed and not self.may_use(ctx, exporter):
                errors["export_identifier"] = [
                    f'You lack the permission the exporter "{exporter.identifier}" needs '
                    f"({exporter.permission})."
                ]
            try:
                exporter.Input.model_validate(data.export_form_data)
            except ValidationError as exc:
                errors["export_form_data"] = errors_from_pydantic(exc.errors(include_url=False))
        try:
            ctx.extra["schedule"] = schedule.parse(data.schedule_rrule)
        except schedule.ScheduleError as exc:
            errors["schedule_rrule"] = [str(exc)]
        if errors:
            raise FieldErrors(errors)

    async def perform_update(
        self, ctx: OrgContext, obj: ScheduledExport, data: BaseModel, supplied: set[str]
    ) -> None:
        await super().perform_update(ctx, obj, data, supplied)
        ctx.extra.setdefault("owners", {}).update(await owner_emails(ctx.session, [obj.owner_id]))

    def may_use(self, ctx: OrgContext, exporter: Exporter) -> bool:
        """Whether the caller holds what the exporter needs (for some event, at organizer
        level with a per-event permission: the run keeps the events the owner may read)."""
        if exporter.permission.startswith("organizer."):
            return ctx.has_organizer_permission(exporter.permission)
        if isinstance(ctx, EventContext):
            return ctx.has_event_permission(ctx.event.id, exporter.permission)
        return any(g.has_event_permission(exporter.permission) for g in ctx.grants)

    def apply(
        self, ctx: OrgContext, obj: ScheduledExport, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, EventExportIn)
        for name in COLUMNS:
            setattr(obj, name, getattr(data, name))
        if isinstance(data, OrganizerExportIn):
            obj.timezone = data.timezone
        editor = caller_user_id(ctx)
        if editor is not None and obj.owner_id != editor:
            # Another user's change: the export is now theirs (validate checked that they hold
            # the exporter's permission), so it never mails the former owner's data.
            obj.owner_id = editor
        obj.error_counter = 0
        obj.schedule_next_run = schedule.next_run(
            ctx.extra["schedule"],
            data.schedule_rrule_time,
            zone(self.zone_name(ctx, data)),
            utcnow(),
        )


class EventScheduledExports(ScheduledExports):
    name = "event_scheduled_exports"
    path = "/organizers/{organizer}/events/{event}/scheduled_exports"
    scope = "event"
    level = EVENT
    settings_permission = EVENT_SETTINGS
    read_schema = EventExportOut
    write_schema = EventExportIn

    def sees_all(self, ctx: OrgContext) -> bool:
        assert isinstance(ctx, EventContext)
        return ctx.has_event_permission(ctx.event.id, EVENT_SETTINGS)

    def tenant_query(self, ctx: OrgContext) -> Select[Any]:
        assert isinstance(ctx, EventContext)
        return select(ScheduledExport).where(
            ScheduledExport.organizer_id == ctx.organizer_id,
            ScheduledExport.event_id == ctx.event.id,
        )

    def zone_name(self, ctx: OrgContext, data: BaseModel) -> str:
        assert isinstance(ctx, EventContext)
        return ctx.event.timezone


class OrganizerScheduledExports(ScheduledExports):
    name = "organizer_scheduled_exports"
    path = "/organizers/{organizer}/scheduled_exports"
    scope = "organizer"
    level = ORGANIZER
    settings_permission = ORGANIZER_SETTINGS
    read_schema = OrganizerExportOut
    write_schema = OrganizerExportIn

    def sees_all(self, ctx: OrgContext) -> bool:
        return ctx.has_organizer_permission(ORGANIZER_SETTINGS)

    def tenant_query(self, ctx: OrgContext) -> Select[Any]:
        return select(ScheduledExport).where(
            ScheduledExport.organizer_id == ctx.organizer_id,
            ScheduledExport.event_id.is_(None),
        )

    def zone_name(self, ctx: OrgContext, data: BaseModel) -> str:
        assert isinstance(data, OrganizerExportIn)
        return data.timezone


event_exports = EventScheduledExports()
organizer_exports = OrganizerScheduledExports()
