"""``Authorization: Device <token>``: one statement resolves the device, its organizer and
event limits (and, for reads of an event URL, the event), like the team-token path.

The device's security profile is enforced here, once per request, against the matched route's
path template; the permissions it holds are the fixed device grant (see ``auth/devices.py``).
Routes that need to know which device is calling (check-in records ``device`` and ``gate``)
read :func:`request_device`.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request
from sqlalchemy import String, and_, bindparam, cast, func, literal_column, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import credential_row
from admit.auth.devices import (
    DEVICE_EVENT_PERMISSIONS,
    DEVICE_ORGANIZER_PERMISSIONS,
    profile_allows,
)
from admit.kit.http.context import EVENT_ROW_COLUMNS, Grant, Principal, unauthenticated
from admit.kit.http.errors import forbidden
from admit.kit.lanes.fastlane import ROUTE_TEMPLATE
from admit.kit.resources.pagination import allow_page_size
from admit.models import Device, Event, Organizer, device_limit_events

REVOKED = "Device access has been revoked."
# Scanners that download whole check-in lists (the reference's "full" sync) may ask for pages
# this large on every list (``page_size``), beyond the reference's 50.
DEVICE_PAGE_SIZE = 1000
allow_page_size("device", DEVICE_PAGE_SIZE, "a device token (`Authorization: Device`)")


@dataclass(frozen=True)
class DeviceIdentity:
    """The calling device, as resolved from its token (kept on ``request.state.device``)."""

    pk: int
    device_id: int  # the organizer-internal number
    organizer_id: int
    organizer_slug: str
    gate_id: int | None
    security_profile: str
    token: str  # the credential sent; device/info and device/update echo it back


def request_device(request: Request) -> DeviceIdentity | None:
    """The device making this request, or None for any other kind of caller."""
    return getattr(request.state, "device", None)


# Event ids the device is limited to, as "3,7,9" (one round trip for device and limits).
_LIMITED_EVENTS = (
    select(
        func.aggregate_strings(
            cast(device_limit_events.c.event_id, String),
            literal_column("','"),  # inline: the fast path binds only named parameters
        )
    )
    .where(device_limit_events.c.device_id == Device.id)
    .correlate(Device)
    .scalar_subquery()
)
_DEVICE_COLUMNS = (
    Device.id,
    Device.device_id,
    Device.revoked,
    Device.all_events,
    Device.security_profile,
    Device.gate_id,
    Organizer.id,
    Organizer.slug,
    _LIMITED_EVENTS,
)
_DEVICE_QUERY = (
    select(*_DEVICE_COLUMNS)
    .join(Organizer, Organizer.id == Device.organizer_id)
    .where(Device.api_token_hash == bindparam("token_hash"))
)
_DEVICE_AND_EVENT_QUERY = (
    select(*_DEVICE_COLUMNS, *EVENT_ROW_COLUMNS)
    .join(Organizer, Organizer.id == Device.organizer_id)
    .outerjoin(
        Event, and_(Event.organizer_id == Organizer.id, Event.slug == bindparam("event_slug"))
    )
    .where(Device.api_token_hash == bindparam("token_hash"))
)


def _route_path(request: Request) -> str:
    route = request.scope.get("route")
    path = getattr(route, "path", None) or request.scope.get(ROUTE_TEMPLATE)
    return path or request.url.path


async def device_token(request: Request, session: AsyncSession, token: str) -> Principal:
    n = len(_DEVICE_COLUMNS)
    queries = (_DEVICE_QUERY, _DEVICE_AND_EVENT_QUERY)
    row = await credential_row(request, session, token, queries, n, n - 3)
    if row is None:
        raise unauthenticated("Invalid token.")
    (pk, device_id, revoked, all_events, profile, gate_id, org_id, org_slug, limited) = row
    if revoked:
        raise unauthenticated(REVOKED)
    if not profile_allows(profile, request.method, _route_path(request)):
        raise forbidden()
    event_ids: frozenset[int] = frozenset()
    if not all_events and limited:
        event_ids = frozenset(int(v) for v in limited.split(","))
    request.state.device = DeviceIdentity(
        pk=pk,
        device_id=device_id,
        organizer_id=org_id,
        organizer_slug=org_slug,
        gate_id=gate_id,
        security_profile=profile,
        token=token,
    )
    grant = Grant(
        organizer_id=org_id,
        organizer_slug=org_slug,
        all_events=all_events,
        event_ids=event_ids,
        all_event_permissions=False,
        event_permissions=DEVICE_EVENT_PERMISSIONS,
        all_organizer_permissions=False,
        organizer_permissions=DEVICE_ORGANIZER_PERMISSIONS,
    )
    return Principal(kind="device", id=pk, grants=(grant,), device_id=pk)
