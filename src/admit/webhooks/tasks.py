"""The webhooks' periodic work: the fan-out every second, and housekeeping every minute (the
delivery log is kept ``LOG_DAYS``; a webhook with calls waiting but no run planned, e.g.
after its job was lost, is marked to be woken)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.jobs.scheduler import PeriodicTask, periodic
from admit.models import Webhook, WebhookCall
from admit.webhooks.fanout import INTERVAL_SECONDS, fan_out

if TYPE_CHECKING:
    from admit.config import Settings
    from admit.jobs.storage import FileStore

LOG_DAYS = 30
PURGE_BATCH = 5000
HOUSEKEEPING_SECONDS = 60.0


async def housekeeping(session: AsyncSession, now: dt.datetime) -> int:
    """Deletes log entries older than ``LOG_DAYS`` (a batch per run) and re-arms webhooks
    whose pending calls nobody is about to send; returns how many entries were deleted."""
    cutoff = now - dt.timedelta(days=LOG_DAYS)
    old = (
        (
            await session.execute(
                select(WebhookCall.id)
                .where(WebhookCall.created < cutoff)
                .order_by(WebhookCall.id)
                .limit(PURGE_BATCH)
            )
        )
        .scalars()
        .all()
    )
    if old:
        await session.execute(delete(WebhookCall).where(WebhookCall.id.in_(old)))
    waiting = (
        select(WebhookCall.id)
        .where(WebhookCall.webhook_id == Webhook.id, WebhookCall.status == "pending")
        .exists()
    )
    await session.execute(
        update(Webhook)
        .where(
            Webhook.enabled.is_(True),
            Webhook.wake_at.is_(None),
            or_(Webhook.lock_owner.is_(None), Webhook.lock_until < now),
            waiting,
        )
        .values(wake_at=now)
        .execution_options(synchronize_session=False)
    )
    return len(old)


async def _fan_out(session: AsyncSession, now: dt.datetime) -> None:
    await fan_out(session, now)


@periodic
def periodic_tasks(settings: Settings, store: FileStore) -> list[PeriodicTask]:
    return [
        PeriodicTask("webhooks.fanout", INTERVAL_SECONDS, _fan_out),
        PeriodicTask("webhooks.housekeeping", HOUSEKEEPING_SECONDS, housekeeping),
    ]
