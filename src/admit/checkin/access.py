"""Who may do what with check-in.

Scanning (redeem, annul, search) needs ``event.orders:checkin`` or ``event.orders:write`` on
the event of every list it names; reading lists, their status and positions and the history
needs that or ``event.orders:read``; configuring lists and auto check-in rules needs
``event.settings.general:write``. Devices hold ``event.orders:read`` and
``event.orders:checkin`` for their events, so they scan and read but never configure.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Request

from admit.kit.http.context import (
    AnyEventPermission,
    EventAccess,
    OrganizerAccess,
    OrgContext,
    Session,
)
from admit.kit.http.errors import forbidden

SCAN = ("event.orders:checkin", "event.orders:write")
READ = ("event.orders:read", "event.orders:checkin", "event.orders:write")
CONFIGURE = "event.settings.general:write"


def may_scan(ctx: OrgContext, event_id: int) -> bool:
    return any(ctx.has_event_permission(event_id, p) for p in SCAN)


def scan_events(ctx: OrgContext) -> list[int] | None:
    """The events of the organizer the caller may scan on; None for all of them."""
    scanning = [g for g in ctx.grants if any(g.has_event_permission(p) for p in SCAN)]
    if any(g.all_events for g in scanning):
        return None
    return sorted({e for g in scanning for e in g.event_ids})


class ScanAccess(OrganizerAccess):
    """Organizer-level check-in calls: the caller must be able to scan for some event here;
    each list named in the body is then checked against its own event."""

    def __init__(self) -> None:
        super().__init__(SCAN[0])
        self._organizer = OrganizerAccess()

    async def __call__(
        self,
        request: Request,
        session: Session,
        organizer: Annotated[str, Path(description="The organizer's slug")],
    ) -> OrgContext:
        ctx = await self._organizer(request, session, organizer)
        if not any(
            g.all_event_permissions or any(p in g.event_permissions for p in SCAN)
            for g in ctx.grants
        ):
            raise forbidden()
        return ctx


def read_access() -> AnyEventPermission:
    return AnyEventPermission(*READ)


def configure_access() -> EventAccess:
    return EventAccess(CONFIGURE)
