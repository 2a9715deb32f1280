"""How long the notification outbox keeps its rows: long after the webhook fan-out read them
(it looks back minutes, not days), short enough that the table does not grow for ever. What
was delivered stays in each webhook's call log (itself kept 30 days)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.jobs.scheduler import PeriodicTask, periodic
from admit.models import Notification

if TYPE_CHECKING:
    from admit.config import Settings
    from admit.jobs.storage import FileStore


KEEP_DAYS = 30
BATCH = 10_000


async def purge_old_notifications(session: AsyncSession, now: dt.datetime) -> int:
    """Deletes up to a batch of rows older than ``KEEP_DAYS`` (the next run takes the rest)."""
    old = (
        select(Notification.id)
        .where(Notification.created < now - dt.timedelta(days=KEEP_DAYS))
        .order_by(Notification.id)
        .limit(BATCH)
    )
    ids = list((await session.execute(old)).scalars())
    if ids:
        await session.execute(delete(Notification).where(Notification.id.in_(ids)))
    return len(ids)


@periodic
def _periodic_tasks(settings: Settings, store: FileStore) -> list[PeriodicTask]:
    return [PeriodicTask("notifications.purge", 3600, purge_old_notifications)]
