"""The users' periodic work: login sessions nobody has used for longer than a session lasts
are deleted every hour.

A login drops its own user's stale sessions already; this catches the users who never log in
again, so ``login_sessions`` holds live sessions only and does not grow with every browser
that ever logged in.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.jobs.scheduler import PeriodicTask, periodic
from admit.models import LoginSession

if TYPE_CHECKING:
    from admit.config import Settings
    from admit.jobs.storage import FileStore

BATCH = 10_000


async def purge_expired_sessions(session: AsyncSession, now: dt.datetime, hours: float) -> int:
    """Deletes up to a batch of sessions unseen for ``hours`` (the next run takes the rest)."""
    stale = (
        select(LoginSession.id)
        .where(LoginSession.last_seen < now - dt.timedelta(hours=hours))
        .order_by(LoginSession.id)
        .limit(BATCH)
    )
    ids = list((await session.execute(stale)).scalars())
    if ids:
        await session.execute(delete(LoginSession).where(LoginSession.id.in_(ids)))
    return len(ids)


@periodic
def _periodic_tasks(settings: Settings, store: FileStore) -> list[PeriodicTask]:
    hours = settings.session_hours

    async def purge(session: AsyncSession, now: dt.datetime) -> int:
        return await purge_expired_sessions(session, now, hours)

    return [PeriodicTask("users.purge_sessions", 3600, purge)]
