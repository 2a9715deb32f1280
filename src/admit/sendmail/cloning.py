"""Copying scheduled e-mail rules into a cloned event (``clone_from``, ``POST E/clone/``).

Rules are copied with their products remapped to the copies; what they have sent is not
(the clone has no orders yet).
"""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.events.cloning import CloneMaps
from admit.models import Event, SendMailRule, sendmail_rule_items
from admit.sendmail.service import COLUMNS


async def copy_rules(session: AsyncSession, source: Event, target: Event, maps: CloneMaps) -> None:
    rules = list(
        await session.scalars(
            select(SendMailRule).where(SendMailRule.event_id == source.id).order_by(SendMailRule.id)
        )
    )
    copies: dict[int, int] = {}
    for rule in rules:
        copy = SendMailRule(event_id=target.id, **{n: getattr(rule, n) for n in COLUMNS})
        session.add(copy)
        await session.flush()
        copies[rule.id] = copy.id
    if not copies:
        return
    rows = await session.execute(
        select(sendmail_rule_items.c.rule_id, sendmail_rule_items.c.item_id).where(
            sendmail_rule_items.c.rule_id.in_(list(copies))
        )
    )
    values = [
        {"rule_id": copies[rule_id], "item_id": maps.items.get_required(item_id)}
        for rule_id, item_id in rows
    ]
    if values:
        await session.execute(insert(sendmail_rule_items), values)
