"""The item references a clone sets last: ``hidden_if_item_available`` (another item),
``hidden_if_available`` (a quota, copied by the quota package's copier) and the required
membership types.

Quotas are copied without an id map, in id order, event-level ones only; pairing the source's
event-level quotas with the copy's in id order recovers the map. A reference to a date's quota
(not copied) or to a membership type of another organizer is dropped, never left pointing
into the source.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Event, Item, Quota, item_required_membership_types


async def _quota_map(session: AsyncSession, source: Event, target: Event) -> dict[int, int]:
    async def ids(event: Event) -> list[int]:
        query = (
            select(Quota.id)
            .where(Quota.event_id == event.id, Quota.subevent_id.is_(None))
            .order_by(Quota.id)
        )
        return list((await session.scalars(query)).all())

    old, new = await ids(source), await ids(target)
    return dict(zip(old, new, strict=False)) if len(old) == len(new) else {}


async def copy_item_links(
    session: AsyncSession,
    source: Event,
    target: Event,
    source_items: Sequence[Item],
    items: dict[int, int],
) -> None:
    """``items``: source item id -> copy id (every source item was copied)."""
    linked = [i for i in source_items if i.hidden_if_item_available_id or i.hidden_if_available_id]
    quotas = await _quota_map(session, source, target) if linked else {}
    for item in linked:
        values = {
            "hidden_if_item_available_id": items.get(item.hidden_if_item_available_id or 0),
            "hidden_if_available_id": quotas.get(item.hidden_if_available_id or 0),
        }
        await session.execute(update(Item).where(Item.id == items[item.id]).values(**values))
    if source.organizer_id != target.organizer_id:
        return
    rows = [
        {"item_id": items[item.id], "membership_type_id": mtype.id}
        for item in source_items
        for mtype in item.require_membership_types
    ]
    if rows:
        await session.execute(insert(item_required_membership_types), rows)
