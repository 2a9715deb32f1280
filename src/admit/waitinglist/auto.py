"""Automatic voucher assignment: when quota frees up, the people waiting longest get vouchers.

Runs once a period from the scheduler (``jobs/scheduler.py``), only for events whose waiting
list settings have ``auto_assign`` (off by default). Safe with several processes at once:
entries are taken with ``FOR UPDATE SKIP LOCKED`` (an entry being handled elsewhere is
skipped, never sent twice) and each voucher takes its unit under the quota lock. Each event is
committed on its own, so quota locks are held for one event's batch at most.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.jobs.scheduler import PeriodicTask, periodic
from admit.kit.http.transaction import commit
from admit.models import Event, WaitingListEntry, WaitingListSettings
from admit.waitinglist.service import NotAvailable, assign_voucher

if TYPE_CHECKING:
    from admit.config import Settings
    from admit.jobs.storage import FileStore


log = logging.getLogger("admit")

BATCH = 100  # entries looked at per event and run
INTERVAL_SECONDS = 60


async def assign_all(
    session: AsyncSession, now: dt.datetime | None = None, base_url: str | None = None
) -> int:
    """One run over every event with automatic assignment; returns the vouchers sent (each
    mail's shop link starts with ``base_url``, the configured ``ADMIT_BASE_URL``)."""
    now = now or utcnow()
    event_ids = list(
        await session.scalars(
            select(WaitingListSettings.event_id)
            .where(WaitingListSettings.auto_assign.is_(True))
            .order_by(WaitingListSettings.event_id)
        )
    )
    await commit(session)
    sent = 0
    for event_id in event_ids:
        try:
            sent += await assign_event(session, event_id, now, base_url)
            await commit(session)
        except Exception:
            await session.rollback()
            log.exception("waiting list assignment failed for event %s", event_id)
    return sent


async def assign_event(
    session: AsyncSession, event_id: int, now: dt.datetime, base_url: str | None = None
) -> int:
    """Sends vouchers to the waiting entries of one event, highest ``priority`` first, then
    the oldest (the reference's order), while their products have room; a product found
    without room is skipped for the rest of the run."""
    event = await session.get(Event, event_id)
    if event is None:
        return 0
    query = (
        select(WaitingListEntry)
        .where(WaitingListEntry.event_id == event_id, WaitingListEntry.voucher_id.is_(None))
        .order_by(WaitingListEntry.priority.desc(), WaitingListEntry.created, WaitingListEntry.id)
        .limit(BATCH)
    )
    if session.bind.dialect.name == "postgresql":  # type: ignore[union-attr]
        query = query.with_for_update(skip_locked=True)
    entries = list((await session.scalars(query)).all())
    full: set[tuple[int, int | None, int | None]] = set()
    sent = 0
    for entry in entries:
        key = (entry.item_id, entry.variation_id, entry.subevent_id)
        if key in full:
            continue
        try:
            async with session.begin_nested():
                await assign_voucher(session, event, entry, now, base_url)
            sent += 1
        except NotAvailable:
            full.add(key)
    return sent


@periodic
def _periodic_tasks(settings: Settings, store: FileStore) -> list[PeriodicTask]:
    async def run(session: AsyncSession, now: dt.datetime) -> int:
        return await assign_all(session, now, settings.base_url)

    return [PeriodicTask("waitinglist.assign", INTERVAL_SECONDS, run)]
