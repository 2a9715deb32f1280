"""Test data written straight to the database, bypassing the API under test."""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from admit.auth.credentials import generate_token, hash_password, hash_token
from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
from admit.events.plugins import PLUGINS
from admit.models import (
    Event,
    Item,
    ItemVariation,
    Organizer,
    Quota,
    SubEvent,
    Team,
    TeamAPIToken,
    User,
    quota_items,
    quota_variations,
    team_limit_events,
    team_members,
)

_seq = itertools.count(1)


def unique(prefix: str) -> str:
    return f"{prefix}{next(_seq)}"


ADMIN_PERMISSIONS: dict[str, Any] = {
    "event_permissions": list(EVENT_PERMISSIONS),
    "organizer_permissions": list(ORGANIZER_PERMISSIONS),
}


def new_organizer(slug: str | None = None, **kw: object) -> Organizer:
    slug = slug or unique("org")
    kw.setdefault("plugins", list(PLUGINS))
    return Organizer(slug=slug, name=kw.pop("name", slug.title()), **kw)


def new_event(organizer: Organizer, slug: str | None = None, **kw: object) -> Event:
    slug = slug or unique("ev")
    kw.setdefault("name", {"en": slug.title()})
    kw.setdefault("date_from", dt.datetime(2030, 5, 1, 10, tzinfo=dt.UTC))
    return Event(organizer_id=organizer.id, slug=slug, **kw)


def new_team(
    organizer: Organizer,
    *,
    all_events: bool = True,
    event_permissions: list[str] | None = None,
    organizer_permissions: list[str] | None = None,
    name: str | None = None,
) -> Team:
    return Team(
        organizer_id=organizer.id,
        name=name or unique("Team "),
        all_events=all_events,
        all_event_permissions=False,
        limit_event_permissions=list(event_permissions or []),
        all_organizer_permissions=False,
        limit_organizer_permissions=list(organizer_permissions or []),
    )


def new_token(team: Team, *, active: bool = True) -> tuple[TeamAPIToken, str]:
    """A token row and its secret (only the hash is stored)."""
    secret = generate_token()
    row = TeamAPIToken(team_id=team.id, name="test", token_hash=hash_token(secret), active=active)
    return row, secret


class Factory:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self.sessionmaker = sessionmaker

    async def _add(self, obj: object) -> object:
        async with self.sessionmaker() as session:
            session.add(obj)
            await session.commit()
            return obj

    async def organizer(self, slug: str | None = None, **kw: object) -> Organizer:
        return await self._add(new_organizer(slug, **kw))  # type: ignore[return-value]

    async def event(self, organizer: Organizer, slug: str | None = None, **kw: object) -> Event:
        return await self._add(new_event(organizer, slug, **kw))  # type: ignore[return-value]

    async def user(self, email: str | None = None, **kw: object) -> User:
        email = email or f"{unique('user')}@example.org"
        if "password" in kw:
            kw["password_hash"] = hash_password(str(kw.pop("password")))
        return await self._add(User(email=email, **kw))  # type: ignore[return-value]

    async def team(
        self,
        organizer: Organizer,
        *,
        all_events: bool = True,
        events: list[Event] = (),  # type: ignore[assignment]
        event_permissions: list[str] | None = None,
        organizer_permissions: list[str] | None = None,
        members: list[User] = (),  # type: ignore[assignment]
        name: str | None = None,
    ) -> Team:
        team = new_team(
            organizer,
            all_events=all_events,
            event_permissions=event_permissions,
            organizer_permissions=organizer_permissions,
            name=name,
        )
        async with self.sessionmaker() as session:
            session.add(team)
            await session.flush()
            for event in events:
                await session.execute(
                    insert(team_limit_events).values(team_id=team.id, event_id=event.id)
                )
            for user in members:
                await session.execute(insert(team_members).values(team_id=team.id, user_id=user.id))
            await session.commit()
        return team

    async def token(self, team: Team, *, active: bool = True) -> str:
        row, secret = new_token(team, active=active)
        await self._add(row)
        return secret

    async def quota(
        self,
        event: Event,
        size: int | None = 10,
        *,
        items: Iterable[Item] = (),
        variations: Iterable[ItemVariation] = (),
        subevent: SubEvent | None = None,
        **kw: Any,
    ) -> Quota:
        kw.setdefault("name", "Quota")
        async with self.sessionmaker() as session:
            obj = Quota(
                event_id=event.id, size=size, subevent_id=subevent.id if subevent else None, **kw
            )
            session.add(obj)
            await session.flush()
            for it in items:
                await session.execute(insert(quota_items).values(quota_id=obj.id, item_id=it.id))
            for var in variations:
                await session.execute(
                    insert(quota_variations).values(quota_id=obj.id, variation_id=var.id)
                )
            await session.commit()
            return obj

    async def admin_token(self, organizer: Organizer) -> str:
        return await self.token(await self.team(organizer, **ADMIN_PERMISSIONS))


@dataclass
class World:
    """Two tenants: ``org`` (with ``event``) and ``other`` (with ``other_event``)."""

    org: Organizer
    event: Event
    other: Organizer
    other_event: Event
    admin: str  # every permission in org
    nobody: str  # a member of org with no permission at all
    outsider: str  # every permission, but in the other organizer


async def build_world(factory: Factory) -> World:
    """The two tenants most tests start from (see :class:`World`), written in one
    transaction: most tests start here, and a commit per row cost each of them tens of ms."""
    async with factory.sessionmaker() as session:
        org, other = new_organizer("acme"), new_organizer("rival")
        session.add_all([org, other])
        await session.flush()
        event, other_event = new_event(org, "summit"), new_event(other, "expo")
        teams = [
            new_team(org, **ADMIN_PERMISSIONS),
            new_team(org),
            new_team(other, **ADMIN_PERMISSIONS),
        ]
        session.add_all([event, other_event, *teams])
        await session.flush()
        tokens = [new_token(team) for team in teams]
        session.add_all([row for row, _ in tokens])
        await session.commit()
    admin, nobody, outsider = (secret for _, secret in tokens)
    return World(org, event, other, other_event, admin, nobody, outsider)


def assert_field_errors(response: Any, *fields: str) -> dict:
    """A DRF-shaped 400: a dict of field -> list of strings, naming the given fields."""
    assert response.status_code == 400, response.text
    body = response.json()
    assert isinstance(body, dict) and body, body
    for key, messages in body.items():
        assert isinstance(key, str)
        assert isinstance(messages, list) and messages, body
        assert all(isinstance(m, str) and m for m in messages), body
    for field in fields:
        assert field in body, body
    return body


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Token {token}"}
