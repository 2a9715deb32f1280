"""Order changes under concurrency (PostgreSQL, where writers overlap; SQLite serialises them
and runs the same assertions): changes of one order run one after the other on each other's
results, and a change racing a sell-out never oversells (the ledger is recounted after every
test by the client fixture)."""

from __future__ import annotations

import asyncio

from tests.factories import auth
from tests.orders import helpers as h

EMPTY = "This operation would leave the order empty. Please cancel the order itself instead."


async def _order(client, world, item_id: int, n: int) -> dict:
    r = await client.post(h.url(world), json=h.body(item_id, n), headers=auth(world.admin))
    assert r.status_code == 201, r.text
    return r.json()


async def _change(client, world, code: str, body: dict):
    return await client.post(f"{h.url(world)}{code}/change/", json=body, headers=auth(world.admin))


async def test_concurrent_additions_to_one_order_are_never_lost(client, world, factory):
    item = await h.item(factory, world.event, "10.00", quota=100)
    order = await _order(client, world, item.id, 1)
    results = await asyncio.gather(
        *(
            _change(client, world, order["code"], {"create_positions": [{"item": item.id}]})
            for _ in range(12)
        )
    )
    assert [r.status_code for r in results] == [200] * 12, [r.text for r in results]
    final = (await client.get(f"{h.url(world)}{order['code']}/", headers=auth(world.admin))).json()
    assert sorted(p["positionid"] for p in final["positions"]) == list(range(1, 14))
    assert final["total"] == "130.00"
    # Each answer is the order as that change left it: every one saw all earlier ones.
    sizes = sorted(len(r.json()["positions"]) for r in results)
    assert sizes == list(range(2, 14))
    quota = await h.quota_of(factory, item.id)
    assert await h.availability(client, world, factory, quota.id) == 87


async def test_two_cancels_of_a_two_position_order_the_second_sees_the_first(
    client, world, factory
):
    item = await h.item(factory, world.event, "10.00")
    for _ in range(5):
        order = await _order(client, world, item.id, 2)
        first, second = (p["id"] for p in order["positions"])
        a, b = await asyncio.gather(
            _change(client, world, order["code"], {"cancel_positions": [{"position": first}]}),
            _change(client, world, order["code"], {"cancel_positions": [{"position": second}]}),
        )
        assert sorted([a.status_code, b.status_code]) == [200, 400], (a.text, b.text)
        loser = a if a.status_code == 400 else b
        assert loser.json() == {"non_field_errors": [EMPTY]}
        final = (
            await client.get(f"{h.url(world)}{order['code']}/", headers=auth(world.admin))
        ).json()
        assert [p["canceled"] for p in final["positions"]].count(False) == 1
        assert final["total"] == "10.00"


async def test_change_racing_a_sell_out_never_oversells(client, world, factory):
    item = await h.item(factory, world.event, "10.00", quota=20)
    quota = await h.quota_of(factory, item.id)
    holders = [await _order(client, world, item.id, 1) for _ in range(5)]

    async def buy() -> int:
        r = await client.post(h.url(world), json=h.body(item.id), headers=auth(world.admin))
        return r.status_code

    async def grow(code: str) -> int:
        r = await _change(client, world, code, {"create_positions": [{"item": item.id}]})
        return r.status_code

    tasks = [buy() for _ in range(15)] + [grow(o["code"]) for o in holders for _ in range(3)]
    statuses = await asyncio.gather(*tasks)
    assert set(statuses) <= {200, 201, 400}, statuses
    sold = 5 + statuses.count(201) + statuses.count(200)
    assert sold == 20, {s: statuses.count(s) for s in set(statuses)}
    assert await h.availability(client, world, factory, quota.id) == 0
    positions = await client.get(
        h.url(world, "orderpositions/"), params={"page_size": 50}, headers=auth(world.admin)
    )
    assert positions.json()["count"] == 20


async def test_item_change_racing_a_sell_out_of_the_target(client, world, factory):
    source = await h.item(factory, world.event, "10.00", quota=50)
    target = await h.item(factory, world.event, "10.00", quota=8, name="Target")
    target_quota = await h.quota_of(factory, target.id)
    orders = [await _order(client, world, source.id, 2) for _ in range(6)]

    async def buy() -> int:
        r = await client.post(h.url(world), json=h.body(target.id), headers=auth(world.admin))
        return r.status_code

    async def move(order: dict) -> int:
        body = {
            "patch_positions": [
                {"position": order["positions"][0]["id"], "body": {"item": target.id}}
            ]
        }
        return (await _change(client, world, order["code"], body)).status_code

    statuses = await asyncio.gather(*[buy() for _ in range(6)], *[move(o) for o in orders])
    assert set(statuses) <= {200, 201, 400}
    assert statuses.count(200) + statuses.count(201) == 8, statuses
    assert await h.availability(client, world, factory, target_quota.id) == 0
