"""Quota availability: what counts (pending, paid, live carts), what does not, and closing."""

from __future__ import annotations

from admit.db import utcnow
from admit.models import Quota
from admit.quotas import ledger
from admit.quotas.availability import blocking_counters, informational_counters, reserve
from tests.factories import World, auth
from tests.quotas.helpers import (
    QUOTAS,
    cart_position,
    carts,
    item,
    order,
    quota,
    subevent,
    variation,
)

FULL = {
    "available",
    "available_number",
    "total_size",
    "pending_orders",
    "paid_orders",
    "exited_orders",
    "cart_positions",
    "blocking_vouchers",
    "waiting_list",
}


def sent(counter) -> int:
    """Statements sent inside the block (``count`` keeps counting fast reads after it)."""
    return len(counter.statements) + counter.fast


async def availability(client, world: World, q: Quota, base: str = QUOTAS) -> dict:
    response = await client.get(f"{base}{q.id}/availability/", headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert set(response.json()) == FULL
    return response.json()


async def test_empty_quota(client, world: World, factory):
    ticket = await item(factory, world.event)
    q = await quota(factory, world.event, 200, items=[ticket])
    assert await availability(client, world, q) == {
        "available": True,
        "available_number": 200,
        "total_size": 200,
        "pending_orders": 0,
        "paid_orders": 0,
        "exited_orders": 0,
        "cart_positions": 0,
        "blocking_vouchers": 0,
        "waiting_list": 0,
    }


async def test_counts_pending_paid_and_live_carts(client, world: World, factory):
    ticket = await item(factory, world.event)
    other = await item(factory, world.event, "Other")
    q = await quota(factory, world.event, 10, items=[ticket])
    p = (ticket, None, None)
    await order(factory, world.event, "p", [p, p, p], canceled=[False, False, True])
    await order(factory, world.event, "n", [p])
    await order(factory, world.event, "e", [p, p])  # expired: frees its quota
    await order(factory, world.event, "c", [p])  # canceled
    await order(factory, world.event, "p", [(other, None, None)])  # not in this quota
    await carts(factory, world.event, p, 3)
    await carts(factory, world.event, p, 4, minutes=-1)  # expired carts
    await carts(factory, world.event, (other, None, None), 2)
    data = await availability(client, world, q)
    assert data["paid_orders"] == 2
    assert data["pending_orders"] == 1
    assert data["cart_positions"] == 3
    assert data["available_number"] == 4
    assert data["available"] is True
    assert data["total_size"] == 10


async def test_sold_out_and_never_negative(client, world: World, factory):
    ticket = await item(factory, world.event)
    q = await quota(factory, world.event, 2, items=[ticket])
    p = (ticket, None, None)
    await order(factory, world.event, "p", [p, p, p])  # forced past the size
    data = await availability(client, world, q)
    assert data["available"] is False
    assert data["available_number"] == 0
    assert data["paid_orders"] == 3


async def test_unlimited(client, world: World, factory):
    ticket = await item(factory, world.event)
    q = await quota(factory, world.event, None, items=[ticket])
    await order(factory, world.event, "p", [(ticket, None, None)] * 5)
    data = await availability(client, world, q)
    assert data["available"] is True
    assert data["available_number"] is None and data["total_size"] is None
    assert data["paid_orders"] == 5


async def test_closed(client, world: World, factory):
    ticket = await item(factory, world.event)
    q = await quota(factory, world.event, 10, items=[ticket], closed=True)
    data = await availability(client, world, q)
    assert data["available"] is False and data["available_number"] == 0
    unlimited = await quota(factory, world.event, None, items=[ticket], closed=True)
    data = await availability(client, world, unlimited)
    assert data["available"] is False and data["available_number"] is None


async def test_variations(client, world: World, factory):
    shirt = await item(factory, world.event, "Shirt")
    red = await variation(factory, shirt, "Red")
    blue = await variation(factory, shirt, "Blue")
    q = await quota(factory, world.event, 10, items=[shirt], variations=[red])
    await order(factory, world.event, "p", [(shirt, red, None), (shirt, blue, None)])
    await carts(factory, world.event, (shirt, red, None), 2)
    await carts(factory, world.event, (shirt, blue, None), 5)
    data = await availability(client, world, q)
    assert data["paid_orders"] == 1
    assert data["cart_positions"] == 2
    assert data["available_number"] == 7


async def test_subevents(client, world: World, factory):
    series = await factory.event(world.org, "series", has_subevents=True)
    d1 = await subevent(factory, series, "One")
    d2 = await subevent(factory, series, "Two")
    ticket = await item(factory, series)
    q1 = await quota(factory, series, 5, items=[ticket], subevent=d1)
    q2 = await quota(factory, series, 5, items=[ticket], subevent=d2)
    await order(factory, series, "n", [(ticket, None, d1)] * 2 + [(ticket, None, d2)])
    await carts(factory, series, (ticket, None, d2), 4)
    base = "/api/v1/organizers/acme/events/series/quotas/"
    one = await availability(client, world, q1, base)
    two = await availability(client, world, q2, base)
    assert (one["pending_orders"], one["cart_positions"], one["available_number"]) == (2, 0, 3)
    assert (two["pending_orders"], two["cart_positions"], two["available_number"]) == (1, 4, 0)
    assert two["available"] is False


async def test_with_availability_on_list_and_detail(client, world: World, factory, count_queries):
    ticket = await item(factory, world.event)
    full = await quota(factory, world.event, 1, items=[ticket], position=1)
    free = await quota(factory, world.event, None, items=[ticket], position=2)
    await order(factory, world.event, "p", [(ticket, None, None)])
    h = auth(world.admin)
    listed = await client.get(f"{QUOTAS}?with_availability=true", headers=h)
    assert listed.status_code == 200, listed.text
    results = listed.json()["results"]
    assert [(r["id"], r["available"], r["available_number"]) for r in results] == [
        (full.id, False, 0),
        (free.id, True, None),
    ]
    detail = await client.get(f"{QUOTAS}{full.id}/?with_availability=true", headers=h)
    assert (detail.json()["available"], detail.json()["available_number"]) == (False, 0)
    plain = await client.get(f"{QUOTAS}{full.id}/?with_availability=false", headers=h)
    assert "available" not in plain.json()

    # A fixed number of queries per quota, not more with more orders or links (the first
    # request above warmed the credential cache).
    with count_queries() as two:
        await client.get(f"{QUOTAS}?with_availability=true", headers=h)
    for _ in range(3):
        await quota(factory, world.event, 5, items=[ticket])
    await order(factory, world.event, "n", [(ticket, None, None)] * 3)
    with count_queries() as five:
        await client.get(f"{QUOTAS}?with_availability=true", headers=h)
    per_quota = (sent(five) - sent(two)) / 3
    assert per_quota <= 1  # one statement per quota: a few ledger rows, whatever was sold
    # Plus one statement per registered counter (vouchers, exits, waiting list), not per quota.
    counters = len(blocking_counters) + len(informational_counters)
    assert sent(two) <= 6 + counters + 2 * per_quota


async def test_list_query_count_is_fixed(client, world: World, factory, count_queries):
    ticket = await item(factory, world.event)
    shirt = await item(factory, world.event, "Shirt")
    red = await variation(factory, shirt)
    # Linked variations from the start: a kind of child no quota on the page has is not
    # looked up at all (one statement fewer), which is no growth with the page.
    await quota(factory, world.event, items=[ticket, shirt], variations=[red])
    h = auth(world.admin)
    await client.get(QUOTAS, headers=h)  # warm the credential cache
    with count_queries() as one:
        await client.get(QUOTAS, headers=h)
    for _ in range(5):
        await quota(factory, world.event, items=[ticket, shirt], variations=[red])
    with count_queries() as six:
        assert (await client.get(QUOTAS, headers=h)).json()["count"] == 6
    assert sent(six) == sent(one)


async def test_close_when_sold_out_stays_closed(client, world: World, factory, clean_app):
    ticket = await item(factory, world.event)
    q = await quota(factory, world.event, 2, items=[ticket], close_when_sold_out=True)
    product = (ticket, None, None)
    async with clean_app.state.db.sessionmaker() as session:
        await reserve(session, world.event.id, {(ticket.id, None, None): 2})
        session.add_all([cart_position(world.event.id, product, utcnow()) for _ in range(2)])
        await session.flush()
        await ledger.rebuild(session)
        await session.commit()
    h = auth(world.admin)
    detail = await client.get(f"{QUOTAS}{q.id}/", headers=h)
    assert detail.json()["closed"] is True
    # The carts have expired by now (expires = the moment they were written): capacity is
    # back, but the quota stays closed until reopened.
    data = await availability(client, world, q)
    assert data["cart_positions"] == 0
    assert data["available"] is False and data["available_number"] == 0
    reopened = await client.patch(f"{QUOTAS}{q.id}/", json={"closed": False}, headers=h)
    assert reopened.status_code == 200 and reopened.json()["closed"] is False
    data = await availability(client, world, q)
    assert data["available"] is True and data["available_number"] == 2


async def test_without_close_when_sold_out_it_stays_open(client, world: World, factory, clean_app):
    ticket = await item(factory, world.event)
    q = await quota(factory, world.event, 1, items=[ticket])
    async with clean_app.state.db.sessionmaker() as session:
        await reserve(session, world.event.id, {(ticket.id, None, None): 1})
        await session.commit()
    detail = await client.get(f"{QUOTAS}{q.id}/", headers=auth(world.admin))
    assert detail.json()["closed"] is False
