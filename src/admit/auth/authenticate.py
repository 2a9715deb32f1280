"""Turns the ``Authorization`` header into a :class:`Principal` with one or two queries."""

from __future__ import annotations

from fastapi import Request
from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import hash_token
from admit.kit.context import Grant, Principal, unauthenticated
from admit.models import Organizer, Team, TeamAPIToken, team_limit_events


async def authenticate_request(request: Request, session: AsyncSession) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _, credential = header.strip().partition(" ")
    scheme = scheme.lower()
    credential = credential.strip()
    if scheme == "token" and credential:
        return await _team_token(session, credential)
    # Device and OAuth (Bearer) credentials are resolved here once those schemes exist;
    # until then they are "not provided", as an unknown scheme is.
    raise unauthenticated()


# Built once: the hot path only binds the hash.
_TOKEN_QUERY = (
    select(
        TeamAPIToken.id,
        TeamAPIToken.active,
        Team.id,
        Team.all_events,
        Team.all_event_permissions,
        Team.limit_event_permissions,
        Team.all_organizer_permissions,
        Team.limit_organizer_permissions,
        Organizer.id,
        Organizer.slug,
    )
    .join(Team, Team.id == TeamAPIToken.team_id)
    .join(Organizer, Organizer.id == Team.organizer_id)
    .where(TeamAPIToken.token_hash == bindparam("token_hash"))
)
_TEAM_EVENTS_QUERY = select(team_limit_events.c.event_id).where(
    team_limit_events.c.team_id == bindparam("team_id")
)


async def _team_token(session: AsyncSession, token: str) -> Principal:
    # Core execution on the session's connection: no ORM compile/load step on the hot path.
    conn = await session.connection()
    row = (await conn.execute(_TOKEN_QUERY, {"token_hash": hash_token(token)})).first()
    if row is None:
        raise unauthenticated("Invalid token.")
    (token_id, active, team_id, all_events, all_ev_perm, ev_perms, all_org_perm, org_perms,
     org_id, org_slug) = row  # fmt: skip
    if not active:
        raise unauthenticated("Token inactive or deleted.")
    event_ids: frozenset[int] = frozenset()
    if not all_events:
        rows = await conn.execute(_TEAM_EVENTS_QUERY, {"team_id": team_id})
        event_ids = frozenset(rows.scalars())
    grant = Grant(
        organizer_id=org_id,
        organizer_slug=org_slug,
        all_events=all_events,
        event_ids=event_ids,
        all_event_permissions=all_ev_perm,
        event_permissions=frozenset(ev_perms or ()),
        all_organizer_permissions=all_org_perm,
        organizer_permissions=frozenset(org_perms or ()),
    )
    return Principal(kind="token", id=token_id, grants=(grant,), team_id=team_id)
