"""Administrator actions used by the CLI: users, organizers and the demo data set."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import generate_token, hash_password, hash_token
from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
from admit.config import Settings
from admit.db import create_database
from admit.events.plugins import PLUGINS
from admit.kit.resources.schema import SLUG_RE
from admit.models import (
    CheckinList,
    Event,
    Item,
    ItemAddOn,
    ItemCategory,
    ItemVariation,
    Organizer,
    Question,
    QuestionOption,
    Quota,
    TaxRule,
    Team,
    TeamAPIToken,
    User,
    question_items,
    quota_items,
    quota_variations,
    team_members,
)

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


async def create_organizer(
    settings: Settings, slug: str, name: str, owner: str | None = None
) -> str:
    """Creates the organizer with an all-permissions "Administrators" team (``owner``, an
    existing user's e-mail address, becomes its member) and returns a new API token of that
    team, so nothing created on the command line is out of reach."""
    if not SLUG_RE.match(slug) or len(slug) > 50:
        raise ValueError("The slug may only contain letters, numbers, dots and dashes.")

    async def work(session: AsyncSession) -> str:
        exists = await session.scalar(select(Organizer.id).where(Organizer.slug == slug))
        if exists:
            raise ValueError(f"An organizer with the slug {slug} exists already.")
        user = None
        if owner is not None:
            user = await _get_user(session, owner)
            if user is None:
                raise ValueError(
                    f"No user has the e-mail address {owner}; create one with `admit createuser`."
                )
        org = Organizer(slug=slug, name=name, plugins=list(PLUGINS))
        session.add(org)
        await session.flush()
        return await _administrators_token(session, org, user)

    result = await _in_session(settings, work)
    assert isinstance(result, str)
    return result


async def _administrators_token(
    session: AsyncSession, org: Organizer, member: User | None, reuse: str | None = None
) -> str:
    """The organizer's "Administrators" team (made with every permission when missing),
    ``member`` added to it, and a new API token of that team; or ``reuse``, when that is
    still an active token of the team."""
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
    if member is not None:
        joined = await session.scalar(
            select(team_members.c.user_id).where(
                team_members.c.team_id == team.id, team_members.c.user_id == member.id
            )
        )
        if joined is None:
            await session.execute(insert(team_members).values(team_id=team.id, user_id=member.id))
    if reuse:
        alive = await session.scalar(
            select(TeamAPIToken.id).where(
                TeamAPIToken.team_id == team.id,
                TeamAPIToken.token_hash == hash_token(reuse),
                TeamAPIToken.active.is_(True),
            )
        )
        if alive is not None:
            return reuse
    token = generate_token()
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    name = f"demo {stamp}" if reuse is not None else f"cli {stamp}"
    session.add(TeamAPIToken(team_id=team.id, name=name, token_hash=hash_token(token)))
    return token


# The demo's API token in plain text, so that ``admit demo`` (each ``make run``) prints the
# same token instead of minting another that never expires. Tokens are stored hashed; this
# file (owner-only, 0600) is the one place the plain value is kept.
DEMO_TOKEN_FILE = "demo_token"


def _read_demo_token(settings: Settings) -> str:
    try:
        return (settings.data_dir / DEMO_TOKEN_FILE).read_text().strip()
    except OSError:
        return ""


def _write_demo_token(settings: Settings, token: str) -> None:
    """Written owner-only from the start, then moved into place (never world-readable)."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    path = settings.data_dir / DEMO_TOKEN_FILE
    temporary = path.with_suffix(".tmp")
    temporary.unlink(missing_ok=True)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")
    os.replace(temporary, path)


async def _demo_catalog(session: AsyncSession, event: Event) -> None:
    """A small but realistic catalog: tickets, a shirt add-on with sizes, a question."""
    vat = TaxRule(
        event_id=event.id,
        name={"en": "VAT"},
        rate=Decimal("19.00"),
        default=True,
        code="S/standard",
        home_country="DE",
    )
    tickets = ItemCategory(event_id=event.id, name={"en": "Tickets"}, position=0)
    merch = ItemCategory(event_id=event.id, name={"en": "Merchandise"}, position=1, is_addon=True)
    session.add_all([vat, tickets, merch])
    await session.flush()

    def item(**fields: object) -> Item:
        return Item(event_id=event.id, tax_rule_id=vat.id, **fields)

    regular = item(
        name={"en": "Regular ticket"},
        default_price=Decimal("120.00"),
        category_id=tickets.id,
        admission=True,
        personalized=True,
        position=0,
    )
    student = item(
        name={"en": "Student ticket"},
        default_price=Decimal("60.00"),
        category_id=tickets.id,
        admission=True,
        personalized=True,
        position=1,
    )
    shirt = item(
        name={"en": "Conference T-shirt"},
        default_price=Decimal("25.00"),
        category_id=merch.id,
        position=2,
    )
    session.add_all([regular, student, shirt])
    await session.flush()
    for position, size in enumerate(("S", "M", "L", "XL")):
        session.add(ItemVariation(item_id=shirt.id, value={"en": size}, position=position))
    for ticket in (regular, student):
        session.add(ItemAddOn(base_item_id=ticket.id, addon_category_id=merch.id, max_count=1))
    diet = Question(
        event_id=event.id,
        question={"en": "Dietary requirements"},
        type="C",
        identifier="DIET",
        position=0,
    )
    session.add(diet)
    await session.flush()
    for position, (ident, answer) in enumerate(
        (("NONE", "None"), ("VEGETARIAN", "Vegetarian"), ("VEGAN", "Vegan"))
    ):
        session.add(
            QuestionOption(
                question_id=diet.id, identifier=ident, answer={"en": answer}, position=position
            )
        )
    await session.execute(
        insert(question_items),
        [{"question_id": diet.id, "item_id": i.id} for i in (regular, student)],
    )
    await _demo_sales_and_gate(session, event, tickets=(regular, student), shirt=shirt)


async def _demo_sales_and_gate(
    session: AsyncSession, event: Event, *, tickets: tuple[Item, ...], shirt: Item
) -> None:
    """What selling and scanning need at once: quotas for every product (nothing sells
    without one) and a check-in list for the entrance."""
    seats = Quota(event_id=event.id, name="Conference seats", size=500, position=0)
    shirts = Quota(event_id=event.id, name="T-shirts", size=200, position=1)
    session.add_all([seats, shirts, CheckinList(event_id=event.id, name="Entrance")])
    await session.flush()
    await session.execute(
        insert(quota_items),
        [{"quota_id": seats.id, "item_id": t.id} for t in tickets]
        + [{"quota_id": shirts.id, "item_id": shirt.id}],
    )
    variations = await session.scalars(
        select(ItemVariation.id).where(ItemVariation.item_id == shirt.id)
    )
    await session.execute(
        insert(quota_variations),
        [{"quota_id": shirts.id, "variation_id": v} for v in variations],
    )


@dataclass
class DemoResult:
    organizer: str
    event: str
    email: str
    password: str
    token: str
    ticket_item: int = 0  # the regular ticket's id
    checkin_list: int = 0  # the entrance list's id


async def load_demo(settings: Settings) -> DemoResult:
    async def work(session: AsyncSession) -> DemoResult:
        org = (
            await session.execute(select(Organizer).where(Organizer.slug == "demo"))
        ).scalar_one_or_none()
        if org is None:
            org = Organizer(
                slug="demo",
                name="Demo Organizer",
                plugins=list(PLUGINS),
                # buyers may sign up for a customer account in the demo shop
                settings={"customer_accounts": True, "contact_mail": DEMO_EMAIL},
            )
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
            # Live (it has quotas, and bank transfer is switched on): a scanner paired with
            # the demo finds it in ``device/eventselection``.
            event = Event(
                organizer_id=org.id,
                slug="democon",
                live=True,
                # The shop sells at once: bank transfer with an example account (the
                # organizer's own goes into E/settings/), tickets downloadable once paid.
                settings={
                    "payment_banktransfer__enabled": True,
                    "payment_banktransfer_bank_details_sepa_name": "Demo Organizer",
                    "payment_banktransfer_bank_details_sepa_iban": "DE02120300000000202051",
                    "payment_banktransfer_bank_details_sepa_bic": "BYLADEM1001",
                    "ticket_download": True,
                    "contact_mail": DEMO_EMAIL,
                },
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
        if not await session.scalar(select(func.count()).where(Item.event_id == event.id)):
            await _demo_catalog(session, event)
        user = await _get_user(session, DEMO_EMAIL)
        if user is None:
            user = User(email=DEMO_EMAIL, fullname="Demo Admin",
                        password_hash=hash_password(DEMO_PASSWORD))  # fmt: skip
            session.add(user)
            await session.flush()
        token = await _administrators_token(session, org, user, reuse=_read_demo_token(settings))
        ticket = await session.scalar(
            select(Item.id).where(Item.event_id == event.id).order_by(Item.position, Item.id)
        )
        gate = await session.scalar(
            select(CheckinList.id).where(CheckinList.event_id == event.id).order_by(CheckinList.id)
        )
        return DemoResult(
            org.slug, event.slug, DEMO_EMAIL, DEMO_PASSWORD, token, ticket or 0, gate or 0
        )

    result = await _in_session(settings, work)
    assert isinstance(result, DemoResult)
    if result.token != _read_demo_token(settings):
        _write_demo_token(settings, result.token)
    return result
