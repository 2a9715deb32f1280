"""Copying check-in lists and auto check-in rules into a cloned event.

Lists bound to a date are not copied (dates are not cloned). Products in a list, in its
rules (``lookup`` of a product or variation) and in auto check-in rules are remapped to the
copies; gates belong to the organizer and stay as they are. Check-ins are never copied.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.events.cloning import CloneMaps, IdMap
from admit.models import (
    AutoCheckinRule,
    CheckinList,
    Event,
    auto_checkin_rule_items,
    auto_checkin_rule_variations,
    checkin_list_gates,
    checkin_list_items,
)

_LIST_FIELDS = (
    "name all_products include_pending allow_multiple_entries allow_entry_after_exit "
    "exit_all_at addon_match ignore_in_statistics consider_tickets_used"
).split()
_RULE_FIELDS = (
    "mode all_sales_channels limit_sales_channels all_products all_payment_methods "
    "limit_payment_methods"
).split()


def remap_rules(node: Any, maps: CloneMaps) -> Any:
    """The rule with product and variation lookups pointing at the copies."""
    if isinstance(node, list):
        return [remap_rules(n, maps) for n in node]
    if not isinstance(node, dict):
        return node
    if len(node) == 1 and "lookup" in node and isinstance(node["lookup"], list):
        args = list(node["lookup"])
        kind = args[0] if args else None
        table: IdMap | None = {"product": maps.items, "variation": maps.variations}.get(kind)
        if table is not None and len(args) > 1 and str(args[1]).isdigit():
            args[1] = str(table.get(int(args[1]), int(args[1])))
        return {"lookup": args}
    return {key: remap_rules(value, maps) for key, value in node.items()}


async def copy_checkin(
    session: AsyncSession, source: Event, target: Event, maps: CloneMaps
) -> None:
    lists = list(
        await session.scalars(
            select(CheckinList)
            .where(CheckinList.event_id == source.id, CheckinList.subevent_id.is_(None))
            .order_by(CheckinList.id)
        )
    )
    copied = IdMap("check-in list")
    for clist in lists:
        copy = CheckinList(
            event_id=target.id,
            subevent_id=None,
            rules=remap_rules(clist.rules or {}, maps),
            **{name: getattr(clist, name) for name in _LIST_FIELDS},
        )
        session.add(copy)
        await session.flush()
        copied[clist.id] = copy.id
    await _copy_links(session, checkin_list_items, "list_id", "item_id", copied, maps.items)
    await _copy_links(session, checkin_list_gates, "list_id", "gate_id", copied, None)

    rules = list(
        await session.scalars(
            select(AutoCheckinRule)
            .where(AutoCheckinRule.event_id == source.id)
            .order_by(AutoCheckinRule.id)
        )
    )
    rule_ids = IdMap("auto check-in rule")
    for rule in rules:
        if rule.list_id is not None and rule.list_id not in copied:
            continue  # its list was bound to a date
        copy_rule = AutoCheckinRule(
            event_id=target.id,
            list_id=copied.get_required(rule.list_id),
            **{name: getattr(rule, name) for name in _RULE_FIELDS},
        )
        session.add(copy_rule)
        await session.flush()
        rule_ids[rule.id] = copy_rule.id
    await _copy_links(session, auto_checkin_rule_items, "rule_id", "item_id", rule_ids, maps.items)
    await _copy_links(
        session, auto_checkin_rule_variations, "rule_id", "variation_id", rule_ids, maps.variations
    )


async def _copy_links(
    session: AsyncSession,
    table: Any,
    owner: str,
    target: str,
    owners: IdMap,
    targets: IdMap | None,
) -> None:
    if not owners:
        return
    rows = await session.execute(
        select(table.c[owner], table.c[target]).where(table.c[owner].in_(list(owners)))
    )
    values = [
        {owner: owners[o], target: targets.get_required(t) if targets is not None else t}
        for o, t in rows
    ]
    if values:
        await session.execute(insert(table), values)
