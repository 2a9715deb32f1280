"""``Authorization: Bearer <access token>``: the OAuth caller as a :class:`Principal`.

The principal is the user (``kind="oauth"``, ``id`` and ``user_id`` the user's id, so jobs it
starts belong to the user), holding the grants of the user's teams *today*, limited to the
organizers the user chose when authorizing the application, and the token's scopes: without
``read`` or ``write`` it reaches no organizer; without ``write`` the access check refuses
unsafe methods (``kit/http/context.py``).

Bearer tokens are always looked up in the database, never in the fast lane's credential cache:
revoking a token, refreshing it or revoking the application takes effect in every worker with
the next request. An unknown, expired or revoked token is "not provided", as the reference
answers (its OAuth layer declines such a token rather than rejecting it).
"""

from __future__ import annotations

import datetime as dt

from fastapi import Request
from sqlalchemy import and_, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import hash_token
from admit.auth.owners import _TEAM_COLUMNS, _team_grants
from admit.db import utcnow
from admit.kit.http.context import Principal, unauthenticated
from admit.models import (
    OAuthGrant,
    OAuthToken,
    Organizer,
    Team,
    User,
    oauth_grant_organizers,
    team_members,
)

_TOKEN_QUERY = (
    select(
        OAuthToken.grant_id,
        OAuthToken.scope,
        OAuthToken.expires,
        OAuthToken.access_revoked,
        OAuthGrant.user_id,
        User.is_active,
    )
    .join(OAuthGrant, OAuthGrant.id == OAuthToken.grant_id)
    .join(User, User.id == OAuthGrant.user_id)
    .where(OAuthToken.access_hash == bindparam("token_hash"))
)
# The user's teams in the organizers the grant names.
_TEAMS_QUERY = (
    select(*_TEAM_COLUMNS)
    .join(team_members, team_members.c.team_id == Team.id)
    .join(Organizer, Organizer.id == Team.organizer_id)
    .join(
        oauth_grant_organizers,
        and_(
            oauth_grant_organizers.c.organizer_id == Team.organizer_id,
            oauth_grant_organizers.c.grant_id == bindparam("grant_id"),
        ),
    )
    .where(team_members.c.user_id == bindparam("user_id"))
)
DATA_SCOPES = frozenset({"read", "write"})


async def bearer_token(request: Request, session: AsyncSession, token: str) -> Principal:
    row = await session.info["fast"].one(session, _TOKEN_QUERY, {"token_hash": hash_token(token)})
    if row is None:
        raise unauthenticated()
    grant_id, scope, expires, revoked, user_id, user_active = row
    if expires.tzinfo is None:
        expires = expires.replace(tzinfo=dt.UTC)
    if revoked or not user_active or expires <= utcnow():
        raise unauthenticated()
    scopes = frozenset(scope.split())
    grants = ()
    if scopes & DATA_SCOPES:
        params = {"grant_id": grant_id, "user_id": user_id}
        rows = [tuple(r) for r in await session.execute(_TEAMS_QUERY, params)]
        grants = await _team_grants(session, rows)
    return Principal(kind="oauth", id=user_id, grants=grants, scopes=scopes, user_id=user_id)
