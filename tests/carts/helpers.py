"""Test data for the cart position tests, written straight to the database."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import func, insert, select, update

from admit.models import (
    Answer,
    CartPosition,
    Event,
    Item,
    ItemVariation,
    Question,
    QuestionOption,
    Quota,
    SubEvent,
    question_items,
)
from admit.quotas import availability, ledger
from tests.factories import Factory, World, auth, unique


def url(world: World, event: Event | None = None, suffix: str = "") -> str:
    ev = event or world.event
    org = world.org if ev.organizer_id == world.org.id else world.other
    return f"/api/v1/organizers/{org.slug}/events/{ev.slug}/cartpositions/{suffix}"


async def item(factory: Factory, event: Event, name: str = "Ticket", **kw: Any) -> Item:
    kw.setdefault("default_price", Decimal("23.00"))
    return await factory._add(Item(event_id=event.id, name={"en": name}, **kw))  # type: ignore[return-value]


async def variation(factory: Factory, item_: Item, value: str = "Red") -> ItemVariation:
    return await factory._add(ItemVariation(item_id=item_.id, value={"en": value}))  # type: ignore[return-value]


async def subevent(factory: Factory, event: Event, name: str = "Date") -> SubEvent:
    sub = SubEvent(
        event_id=event.id, name={"en": name}, date_from=dt.datetime(2030, 6, 1, tzinfo=dt.UTC)
    )
    return await factory._add(sub)  # type: ignore[return-value]


async def quota(
    factory: Factory,
    event: Event,
    size: int | None,
    items: list[Item] = (),  # type: ignore[assignment]
    variations: list[ItemVariation] = (),  # type: ignore[assignment]
    subevent_: SubEvent | None = None,
    name: str = "Q",
) -> Quota:
    return await factory.quota(
        event, size, items=items, variations=variations, subevent=subevent_, name=name
    )


async def question(
    factory: Factory,
    event: Event,
    type_: str,
    items: list[Item],
    options: list[str] = (),  # type: ignore[assignment]
    identifier: str | None = None,
    **kw: Any,
) -> Question:
    async with factory.sessionmaker() as session:
        obj = Question(
            event_id=event.id,
            question={"en": f"{type_}?"},
            type=type_,
            identifier=identifier or unique(f"Q{type_}-"),
            **kw,
        )
        session.add(obj)
        await session.flush()
        for position, ident in enumerate(options):
            session.add(
                QuestionOption(
                    question_id=obj.id,
                    identifier=ident,
                    answer={"en": ident.title()},
                    position=position,
                )
            )
        for it in items:
            await session.execute(insert(question_items).values(question_id=obj.id, item_id=it.id))
        await session.commit()
        return obj


async def option_ids(factory: Factory, question_: Question) -> list[int]:
    async with factory.sessionmaker() as session:
        query = select(QuestionOption.id).where(QuestionOption.question_id == question_.id)
        return list(await session.scalars(query.order_by(QuestionOption.position)))


async def available(factory: Factory, quota_: Quota) -> int | None:
    async with factory.sessionmaker() as session:
        fresh = await session.get(Quota, quota_.id)
        return (await availability.count(session, [fresh]))[quota_.id].available_number


async def cart_rows(factory: Factory) -> int:
    async with factory.sessionmaker() as session:
        return int(await session.scalar(select(func.count()).select_from(CartPosition)) or 0)


async def answer_rows(factory: Factory) -> int:
    async with factory.sessionmaker() as session:
        return int(await session.scalar(select(func.count()).select_from(Answer)) or 0)


async def expire(factory: Factory, position_id: int, when: dt.datetime | None = None) -> None:
    """Moves a position's expiry (and its add-ons') into the past."""
    when = when or dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    async with factory.sessionmaker() as session:
        await session.execute(
            update(CartPosition)
            .where((CartPosition.id == position_id) | (CartPosition.addon_to_id == position_id))
            .values(expires=when)
        )
        await session.commit()


async def stored_position(factory: Factory, event: Event, cart_id: str, item_: Item) -> int:
    """A cart position written directly (e.g. a web-shop cart not ending in @api)."""
    now = dt.datetime.now(dt.UTC)
    pos = CartPosition(
        event_id=event.id,
        cart_id=cart_id,
        datetime=now,
        expires=now + dt.timedelta(hours=1),
        item_id=item_.id,
        price=Decimal("1.00"),
    )
    await factory._add(pos)
    async with factory.sessionmaker() as session:
        await ledger.rebuild(session)  # written behind the API's back
        await session.commit()
    return pos.id


async def post(client: Any, world: World, body: Any, event: Event | None = None) -> Any:
    return await client.post(url(world, event), json=body, headers=auth(world.admin))


def errors(response: Any, *fields: str) -> dict[str, Any]:
    """A 400 whose body names exactly the given fields."""
    assert response.status_code == 400, response.text
    body = response.json()
    assert set(body) == set(fields), body
    return body


def lane_row(n: int, now: dt.datetime) -> dict[str, Any]:
    """One request's columns for a direct call of the cart fast path's batch (``_sell``)."""
    return {
        "cart_id": f"c{n}@api",
        "expires": now + dt.timedelta(minutes=30),
        "price": Decimal("1.00"),
        "attendee_email": None,
        "sales_channel": "web",
        "includes_tax": True,
        "attendee_name_parts": {},
    }
