"""Team rules: event references, legacy flags, invitations and API tokens."""

from __future__ import annotations

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import generate_token, hash_token
from admit.auth.permissions import LEGACY_FLAGS, apply_legacy_flag, legacy_flag
from admit.kit.http.errors import FieldErrors
from admit.mail.outbox import queue_mail
from admit.mail.render import render_mail
from admit.models import Event, Team, TeamAPIToken, TeamInvite, User, team_members
from admit.teams.schemas import TeamIn


def team_to_read(team: Team) -> dict:
    org_perms = list(team.limit_organizer_permissions or [])
    ev_perms = list(team.limit_event_permissions or [])
    flags = {
        flag: legacy_flag(
            flag,
            all_organizer=team.all_organizer_permissions,
            organizer=org_perms,
            all_event=team.all_event_permissions,
            event=ev_perms,
        )
        for flag in LEGACY_FLAGS
    }
    return {
        "id": team.id,
        "name": team.name,
        "all_events": team.all_events,
        "limit_events": [e.slug for e in team.limit_events],
        "require_2fa": team.require_2fa,
        "all_event_permissions": team.all_event_permissions,
        "limit_event_permissions": ev_perms,
        "all_organizer_permissions": team.all_organizer_permissions,
        "limit_organizer_permissions": org_perms,
        **flags,
    }


async def resolve_events(session: AsyncSession, organizer_id: int, slugs: list[str]) -> list[Event]:
    if not slugs:
        return []
    events = (
        (
            await session.execute(
                select(Event).where(Event.organizer_id == organizer_id, Event.slug.in_(slugs))
            )
        )
        .scalars()
        .all()
    )
    found = {e.slug for e in events}
    missing = [s for s in slugs if s not in found]
    if missing:
        raise FieldErrors(
            {"limit_events": [f'Object with slug="{s}" does not exist.' for s in missing]}
        )
    return list(events)


CURRENT_PERMISSION_FIELDS = (
    "all_event_permissions",
    "limit_event_permissions",
    "all_organizer_permissions",
    "limit_organizer_permissions",
)
MIXED_PERMISSIONS = "You cannot set deprecated and current permission attributes at the same time."


def check_permission_style(data: TeamIn, supplied: set[str]) -> None:
    """One request speaks either the legacy ``can_*`` flags or the permission lists: mixing
    them leaves no clear answer which wins, so the reference refuses it (400). A flag sent as
    null is no flag (it is ignored, as before)."""
    flags = [f for f in supplied & LEGACY_FLAGS.keys() if getattr(data, f) is not None]
    if flags and supplied.intersection(CURRENT_PERMISSION_FIELDS):
        raise FieldErrors.general(MIXED_PERMISSIONS)


def apply_team(team: Team, data: TeamIn, supplied: set[str], events: list[Event]) -> None:
    team.name = data.name
    team.all_events = data.all_events
    team.require_2fa = data.require_2fa
    team.all_event_permissions = data.all_event_permissions
    team.all_organizer_permissions = data.all_organizer_permissions
    org_perms = list(data.limit_organizer_permissions)
    ev_perms = list(data.limit_event_permissions)
    for flag in LEGACY_FLAGS:
        value = getattr(data, flag)
        if flag in supplied and value is not None:
            apply_legacy_flag(flag, value, org_perms, ev_perms)
    team.limit_organizer_permissions = org_perms
    team.limit_event_permissions = ev_perms
    team.limit_events = events


async def invite(
    session: AsyncSession, team: Team, email: str, base_url: str
) -> tuple[TeamInvite | None, str]:
    """Adds an existing account directly; otherwise stores an invite and mails it."""
    email = email.strip()
    user = (
        await session.execute(select(User).where(func.lower(User.email) == email.lower()))
    ).scalar_one_or_none()
    if user is not None:
        already = await session.scalar(
            select(func.count())
            .select_from(team_members)
            .where(team_members.c.team_id == team.id, team_members.c.user_id == user.id)
        )
        if already:
            raise FieldErrors.single("email", "This user already is a member of this team.")
        await session.execute(insert(team_members).values(team_id=team.id, user_id=user.id))
        return None, user.email
    existing = await session.scalar(
        select(func.count())
        .select_from(TeamInvite)
        .where(TeamInvite.team_id == team.id, func.lower(TeamInvite.email) == email.lower())
    )
    if existing:
        raise FieldErrors.single("email", "This user already has been invited for this team.")
    invitation = TeamInvite(team_id=team.id, email=email, token=generate_token(32))
    session.add(invitation)
    await session.flush()
    subject, text, html = render_mail(
        "team_invite", team=team.name, link=f"{base_url}/invite/{invitation.token}/"
    )
    await queue_mail(
        session,
        to=[email],
        subject=subject,
        body=text,
        html=html,
        organizer_id=team.organizer_id,
    )
    return invitation, email


def new_token(team: Team, name: str) -> tuple[TeamAPIToken, str]:
    secret = generate_token()
    return TeamAPIToken(team_id=team.id, name=name, token_hash=hash_token(secret)), secret
