"""reserve() under real concurrency: many sessions race for one quota, none oversells.

Each task opens its own session (its own pooled connection), so the transactions truly
overlap in the database; on PostgreSQL the quota row lock serialises them, on SQLite the
``BEGIN IMMEDIATE`` write lock does.
"""

from __future__ import annotations

import asyncio
import datetime as dt

from sqlalchemy import func, select

from admit.db import utcnow
from admit.models import CartPosition, Event, Item, Quota
from admit.quotas import ledger
from admit.quotas.availability import QuotaExceeded, count, reserve
from tests.factories import World
from tests.quotas.helpers import cart_position, item, quota

TASKS = 40
SIZE = 10


async def _buy(sessionmaker, event: Event, ticket: Item, started: asyncio.Event) -> bool:
    await started.wait()
    async with sessionmaker() as session:
        try:
            await reserve(session, event.id, {(ticket.id, None, None): 1})
        except QuotaExceeded:
            await session.rollback()
            return False
        # Give the others every chance to interleave between the check and the write.
        await asyncio.sleep(0)
        expires = utcnow() + dt.timedelta(minutes=30)
        session.add(cart_position(event.id, (ticket, None, None), expires))
        await ledger.carts_added(session, [ledger.key_of(ticket.id, None, None)])
        await session.commit()
        return True


async def test_concurrent_reservations_never_oversell(clean_app, world: World, factory):
    sessionmaker = clean_app.state.db.sessionmaker
    for round_ in range(3):
        ticket = await item(factory, world.event, f"Ticket {round_}")
        q = await quota(factory, world.event, SIZE, items=[ticket])
        started = asyncio.Event()
        tasks = [
            asyncio.create_task(_buy(sessionmaker, world.event, ticket, started))
            for _ in range(TASKS)
        ]
        await asyncio.sleep(0.05)
        started.set()
        results = await asyncio.gather(*tasks)
        assert results.count(True) == SIZE, f"round {round_}: {results.count(True)} sold"
        async with sessionmaker() as session:
            sold = await session.scalar(
                select(func.count())
                .select_from(CartPosition)
                .where(CartPosition.item_id == ticket.id)
            )
            assert sold == SIZE
            fresh = await session.get(Quota, q.id)
            numbers = (await count(session, [fresh]))[q.id]
        assert numbers.available_number == 0
        assert numbers.available is False
        assert numbers.cart_positions == SIZE
