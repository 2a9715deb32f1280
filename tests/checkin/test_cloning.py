"""Cloning an event copies its check-in lists (products and rule lookups remapped) and its
auto check-in rules; check-ins stay behind."""

from __future__ import annotations

from sqlalchemy import select

from admit.models import (
    AutoCheckinRule,
    Checkin,
    CheckinList,
    Event,
    Item,
    auto_checkin_rule_items,
    checkin_list_items,
)
from tests.checkin import helpers as h
from tests.factories import World, auth


async def test_clone_copies_lists_and_rules(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    rules = {
        "inList": [{"var": "product"}, {"objectList": [{"lookup": ["product", str(item.id), "T"]}]}]
    }
    clist = await h.checkin_list(factory, world.event, "VIP", items=[item], rules=rules)
    async with factory.sessionmaker() as s:
        rule = AutoCheckinRule(event_id=world.event.id, list_id=clist.id, all_products=False)
        s.add(rule)
        await s.flush()
        await s.execute(auto_checkin_rule_items.insert().values(rule_id=rule.id, item_id=item.id))
        await s.commit()
    _, (pos,) = await h.order(factory, world.event, item)
    await h.redeem(client, world, pos.secret, [clist.id])

    body = {"name": {"en": "Next"}, "slug": "next", "date_from": "2031-05-01T10:00:00Z"}
    response = await client.post(
        f"/api/v1/organizers/{world.org.slug}/events/?clone_from={world.event.slug}",
        json=body,
        headers=auth(world.admin),
    )
    assert response.status_code == 201, response.text
    async with factory.sessionmaker() as s:
        target = (await s.scalars(select(Event).where(Event.slug == "next"))).one()
        new_item = (await s.scalars(select(Item).where(Item.event_id == target.id))).one()
        copy = (await s.scalars(select(CheckinList).where(CheckinList.event_id == target.id))).one()
        linked = list(
            await s.scalars(
                select(checkin_list_items.c.item_id).where(checkin_list_items.c.list_id == copy.id)
            )
        )
        rule_copy = (
            await s.scalars(select(AutoCheckinRule).where(AutoCheckinRule.event_id == target.id))
        ).one()
        copied_checkins = list(await s.scalars(select(Checkin).where(Checkin.list_id == copy.id)))
    assert copy.name == "VIP" and linked == [new_item.id]
    lookup = copy.rules["inList"][1]["objectList"][0]["lookup"]
    assert lookup == ["product", str(new_item.id), "T"]
    assert rule_copy.list_id == copy.id
    assert copied_checkins == []
