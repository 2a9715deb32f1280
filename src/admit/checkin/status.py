"""``E/checkinlists/{id}/status/``: how many tickets a list has, how many were checked in (per
product and variation) and how many are inside now, in five queries whatever the size."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import func, select

from admit.checkin import state
from admit.kit.http.context import EventContext
from admit.models import Checkin, CheckinList, Item, ItemVariation, checkin_list_items


def _name(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("en") or next(iter(value.values()), ""))
    return str(value or "")


async def list_status(ctx: EventContext, clist: CheckinList) -> dict[str, Any]:
    """Counts of tickets on the list and checked in, per product and variation, and how
    many are inside now."""
    session = ctx.session
    items_query = select(Item).where(Item.event_id == ctx.event.id)
    if not clist.all_products:
        items_query = items_query.where(
            Item.id.in_(
                select(checkin_list_items.c.item_id).where(checkin_list_items.c.list_id == clist.id)
            )
        )
    items = list(await session.scalars(items_query.order_by(Item.position, Item.id)))
    variations: dict[int, list[ItemVariation]] = defaultdict(list)
    if items:
        for v in await session.scalars(
            select(ItemVariation)
            .where(ItemVariation.item_id.in_([i.id for i in items]))
            .order_by(ItemVariation.position, ItemVariation.id)
        ):
            variations[v.item_id].append(v)
    valid = state.valid_positions(clist).subquery()
    grouped = (valid.c.item_id, valid.c.variation_id)
    totals = {
        (i, v): n
        for i, v, n in await session.execute(
            select(*grouped, func.count()).select_from(valid).group_by(*grouped)
        )
    }
    entered = (
        select(Checkin.position_id)
        .where(Checkin.list_id == clist.id, Checkin.successful.is_(True), Checkin.type == "entry")
        .distinct()
        .subquery()
    )
    checked = {
        (i, v): n
        for i, v, n in await session.execute(
            select(*grouped, func.count())
            .select_from(valid)
            .join(entered, entered.c.position_id == valid.c.id)
            .group_by(*grouped)
        )
    }
    inside = await session.scalar(
        select(func.count())
        .select_from(Checkin)
        .join(valid, valid.c.id == Checkin.position_id)
        .where(state.latest_is_entry(clist.id))
    )

    def total(counts: dict[tuple[int, int | None], int], item_id: int) -> int:
        return sum(n for (i, _v), n in counts.items() if i == item_id)

    return {
        "checkin_count": sum(checked.values()),
        "position_count": sum(totals.values()),
        "inside_count": int(inside or 0),
        "event": {"name": _name(ctx.event.name)},
        "items": [
            {
                "name": _name(item.name),
                "id": item.id,
                "checkin_count": total(checked, item.id),
                "admission": item.admission,
                "position_count": total(totals, item.id),
                "variations": [
                    {
                        "value": _name(v.value),
                        "id": v.id,
                        "checkin_count": checked.get((item.id, v.id), 0),
                        "position_count": totals.get((item.id, v.id), 0),
                    }
                    for v in variations.get(item.id, [])
                ],
            }
            for item in items
        ],
    }
