"""The permissions a job's owner holds now, for work that runs after the request.

An export or a scheduled export runs with the rights of whoever asked for it *at run time*:
a token deactivated, or a team that lost a permission, between the request and the run gets a
failed job, not the data. :func:`current_principal` rebuilds the owner's :class:`Principal` from
the credential rows (team token, device, or a user through all of their teams).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.devices import DEVICE_EVENT_PERMISSIONS, DEVICE_ORGANIZER_PERMISSIONS
from admit.kit.http.context import Grant, Principal
from admit.models import (
    Device,
    Organizer,
    Team,
    TeamAPIToken,
    User,
    device_limit_events,
    team_limit_events,
    team_members,
)

_TEAM_COLUMNS = (
    Team.id,
    Team.all_events,
    Team.all_event_permissions,
    Team.limit_event_permissions,
    Team.all_organizer_permissions,
    Team.limit_organizer_permissions,
    Organizer.id,
    Organizer.slug,
)


async def _team_grants(session: AsyncSession, rows: Sequence[Any]) -> tuple[Grant, ...]:
    limited = [row[0] for row in rows if not row[1]]
    events: dict[int, set[int]] = {}
    if limited:
        query = select(team_limit_events.c.team_id, team_limit_events.c.event_id).where(
            team_limit_events.c.team_id.in_(limited)
        )
        for team_id, event_id in await session.execute(query):
            events.setdefault(team_id, set()).add(event_id)
    return tuple(
        Grant(
            organizer_id=org_id,
            organizer_slug=org_slug,
            all_events=all_events,
            event_ids=frozenset(events.get(team_id, ())),
            all_event_permissions=all_ev,
            event_permissions=frozenset(ev_perms or ()),
            all_organizer_permissions=all_org,
            organizer_permissions=frozenset(org_perms or ()),
        )
        for (team_id, all_events, all_ev, ev_perms, all_org, org_perms, org_id, org_slug) in rows
    )


async def current_principal(
    session: AsyncSession, kind: str | None, id: int | None
) -> Principal | None:
    """The owner as a principal with today's grants; None when the credential is gone or
    no longer active (a deleted or inactive token, a revoked device, a disabled user)."""
    if kind is None or id is None:
        return None
    if kind == "token":
        query = (
            select(TeamAPIToken.active, *_TEAM_COLUMNS)
            .join(Team, Team.id == TeamAPIToken.team_id)
            .join(Organizer, Organizer.id == Team.organizer_id)
            .where(TeamAPIToken.id == id)
        )
        row = (await session.execute(query)).one_or_none()
        if row is None or not row[0]:
            return None
        grants = await _team_grants(session, [tuple(row[1:])])
        return Principal(kind="token", id=id, grants=grants, team_id=row[1])
    if kind == "device":
        query = (
            select(Device.revoked, Device.all_events, Organizer.id, Organizer.slug)
            .join(Organizer, Organizer.id == Device.organizer_id)
            .where(Device.id == id)
        )
        row = (await session.execute(query)).one_or_none()
        if row is None or row.revoked:
            return None
        event_ids: frozenset[int] = frozenset()
        if not row.all_events:
            limits = select(device_limit_events.c.event_id).where(
                device_limit_events.c.device_id == id
            )
            event_ids = frozenset((await session.execute(limits)).scalars())
        grant = Grant(
            organizer_id=row[2],
            organizer_slug=row[3],
            all_events=row.all_events,
            event_ids=event_ids,
            all_event_permissions=False,
            event_permissions=DEVICE_EVENT_PERMISSIONS,
            all_organizer_permissions=False,
            organizer_permissions=DEVICE_ORGANIZER_PERMISSIONS,
        )
        return Principal(kind="device", id=id, grants=(grant,), device_id=id)
    if kind in ("user", "oauth"):
        # An OAuth grant acts for its user; the job records the user's id for both.
        user = await session.get(User, id)
        if user is None or not user.is_active:
            return None
        query = (
            select(*_TEAM_COLUMNS)
            .join(team_members, team_members.c.team_id == Team.id)
            .join(Organizer, Organizer.id == Team.organizer_id)
            .where(team_members.c.user_id == id)
        )
        rows = [tuple(row) for row in await session.execute(query)]
        return Principal(kind=kind, id=id, grants=await _team_grants(session, rows), user_id=id)
    return None


def event_permission(
    principal: Principal, organizer_id: int, event_id: int, permission: str
) -> bool:
    """Whether the principal holds ``permission`` for the event through any of its grants."""
    return any(
        g.organizer_id == organizer_id
        and g.covers_event(event_id)
        and g.has_event_permission(permission)
        for g in principal.grants
    )


def organizer_permission(principal: Principal, organizer_id: int, permission: str) -> bool:
    return any(
        g.organizer_id == organizer_id and g.has_organizer_permission(permission)
        for g in principal.grants
    )
