"""The scheduled exports API at event and organizer level (see :mod:`.service`).

List, retrieve, PUT/PATCH and DELETE are declared CRUD routes without a permission of their
own: what a caller sees follows the visibility rules in the service. Create has its own
access check: the caller must hold some permission where the export lives (the exporter's
own permission is checked against the body), and then be a user (a token or device is 403).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Request
from starlette.responses import Response

from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
from admit.kit.http.context import (
    AnyEventPermission,
    EventContext,
    OrganizerAccess,
    OrgContext,
    Session,
)
from admit.kit.http.errors import forbidden
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import mount_crud
from admit.scheduled_exports.schemas import (
    EventExportIn,
    EventExportOut,
    OrganizerExportIn,
    OrganizerExportOut,
)
from admit.scheduled_exports.service import event_exports, organizer_exports

# The permission most exporters need; it labels the create check (any one of
# ``permissions`` passes it).
LABEL = "event.orders:read"
ANY_EVENT_PERMISSION = (LABEL, *(p for p in EVENT_PERMISSIONS if p != LABEL))

router = api_router(tags=["scheduled_exports"])


def EventCreateAccess() -> AnyEventPermission:
    """The event, and any event permission on it."""
    return AnyEventPermission(*ANY_EVENT_PERMISSION)


class OrganizerCreateAccess(OrganizerAccess):
    """The organizer, and any organizer permission or any event permission in it."""

    def __init__(self) -> None:
        super().__init__(LABEL)
        self.permissions = (*ANY_EVENT_PERMISSION, *ORGANIZER_PERMISSIONS)
        self._organizer = OrganizerAccess()

    async def __call__(
        self,
        request: Request,
        session: Session,
        organizer: Annotated[str, Path(description="The organizer's slug")],
    ) -> OrgContext:
        ctx = await self._organizer(request, session, organizer)
        if not any(
            g.has_organizer_permission(p) or g.has_event_permission(p)
            for g in ctx.grants
            for p in self.permissions
        ):
            raise forbidden()
        return ctx


EventCreate = Annotated[EventContext, Depends(EventCreateAccess())]
OrganizerCreate = Annotated[OrgContext, Depends(OrganizerCreateAccess())]


@router.post(
    f"{event_exports.path}/",
    name="event_scheduled_exports-create",
    status_code=201,
    response_model=EventExportOut,
    openapi_extra=json_body(EventExportIn),
)
async def create_event_export(ctx: EventCreate) -> Response:
    """A scheduled export of this event, owned by the calling user (OAuth only: a team
    token or device gets 403)."""
    return await event_exports.handle_create(ctx)


@router.post(
    f"{organizer_exports.path}/",
    name="organizer_scheduled_exports-create",
    status_code=201,
    response_model=OrganizerExportOut,
    openapi_extra=json_body(OrganizerExportIn),
)
async def create_organizer_export(ctx: OrganizerCreate) -> Response:
    """An organizer-level scheduled export, owned by the calling user (OAuth only)."""
    return await organizer_exports.handle_create(ctx)


mount_crud(router, event_exports)
mount_crud(router, organizer_exports)
