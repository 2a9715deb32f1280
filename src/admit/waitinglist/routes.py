"""Waiting list entries ``E/waitinglistentries/`` (CRUD, ``send_voucher``) and the Admit
extension ``E/waitinglist_settings/`` (automatic voucher assignment, voucher validity).

Entries are read with ``event.orders:read`` and written with ``event.orders:write``; the
settings are written with ``event.settings.general:write``. Importing this module registers
the waiting list count in quota availability.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends
from pydantic import BaseModel
from sqlalchemy import func
from starlette.responses import Response

from admit.db import utcnow
from admit.kit.http.body import read_object
from admit.kit.http.context import EventAccess, EventContext, OrgContext, public_base_url
from admit.kit.http.errors import APIError
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import Resource, flush_guard, mount_crud, parse_update
from admit.kit.resources.filtering import (
    Filter,
    FilterSet,
    Ordering,
    parse_bool,
    parse_int,
    parse_pk,
    parse_str,
)
from admit.models import WaitingListEntry, WaitingListSettings
from admit.waitinglist import service, settings_keys
from admit.waitinglist.schemas import (
    WaitingListEntryIn,
    WaitingListEntryOut,
    WaitingListSettingsIn,
    WaitingListSettingsOut,
)

READ = "event.orders:read"
WRITE = "event.orders:write"
SETTINGS_WRITE = "event.settings.general:write"
E = "/organizers/{organizer}/events/{event}"

router = api_router()

FILTERS = FilterSet(
    (
        Filter.where(
            "email", parse_str, lambda v: func.lower(WaitingListEntry.email) == v.strip().lower()
        ),
        Filter.eq("locale", WaitingListEntry.locale),
        Filter(
            "has_voucher",
            parse_bool,
            lambda q, v: q.where(
                WaitingListEntry.voucher_id.is_not(None)
                if v
                else WaitingListEntry.voucher_id.is_(None)
            ),
        ),
        Filter.eq("item", WaitingListEntry.item_id, parse_int),
        Filter.eq("variation", WaitingListEntry.variation_id, parse_int),
        Filter.eq("subevent", WaitingListEntry.subevent_id, parse_int),
    )
)
ORDERING = Ordering(
    fields={
        "id": WaitingListEntry.id,
        "created": WaitingListEntry.created,
        "email": WaitingListEntry.email,
        "item": WaitingListEntry.item_id,
        "priority": WaitingListEntry.priority,
    },
    default=("created",),
    pk=WaitingListEntry.id,
)


class WaitingListResource(Resource[WaitingListEntry]):
    name = "waitinglistentries"
    tag = "waiting list"
    path = f"{E}/waitinglistentries"
    model = WaitingListEntry
    read_schema = WaitingListEntryOut
    write_schema = WaitingListEntryIn
    read_permission = READ
    write_permission = WRITE
    filters = FILTERS
    ordering = ORDERING

    def to_read(self, ctx: OrgContext, obj: WaitingListEntry) -> Any:
        return service.to_read(obj)

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: WaitingListEntry | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, WaitingListEntryIn) and isinstance(ctx, EventContext)
        await service.validate_entry(ctx.session, ctx.event, data, obj)

    def apply(
        self, ctx: OrgContext, obj: WaitingListEntry, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, WaitingListEntryIn)
        service.apply(obj, data)

    def new_object(self, ctx: OrgContext) -> WaitingListEntry:
        entry = super().new_object(ctx)
        entry.created = utcnow()
        return entry

    async def perform_create(
        self, ctx: OrgContext, data: BaseModel, supplied: set[str]
    ) -> WaitingListEntry:
        entry = await super().perform_create(ctx, data, supplied)
        await service.notify_entry(ctx.session, entry, service.ADDED, ctx.organizer_id)
        return entry

    async def perform_update(
        self, ctx: OrgContext, obj: WaitingListEntry, data: BaseModel, supplied: set[str]
    ) -> None:
        await super().perform_update(ctx, obj, data, supplied)
        await service.notify_entry(ctx.session, obj, service.CHANGED, ctx.organizer_id)

    async def perform_delete(self, ctx: OrgContext, obj: WaitingListEntry) -> Response:
        await service.notify_entry(ctx.session, obj, service.DELETED, ctx.organizer_id)
        return await super().perform_delete(ctx, obj)

    def current_state(
        self, ctx: OrgContext, obj: WaitingListEntry, raw: dict[str, Any]
    ) -> dict[str, Any]:
        """``name`` is read from ``name_parts``: only the parts are kept, and neither when the
        body names the entry anew (one of the two may be sent, not both)."""
        current = self.serialize(ctx, obj)
        current.pop("name", None)
        if "name" in raw or "name_parts" in raw:
            current.pop("name_parts", None)
        return current

    async def handle_update(self, ctx: OrgContext, pk: str, partial: bool) -> Response:
        entry = await service.lock_entry(ctx.session, parse_pk(pk), ctx.event.id)  # type: ignore[attr-defined]
        if entry.voucher_id is not None:
            raise APIError(403, service.FROZEN_CHANGE)
        return await super().handle_update(ctx, pk, partial)

    async def handle_delete(self, ctx: OrgContext, pk: str) -> Response:
        entry = await service.lock_entry(ctx.session, parse_pk(pk), ctx.event.id)  # type: ignore[attr-defined]
        if entry.voucher_id is not None:
            raise APIError(403, service.FROZEN_DELETE)
        return await self.perform_delete(ctx, entry)


entries = WaitingListResource()
mount_crud(router, entries)


@router.post(
    f"{E}/waitinglistentries/{{id}}/send_voucher/",
    name="waitinglistentries-send-voucher",
    tags=["waiting list"],
    status_code=204,
)
async def send_voucher(
    id: str, ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]
) -> Response:
    """Assigns a single-use, quota-blocking voucher and mails it; 400 when impossible."""
    await service.send_voucher(ctx.session, ctx.event, parse_pk(id), public_base_url(ctx.request))
    return no_content()


def _settings_body(settings: WaitingListSettings) -> dict[str, Any]:
    return WaitingListSettingsOut.model_validate(settings).model_dump(mode="json")


@router.get(
    f"{E}/waitinglist_settings/",
    name="waitinglist-settings",
    tags=["waiting list"],
    response_model=WaitingListSettingsOut,
)
async def get_settings(ctx: Annotated[EventContext, Depends(EventAccess(READ))]) -> Response:
    """Admit extension: how the event's waiting list hands out vouchers."""
    return JSONResponse(_settings_body(await service.settings_of(ctx.session, ctx.event.id)))


