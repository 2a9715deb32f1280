"""Vouchers on cart positions: lookup, nested errors, usage counting in single and bulk
creation (carts count as usages in progress)."""

from __future__ import annotations

from tests.factories import World, auth
from tests.vouchers import helpers as h

EXHAUSTED = "The voucher has already been used the maximum number of times."


async def _setup(factory, world: World, size: int = 100):
    ticket = await h.item(factory, world.event)
    await h.quota(factory, world.event, size, [ticket])
    return ticket


async def test_cart_position_names_its_voucher(client, world: World, factory):
    ticket = await _setup(factory, world)
    v = await h.voucher(factory, world.event, "CARTME", max_usages=2)
    r = await client.post(
        h.CARTS,
        json={"item": ticket.id, "price": "4.00", "voucher": "cartme"},
        headers=auth(world.admin),
    )
    assert r.status_code == 201, r.text
    assert r.json()["voucher"] == v.id
    # The price is trusted as given (the spec: carts do not compute prices).
    assert r.json()["price"] == "4.00"
    listed = (await client.get(h.CARTS, headers=auth(world.admin))).json()["results"]
    assert listed[0]["voucher"] == v.id


async def test_unknown_and_used_up_codes(client, world: World, factory):
    ticket = await _setup(factory, world)
    await h.voucher(factory, world.event, "SINGLE")
    base = {"item": ticket.id, "price": "1.00"}
    r = await client.post(h.CARTS, json={**base, "voucher": "NOSUCH"}, headers=auth(world.admin))
    assert r.status_code == 400 and r.json() == {
        "voucher": ["The specified voucher does not exist."]
    }
    r = await client.post(h.CARTS, json={**base, "voucher": "SINGLE"}, headers=auth(world.admin))
    assert r.status_code == 201
    r = await client.post(h.CARTS, json={**base, "voucher": "SINGLE"}, headers=auth(world.admin))
    assert r.status_code == 400 and r.json() == {"voucher": [EXHAUSTED]}


async def test_nested_positions_report_errors_in_place(client, world: World, factory):
    ticket = await _setup(factory, world)
    extra = await _setup(factory, world)
    await h.voucher(factory, world.event, "ONLY1X", item_id=ticket.id, max_usages=5)
    body = {
        "item": ticket.id,
        "price": "1.00",
        "voucher": "ONLY1X",
        "addons": [
            {"item": extra.id, "price": "1.00"},
            {"item": extra.id, "price": "1.00", "voucher": "ONLY1X"},
        ],
    }
    r = await client.post(h.CARTS, json=body, headers=auth(world.admin))
    assert r.status_code == 400, r.text
    assert r.json() == {
        "addons": [{}, {"voucher": ["The specified voucher is not valid for this item."]}]
    }


async def test_bulk_counts_earlier_entries_of_the_batch(client, world: World, factory):
    ticket = await _setup(factory, world)
    v = await h.voucher(factory, world.event, "BULK02", max_usages=2)
    entry = {"item": ticket.id, "price": "1.00", "voucher": "BULK02"}
    r = await client.post(f"{h.CARTS}bulk_create/", json=[entry] * 3, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    results = r.json()["results"]
    assert [x["success"] for x in results] == [True, True, False]
    assert results[2]["errors"] == {"voucher": [EXHAUSTED]}
    assert results[0]["data"]["voucher"] == v.id


async def test_voucher_of_another_event_is_unknown(client, world: World, factory):
    ticket = await _setup(factory, world)
    await h.voucher(factory, world.other_event, "ELSEWHERE")
    r = await client.post(
        h.CARTS,
        json={"item": ticket.id, "price": "1.00", "voucher": "ELSEWHERE"},
        headers=auth(world.admin),
    )
    assert r.status_code == 400 and "voucher" in r.json()


async def test_voucher_only_products_are_not_checked_on_carts(client, world: World, factory):
    """The spec: cart positions do not validate voucher-only items."""
    ticket = await h.item(factory, world.event, require_voucher=True)
    await h.quota(factory, world.event, 5, [ticket])
    r = await client.post(
        h.CARTS, json={"item": ticket.id, "price": "1.00"}, headers=auth(world.admin)
    )
    assert r.status_code == 201, r.text
