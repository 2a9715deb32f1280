"""Turns the ``Authorization`` header into a :class:`Principal`, usually in one query."""

from __future__ import annotations

from fastapi import Request
from sqlalchemy import and_, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import credential_row
from admit.auth.device_auth import device_token
from admit.kit.http.context import (
    EVENT_ROW_COLUMNS,
    Grant,
    Principal,
    unauthenticated,
)
from admit.kit.http.errors import APIError
from admit.models import Event, Organizer, Team, TeamAPIToken, team_limit_events
from admit.oauth.bearer import bearer_token


async def authenticate_request(request: Request, session: AsyncSession) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _, credential = header.strip().partition(" ")
    scheme = scheme.lower()
    credential = credential.strip()
    if scheme == "token" and credential:
        return await _team_token(request, session, credential)
    if scheme == "device" and credential:
        return await device_token(request, session, credential)
    if scheme == "bearer" and credential:
        # Always from the database, never the lane's cache: revocation holds at once.
        try:
            return await bearer_token(request, session, credential)
        except APIError:
            raise unauthenticated(BEARER_REFUSED) from None
    if not header.strip() or (scheme in ("token", "device", "bearer") and not credential):
        raise unauthenticated()
    raise unauthenticated(SCHEMES_ACCEPTED)


SCHEMES_ACCEPTED = (
    'Unsupported authorization header. Send "Authorization: Token <team API token>", '
    '"Authorization: Device <device API token>" or "Authorization: Bearer <OAuth access token>".'
)
# A team token sent as a Bearer token is the usual mix-up: the message says where it goes.
BEARER_REFUSED = (
    "Invalid, expired or revoked OAuth access token. A team API token goes in "
    '"Authorization: Token <token>", a device token in "Authorization: Device <token>".'
)


# Built once: the hot path only binds the hash.
_TOKEN_COLUMNS = (
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
_TOKEN_QUERY = (
    select(*_TOKEN_COLUMNS)
    .join(Team, Team.id == TeamAPIToken.team_id)
    .join(Organizer, Organizer.id == Team.organizer_id)
    .where(TeamAPIToken.token_hash == bindparam("token_hash"))
)
# A read of an event URL also fetches the event in the same round trip (see prefetch_event).
_TOKEN_AND_EVENT_QUERY = (
    select(*_TOKEN_COLUMNS, *EVENT_ROW_COLUMNS)
    .join(Team, Team.id == TeamAPIToken.team_id)
    .join(Organizer, Organizer.id == Team.organizer_id)
    .outerjoin(
        Event, and_(Event.organizer_id == Organizer.id, Event.slug == bindparam("event_slug"))
    )
    .where(TeamAPIToken.token_hash == bindparam("token_hash"))
)
_TEAM_EVENTS_QUERY = select(team_limit_events.c.event_id).where(
    team_limit_events.c.team_id == bindparam("team_id")
)


async def _team_token(request: Request, session: AsyncSession, token: str) -> Principal:
    n = len(_TOKEN_COLUMNS)
    queries = (_TOKEN_QUERY, _TOKEN_AND_EVENT_QUERY)
    row = await credential_row(request, session, token, queries, n, n - 2)
    if row is None:
        raise unauthenticated("Invalid token.")
    (token_id, active, team_id, all_events, all_ev_perm, ev_perms, all_org_perm, org_perms,
     org_id, org_slug) = row  # fmt: skip
    if not active:
        raise unauthenticated("Token inactive or deleted.")
    event_ids: frozenset[int] = frozenset()
    if not all_events:
        fast = session.info["fast"]
        event_ids = frozenset(await fast.column(session, _TEAM_EVENTS_QUERY, {"team_id": team_id}))
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