async def _update_settings(ctx: EventContext, partial: bool) -> Response:
    current = await service.settings_of(ctx.session, ctx.event.id)
    known = {"auto_assign": current.auto_assign, "voucher_hours": current.voucher_hours}
    data, _supplied = parse_update(
        WaitingListSettingsIn, known, await read_object(ctx.request), partial
    )
    assert isinstance(data, WaitingListSettingsIn)
    stored = await ctx.session.get(WaitingListSettings, ctx.event.id, with_for_update=True)
    if stored is None:
        stored = WaitingListSettings(event_id=ctx.event.id)
        ctx.session.add(stored)
    stored.auto_assign = data.auto_assign
    stored.voucher_hours = data.voucher_hours
    await flush_guard(ctx.session.flush())
    return JSONResponse(_settings_body(stored))


@router.patch(
    f"{E}/waitinglist_settings/",
    name="waitinglist-settings-patch",
    tags=["waiting list"],
    response_model=WaitingListSettingsOut,
    openapi_extra=json_body(WaitingListSettingsIn),
)
async def patch_settings(
    ctx: Annotated[EventContext, Depends(EventAccess(SETTINGS_WRITE))],
) -> Response:
    """Update waiting list settings

    Changes the event's waiting list settings given in the body (automatic voucher assignment,
    how long a sent voucher stays valid).
    """
    return await _update_settings(ctx, partial=True)


@router.put(
    f"{E}/waitinglist_settings/",
    name="waitinglist-settings-put",
    tags=["waiting list"],
    response_model=WaitingListSettingsOut,
    openapi_extra=json_body(WaitingListSettingsIn),
)
async def put_settings(
    ctx: Annotated[EventContext, Depends(EventAccess(SETTINGS_WRITE))],
) -> Response:
    """Replace waiting list settings

    Replaces the event's waiting list settings; an optional field left out keeps its stored
    value.
    """
    return await _update_settings(ctx, partial=False)


service.register()
settings_keys.register()
