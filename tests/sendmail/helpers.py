"""Test data for scheduled e-mails: an event with the plugin, orders written straight to the
database, and a run of the periodic task at a chosen moment."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import select, update

from admit.models import Event, Item, Order, OrderPosition, OutgoingMail, SendMailRecord, SubEvent
from admit.quotas import ledger
from admit.sendmail.tasks import send_due
from tests.checkin import helpers as h
from tests.factories import Factory, World

UTC = dt.UTC


def rules_url(world: World, rest: str = "") -> str:
    return h.event_url(world, f"sendmail_rules/{rest}")


async def enable_plugin(factory: Factory, event: Event, name: str = "sendmail", **kw: Any) -> None:
    async with factory.sessionmaker() as s:
        row = await s.get(Event, event.id)
        assert row is not None
        row.plugins = [name]
        for key, value in kw.items():
            setattr(row, key, value)
        await s.commit()


async def subevent(factory: Factory, event: Event, start: dt.datetime, **kw: Any) -> SubEvent:
    kw.setdefault("name", {"en": f"Date {start:%Y-%m-%d}"})
    return await factory._add(SubEvent(event_id=event.id, date_from=start, active=True, **kw))  # type: ignore[return-value]


async def run(app: Any, now: dt.datetime) -> int:
    """One run of the periodic task, as a scheduler would start it."""
    async with app.state.db.sessionmaker() as session:
        return await send_due(session, now, base_url="https://tickets.example")


async def mails(app: Any) -> list[OutgoingMail]:
    async with app.state.db.sessionmaker() as session:
        return list(await session.scalars(select(OutgoingMail).order_by(OutgoingMail.id)))


async def records(app: Any) -> list[SendMailRecord]:
    async with app.state.db.sessionmaker() as session:
        return list(await session.scalars(select(SendMailRecord).order_by(SendMailRecord.id)))


def recipients(rows: list[OutgoingMail]) -> list[str]:
    return sorted(address for mail in rows for address in mail.to)


async def order(
    factory: Factory, event: Event, item: Item, *, email: str | None, **kw: Any
) -> tuple[Order, list[OrderPosition]]:
    """An order (see ``tests.checkin.helpers.order``) with ``email``, due to pay in 2031 (not
    overdue on the simulated clock unless ``expires`` says so)."""
    expires = kw.pop("expires", dt.datetime(2031, 1, 1, tzinfo=UTC))
    obj, positions = await h.order(factory, event, item, **kw)
    async with factory.sessionmaker() as s:
        await s.execute(
            update(Order).where(Order.id == obj.id).values(email=email, expires=expires)
        )
        await s.commit()
    obj.email, obj.expires = email, expires
    return obj, positions


async def move_position(factory: Factory, position_id: int, **values: Any) -> None:
    """Changes a ticket behind the API's back, keeping the sales ledger exact."""
    async with factory.sessionmaker() as s:
        await s.execute(
            update(OrderPosition).where(OrderPosition.id == position_id).values(**values)
        )
        await ledger.rebuild(s)
        await s.commit()
