"""Administrator actions used by the CLI: users, organizers and the demo data set."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import generate_token, hash_password, hash_token
from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
from admit.config import Settings
from admit.db import create_database
from admit.events.plugins import PLUGINS
from admit.kit.schema import SLUG_RE
from admit.models import Event, Organizer, Team, TeamAPIToken, User, team_members

DEMO_EMAIL = "demo@admit.example"
DEMO_PASSWORD = "demo"


async def _in_session(settings: Settings, work) -> object:  # noqa: ANN001
    database = create_database(settings.resolved_database_url)
    try:
        async with database.sessionmaker() as session:
            result = await work(session)
            await session.commit()
            return result
    finally:
        await database.dispose()


async def _get_user(session: AsyncSession, email: str) -> User | None:
    return (
        await session.execute(select(User).where(func.lower(User.email) == email.lower()))
    ).scalar_one_or_none()


async def create_user(settings: Settings, email: str, password: str | None, staff: bool) -> None:
    if "@" not in email:
        raise ValueError(f"{email!r} is not an e-mail address.")

    async def work(session: AsyncSession) -> None:
        if await _get_user(session, email):
            raise ValueError(f"A user with the e-mail address {email} exists already.")
        session.add(
            User(
                email=email,
                is_staff=staff,
                password_hash=hash_password(password) if password else None,
            )
        )

    await _in_session(settings, work)


async def create_organizer(settings: Settings, slug: str, name: str) -> None:
    if not SLUG_RE.match(slug) or len(slug) > 50:
        raise ValueError("The slug may only contain letters, numbers, dots and dashes.")

    async def work(session: AsyncSession) -> None:
        exists = await session.scalar(select(Organizer.id).where(Organizer.slug == slug))
        if exists:
            raise ValueError(f"An organizer with the slug {slug} exists already.")
        session.add(Organizer(slug=slug, name=name, plugins=list(PLUGINS)))

    await _in_session(settings, work)


@dataclass
class DemoResult:
    organizer: str
    event: str
    email: str
    password: str
    token: str


async def load_demo(settings: Settings) -> DemoResult:
    async def work(session: AsyncSession) -> DemoResult:
        org = (
            await session.execute(select(Organizer).where(Organizer.slug == "demo"))
        ).scalar_one_or_none()
        if org is None:
            org = Organizer(slug="demo", name="Demo Organizer", plugins=list(PLUGINS))
            session.add(org)
            await session.flush()
        event = (
            await session.execute(
                select(Event).where(Event.organizer_id == org.id, Event.slug == "democon")
            )
        ).scalar_one_or_none()
        if event is None:
            start = (dt.datetime.now(dt.UTC) + dt.timedelta(days=60)).replace(
                hour=9, minute=0, second=0, microsecond=0
            )
            event = Event(
                organizer_id=org.id,
                slug="democon",
                name={"en": "DemoCon", "de": "DemoCon"},
                currency="EUR",
                date_from=start,
                date_to=start + dt.timedelta(days=2, hours=9),
                location={"en": "Congress Center, Demo City"},
                timezone="Europe/Berlin",
                plugins=["banktransfer", "sendmail", "autocheckin", "ticketoutputpdf"],
            )
            session.add(event)
            await session.flush()
        user = await _get_user(session, DEMO_EMAIL)
        if user is None:
            user = User(email=DEMO_EMAIL, fullname="Demo Admin",
                        password_hash=hash_password(DEMO_PASSWORD))  # fmt: skip
            session.add(user)
            await session.flush()
        team = (
            await session.execute(
                select(Team).where(Team.organizer_id == org.id, Team.name == "Administrators")
            )
        ).scalar_one_or_none()
        if team is None:
            team = Team(
                organizer_id=org.id,
                name="Administrators",
                all_events=True,
                all_event_permissions=True,
                limit_event_permissions=list(EVENT_PERMISSIONS),
                all_organizer_permissions=True,
                limit_organizer_permissions=list(ORGANIZER_PERMISSIONS),
            )
            session.add(team)
            await session.flush()
            await session.execute(insert(team_members).values(team_id=team.id, user_id=user.id))
        token = generate_token()
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        session.add(
            TeamAPIToken(team_id=team.id, name=f"demo {stamp}", token_hash=hash_token(token))
        )
        return DemoResult(org.slug, event.slug, DEMO_EMAIL, DEMO_PASSWORD, token)

    result = await _in_session(settings, work)
    assert isinstance(result, DemoResult)
    return result
