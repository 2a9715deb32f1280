"""best_availability_state on the events and subevents lists (``with_availability_for``)."""

from __future__ import annotations

import datetime as dt

from admit.models import SubEventItem
from tests.factories import World, auth
from tests.quotas.helpers import carts, item, order, quota, subevent, variation

EVENTS = "/api/v1/organizers/acme/events/"


async def states(client, world: World, url: str, channel: str = "web") -> dict[str, int | None]:
    response = await client.get(f"{url}?with_availability_for={channel}", headers=auth(world.admin))
    assert response.status_code == 200, response.text
    return {
        (r.get("slug") or str(r["id"])): r["best_availability_state"]
        for r in response.json()["results"]
    }


async def test_absent_without_the_parameter(client, world: World, factory):
    response = await client.get(EVENTS, headers=auth(world.admin))
    assert "best_availability_state" not in response.json()["results"][0]


async def test_unknown_without_quotas_or_sellable_items(client, world: World, factory):
    assert (await states(client, world, EVENTS))["summit"] is None
    hidden = await item(factory, world.event, active=False)
    await quota(factory, world.event, 10, items=[hidden])
    await quota(factory, world.event, 10)  # no items at all
    assert (await states(client, world, EVENTS))["summit"] is None


async def test_available_sold_out_reserved(client, world: World, factory):
    ticket = await item(factory, world.event)
    q = await quota(factory, world.event, 2, items=[ticket])
    assert (await states(client, world, EVENTS))["summit"] == 100
    await carts(factory, world.event, (ticket, None, None), 2)
    assert (await states(client, world, EVENTS))["summit"] == 20
    await order(factory, world.event, "n", [(ticket, None, None)] * 2)
    # Remaining units in unpaid orders: pretix reports this as gone (0).
    assert (await states(client, world, EVENTS))["summit"] == 0
    assert q.id


async def test_item_needs_every_quota_and_best_product_wins(client, world: World, factory):
    ticket = await item(factory, world.event)
    vip = await item(factory, world.event, "VIP")
    await quota(factory, world.event, 10, items=[ticket, vip])
    await quota(factory, world.event, 0, items=[ticket])
    # The ticket is sold out through its second quota, the VIP ticket is still available.
    assert (await states(client, world, EVENTS))["summit"] == 100
    await quota(factory, world.event, 0, items=[vip])
    assert (await states(client, world, EVENTS))["summit"] == 0


async def test_ignored_quotas_are_skipped(client, world: World, factory):
    ticket = await item(factory, world.event)
    merch = await item(factory, world.event, "Merch")
    await quota(factory, world.event, 0, items=[ticket])
    await quota(factory, world.event, 100, items=[merch], ignore_for_event_availability=True)
    assert (await states(client, world, EVENTS))["summit"] == 0
    other = await factory.event(world.org, "other")
    only_merch = await item(factory, other, "Merch")
    await quota(factory, other, 100, items=[only_merch], ignore_for_event_availability=True)
    assert (await states(client, world, EVENTS))["other"] is None


async def test_sales_channel_and_sale_window(client, world: World, factory):
    ticket = await item(
        factory, world.event, all_sales_channels=False, limit_sales_channels=["box_office"]
    )
    await quota(factory, world.event, 10, items=[ticket])
    assert (await states(client, world, EVENTS, "web"))["summit"] is None
    assert (await states(client, world, EVENTS, "box_office"))["summit"] == 100
    later = await factory.event(world.org, "later")
    future = dt.datetime.now(dt.UTC) + dt.timedelta(days=3)
    await quota(factory, later, 10, items=[await item(factory, later, available_from=future)])
    assert (await states(client, world, EVENTS))["later"] is None


async def test_variations(client, world: World, factory):
    shirt = await item(factory, world.event, "Shirt")
    red = await variation(factory, shirt, "Red")
    blue = await variation(factory, shirt, "Blue", active=False)
    await quota(factory, world.event, 0, items=[shirt], variations=[red])
    await quota(factory, world.event, 10, items=[shirt], variations=[blue])
    # The only variation on sale is sold out; the inactive one does not count.
    assert (await states(client, world, EVENTS))["summit"] == 0


async def test_closed_quota_is_gone(client, world: World, factory):
    ticket = await item(factory, world.event)
    await quota(factory, world.event, None, items=[ticket], closed=True)
    assert (await states(client, world, EVENTS))["summit"] == 0


async def test_subevents_list_and_series_in_events_list(client, world: World, factory):
    series = await factory.event(world.org, "series", has_subevents=True)
    ticket = await item(factory, series)
    d1 = await subevent(factory, series, "One")
    d2 = await subevent(factory, series, "Two")
    d3 = await subevent(factory, series, "Three")
    await quota(factory, series, 1, items=[ticket], subevent=d1)
    await quota(factory, series, 1, items=[ticket], subevent=d2)
    await order(factory, series, "p", [(ticket, None, d1)])
    url = "/api/v1/organizers/acme/events/series/subevents/"
    assert await states(client, world, url) == {str(d1.id): 0, str(d2.id): 100, str(d3.id): None}
    assert (await states(client, world, EVENTS))["series"] == 100
    organizer_wide = await states(client, world, "/api/v1/organizers/acme/subevents/")
    assert organizer_wide == {str(d1.id): 0, str(d2.id): 100, str(d3.id): None}
    await order(factory, series, "p", [(ticket, None, d2)])
    assert (await states(client, world, EVENTS))["series"] == 0
    plain = await client.get(url, headers=auth(world.admin))
    assert "best_availability_state" not in plain.json()["results"][0]


async def test_disabled_for_a_date(client, world: World, factory):
    series = await factory.event(world.org, "series", has_subevents=True)
    ticket = await item(factory, series)
    date = await subevent(factory, series)
    await quota(factory, series, 5, items=[ticket], subevent=date)
    await factory._add(SubEventItem(subevent_id=date.id, item_id=ticket.id, disabled=True))
    url = "/api/v1/organizers/acme/events/series/subevents/"
    assert await states(client, world, url) == {str(date.id): None}


async def test_events_list_queries_do_not_grow_with_orders(
    client, world: World, factory, count_queries
):
    ticket = await item(factory, world.event)
    await quota(factory, world.event, 100, items=[ticket])
    await states(client, world, EVENTS)  # warm the credential cache
    with count_queries() as before:
        await states(client, world, EVENTS)
    await order(factory, world.event, "p", [(ticket, None, None)] * 20)
    await carts(factory, world.event, (ticket, None, None), 20)
    with count_queries() as after:
        await states(client, world, EVENTS)
    assert len(after.statements) + after.fast == len(before.statements) + before.fast
