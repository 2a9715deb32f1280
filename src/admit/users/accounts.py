"""Accounts: looking users up, passwords, and which organizers a user reaches."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import dummy_hash, hash_fingerprint, hash_password, verify_password
from admit.models import Organizer, Team, User, team_members

MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1024


def prepare_login_timing() -> None:
    """Made when a server starts, so that not even its first failed login takes longer."""
    dummy_hash()


async def find_user(session: AsyncSession, email: str) -> User | None:
    email = email.strip()
    if not email or len(email) > 190:
        return None
    query = select(User).where(func.lower(User.email) == email.lower())
    return (await session.execute(query)).scalar_one_or_none()


def check_password(user: User | None, password: str) -> bool:
    if user is None or not user.is_active:
        verify_password(dummy_hash(), password)
        return False
    return verify_password(user.password_hash, password)


def password_problems(password: str, repeat: str) -> list[str]:
    problems = []
    if len(password) < MIN_PASSWORD_LENGTH:
        problems.append(f"The password must have at least {MIN_PASSWORD_LENGTH} characters.")
    if len(password) > MAX_PASSWORD_LENGTH:
        problems.append("The password is too long.")
    if "\x00" in password:
        problems.append("The password may not contain null characters.")
    if password != repeat:
        problems.append("The two passwords do not match.")
    return problems


def set_password(user: User, password: str) -> None:
    user.password_hash = hash_password(password)


def password_fingerprint(user: User) -> str:
    """Changes whenever the password does: sessions and reset links carry it, so changing
    the password ends every other session and spends every reset link."""
    return hash_fingerprint(user.password_hash)


async def two_factor_required(session: AsyncSession, user_id: int) -> bool:
    """Whether any of the user's teams requires two-factor authentication."""
    query = (
        select(func.count())
        .select_from(team_members)
        .join(Team, Team.id == team_members.c.team_id)
        .where(team_members.c.user_id == user_id, Team.require_2fa.is_(True))
    )
    return bool(await session.scalar(query))


@dataclass(frozen=True)
class OrganizerChoice:
    id: int
    slug: str
    name: str


async def user_organizers(session: AsyncSession, user_id: int) -> list[OrganizerChoice]:
    """The organizers the user belongs to through at least one team, by name."""
    query = (
        select(Organizer.id, Organizer.slug, Organizer.name)
        .join(Team, Team.organizer_id == Organizer.id)
        .join(team_members, team_members.c.team_id == Team.id)
        .where(team_members.c.user_id == user_id)
        .distinct()
        .order_by(Organizer.name, Organizer.id)
    )
    return [OrganizerChoice(*row) for row in await session.execute(query)]
