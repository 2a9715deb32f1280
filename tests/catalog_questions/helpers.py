"""Test data and request helpers for the question and question option tests."""

from __future__ import annotations

import itertools
from typing import Any

from admit.models import Event, Item, Question, QuestionOption
from tests.factories import Factory, World, auth


def questions_url(world: World, event: Event | None = None) -> str:
    ev = event or world.event
    org = world.org if ev.organizer_id == world.org.id else world.other
    return f"/api/v1/organizers/{org.slug}/events/{ev.slug}/questions/"


def question_url(world: World, pk: int | str) -> str:
    return f"{questions_url(world)}{pk}/"


def options_url(world: World, question: int | str) -> str:
    return f"{questions_url(world)}{question}/options/"


def option_url(world: World, question: int | str, pk: int | str) -> str:
    return f"{options_url(world, question)}{pk}/"


async def item(factory: Factory, event: Event, name: str = "Ticket") -> Item:
    async with factory.sessionmaker() as session:
        obj = Item(event_id=event.id, name={"en": name})
        session.add(obj)
        await session.commit()
        return obj


async def stored_question(factory: Factory, pk: int) -> Question | None:
    async with factory.sessionmaker() as session:
        return await session.get(Question, pk)


async def stored_options(factory: Factory, question: int) -> list[QuestionOption]:
    from sqlalchemy import select

    async with factory.sessionmaker() as session:
        query = select(QuestionOption).where(QuestionOption.question_id == question)
        return list(await session.scalars(query.order_by(QuestionOption.id)))


_numbers = itertools.count(1)


def fresh_identifier(prefix: str = "X") -> str:
    return f"{prefix}{next(_numbers)}"


def with_identifiers(fields: dict[str, Any]) -> dict[str, Any]:
    """The body with made-up identifiers where the question or an inline option has none
    (required, as in the reference; the tests using this are about other fields)."""
    fields = {"identifier": f"Q{next(_numbers)}", **fields}
    if isinstance(fields.get("options"), list):
        fields["options"] = [
            {"identifier": f"O{next(_numbers)}", **o} if isinstance(o, dict) else o
            for o in fields["options"]
        ]
    return fields


async def create(client: Any, world: World, **fields: Any) -> dict[str, Any]:
    """A question created through the API (a text question unless told otherwise)."""
    fields.setdefault("question", {"en": "What?"})
    fields.setdefault("type", "S")
    fields = with_identifiers(fields)
    response = await client.post(questions_url(world), json=fields, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    return response.json()


async def choice(client: Any, world: World, *identifiers: str, **fields: Any) -> dict[str, Any]:
    """A choice question with options of the given identifiers."""
    fields.setdefault("type", "C")
    fields["options"] = [{"identifier": i, "answer": {"en": i}} for i in identifiers]
    return await create(client, world, **fields)


def field_errors(response: Any, *fields: str) -> dict[str, Any]:
    """A DRF-shaped 400 naming exactly the given fields."""
    assert response.status_code == 400, response.text
    body = response.json()
    assert isinstance(body, dict), body
    assert set(body) == set(fields), body
    return body
