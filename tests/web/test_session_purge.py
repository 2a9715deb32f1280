"""Login sessions unseen for longer than a session lasts are purged by the hourly task; live
ones, of the same user too, stay."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from admit.db import utcnow
from admit.models import LoginSession
from admit.users.tasks import purge_expired_sessions


async def test_stale_login_sessions_are_purged(factory, world):
    ada = await factory.user("ada@example.org")
    grace = await factory.user("grace@example.org")
    now = utcnow()
    async with factory.sessionmaker() as session:
        for user, hours in ((ada, 400), (ada, 335), (grace, 337), (grace, 1)):
            session.add(
                LoginSession(
                    user_id=user.id,
                    key_hash=f"{user.id}-{hours}".ljust(64, "0"),
                    last_seen=now - dt.timedelta(hours=hours),
                )
            )
        await session.commit()
    async with factory.sessionmaker() as session:
        assert await purge_expired_sessions(session, now, hours=336) == 2
        await session.commit()
        left = sorted(
            round((now - r.last_seen).total_seconds() / 3600)
            for r in await session.scalars(select(LoginSession))
        )
    assert left == [1, 335]
