"""Copying quotas into a cloned event, with their items and variations remapped.

Quotas bound to a date are not copied (dates are not cloned). A copy starts open: the new
event has sold nothing, so a ``closed`` set by ``close_when_sold_out`` does not apply to it.
"""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.events.cloning import CloneMaps
from admit.models import Event, Quota, quota_items, quota_variations

_COPIED = (
    "name size position close_when_sold_out release_after_exit ignore_for_event_availability"
).split()


async def copy_quotas(session: AsyncSession, source: Event, target: Event, maps: CloneMaps) -> None:
    rows = (
        (
            await session.execute(
                select(Quota)
                .where(Quota.event_id == source.id, Quota.subevent_id.is_(None))
                .options(selectinload(Quota.items), selectinload(Quota.variations))
                .order_by(Quota.id)
            )
        )
        .scalars()
        .all()
    )
    for quota in rows:
        copy = Quota(
            event_id=target.id,
            subevent_id=None,
            closed=False,
            **{name: getattr(quota, name) for name in _COPIED},
        )
        session.add(copy)
        await session.flush()
        item_rows = [
            {"quota_id": copy.id, "item_id": maps.items.get_required(item.id)}
            for item in quota.items
        ]
        variation_rows = [
            {"quota_id": copy.id, "variation_id": maps.variations.get_required(variation.id)}
            for variation in quota.variations
        ]
        if item_rows:
            await session.execute(insert(quota_items), item_rows)
        if variation_rows:
            await session.execute(insert(quota_variations), variation_rows)
