"""Cloning an event copies its quotas (not date-bound ones), remapped into the copy."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from admit.models import Event, Item, ItemVariation, Quota
from tests.factories import World, auth
from tests.quotas.helpers import item, quota, subevent, variation

NEW = {"name": {"en": "Summit 2031"}, "slug": "summit31", "date_from": "2031-05-01T10:00:00Z"}


async def test_clone_copies_quotas(client, world: World, factory):
    ticket = await item(factory, world.event)
    shirt = await item(factory, world.event, "Shirt")
    red = await variation(factory, shirt, "Red")
    await variation(factory, shirt, "Blue")
    source_quota = await quota(
        factory,
        world.event,
        42,
        name="Main",
        items=[ticket, shirt],
        variations=[red],
        position=7,
        close_when_sold_out=True,
        closed=True,
        release_after_exit=True,
        ignore_for_event_availability=True,
    )
    await quota(factory, world.event, None, name="Unlimited")
    response = await client.post(
        "/api/v1/organizers/acme/events/summit/clone/", json=NEW, headers=auth(world.admin)
    )
    assert response.status_code == 201, response.text

    async with factory.sessionmaker() as s:
        target = (await s.execute(select(Event).where(Event.slug == "summit31"))).scalar_one()
        copies = (
            (
                await s.execute(
                    select(Quota)
                    .where(Quota.event_id == target.id)
                    .options(selectinload(Quota.items), selectinload(Quota.variations))
                    .order_by(Quota.id)
                )
            )
            .scalars()
            .all()
        )
        target_items = {
            i.id: i.name["en"]
            for i in (await s.execute(select(Item).where(Item.event_id == target.id))).scalars()
        }
        target_variations = {
            v.id: v.value["en"]
            for v in (
                await s.execute(
                    select(ItemVariation).where(ItemVariation.item_id.in_(list(target_items)))
                )
            ).scalars()
        }
    assert [q.name for q in copies] == ["Main", "Unlimited"]
    main = copies[0]
    assert main.id != source_quota.id
    assert (main.size, main.position, main.subevent_id) == (42, 7, None)
    assert main.close_when_sold_out and main.release_after_exit
    assert main.ignore_for_event_availability
    assert main.closed is False  # the copy has sold nothing
    # Every link points into the copy, none back into the source.
    assert sorted(target_items[i.id] for i in main.items) == ["Shirt", "Ticket"]
    assert [target_variations[v.id] for v in main.variations] == ["Red"]
    assert all(i.event_id == target.id for i in main.items)
    assert {ticket.id, shirt.id}.isdisjoint(i.id for i in main.items)
    assert red.id not in {v.id for v in main.variations}
    assert copies[1].size is None and copies[1].items == []

    listed = await client.get(
        "/api/v1/organizers/acme/events/summit31/quotas/", headers=auth(world.admin)
    )
    assert listed.json()["count"] == 2


async def test_clone_skips_date_bound_quotas(client, world: World, factory):
    series = await factory.event(world.org, "series", has_subevents=True)
    ticket = await item(factory, series)
    date = await subevent(factory, series)
    await quota(factory, series, 5, items=[ticket], subevent=date)
    body = {**NEW, "has_subevents": True}
    response = await client.post(
        "/api/v1/organizers/acme/events/series/clone/", json=body, headers=auth(world.admin)
    )
    assert response.status_code == 201, response.text
    listed = await client.get(
        "/api/v1/organizers/acme/events/summit31/quotas/", headers=auth(world.admin)
    )
    assert listed.json()["count"] == 0
