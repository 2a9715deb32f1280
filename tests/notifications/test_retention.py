"""The outbox forgets rows a month old, and only those."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from admit.db import utcnow
from admit.models import Notification
from admit.notifications.retention import purge_old_notifications


async def test_old_notifications_are_purged(factory, world):
    now = utcnow()
    async with factory.sessionmaker() as session:
        for days in (40, 31, 29, 0):
            session.add(
                Notification(
                    organizer_id=world.org.id,
                    event_id=world.event.id,
                    action="service.event.changed",
                    payload={"days": days},
                    created=now - dt.timedelta(days=days),
                )
            )
        await session.commit()
    async with factory.sessionmaker() as session:
        assert await purge_old_notifications(session, now) == 2
        await session.commit()
        left = [n.payload["days"] for n in await session.scalars(select(Notification))]
    assert sorted(left) == [0, 29]
