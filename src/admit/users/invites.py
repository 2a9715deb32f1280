"""Team invitations: the page the invite mail links to. An invitation is good once, for
``ADMIT_INVITE_DAYS`` days after it was sent."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.models import Organizer, Team, TeamInvite, User, team_members


@dataclass(frozen=True)
class Invitation:
    id: int
    email: str
    team_id: int
    team_name: str
    organizer_name: str
    expired: bool


async def find(session: AsyncSession, token: str, valid_days: float) -> Invitation | None:
    if not token or len(token) > 64 or not token.isascii():
        return None
    query = (
        select(TeamInvite.id, TeamInvite.email, TeamInvite.created, Team.id, Team.name)
        .add_columns(Organizer.name)
        .join(Team, Team.id == TeamInvite.team_id)
        .join(Organizer, Organizer.id == Team.organizer_id)
        .where(TeamInvite.token == token)
    )
    row = (await session.execute(query)).one_or_none()
    if row is None:
        return None
    invite_id, email, created, team_id, team_name, organizer_name = row
    expired = created + dt.timedelta(days=valid_days) < utcnow()
    return Invitation(invite_id, email, team_id, team_name, organizer_name, expired)


async def accept(session: AsyncSession, invitation: Invitation, user: User) -> None:
    """Adds the user to the team and spends the invitation (deleting it: single use)."""
    deleted = await session.execute(delete(TeamInvite).where(TeamInvite.id == invitation.id))
    if not deleted.rowcount:
        return  # accepted concurrently
    member = await session.scalar(
        select(func.count())
        .select_from(team_members)
        .where(team_members.c.team_id == invitation.team_id, team_members.c.user_id == user.id)
    )
    if not member:
        await session.execute(
            insert(team_members).values(team_id=invitation.team_id, user_id=user.id)
        )
