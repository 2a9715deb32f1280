"""Vouchers redeemed by orders: lookup and rules, price modes, usage counting, budgets, and
the counters following cancellations, reactivations, position cancels and deletions."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from admit.db import utcnow
from tests.factories import World, auth
from tests.vouchers import helpers as h


async def _order(client, world: World, body: dict):
    return await client.post(h.ORDERS, json=body, headers=auth(world.admin))


async def _ticket(factory, world: World, size: int = 100, **kw):
    ticket = await h.item(factory, world.event, **kw)
    q = await h.quota(factory, world.event, size, [ticket])
    return ticket, q


def _errors(response) -> list[dict]:
    assert response.status_code == 400, response.text
    return response.json()["positions"]


async def test_price_modes(client, world: World, factory):
    ticket, _ = await _ticket(factory, world)  # 20.00
    cases = {"none": "20.00", "set": "12.00", "subtract": "7.50", "percent": "17.50"}
    values = {"none": "0", "set": "12", "subtract": "12.50", "percent": "12.5"}
    for n, (mode, price) in enumerate(cases.items()):
        await h.voucher(
            factory, world.event, f"MODE{n}X", price_mode=mode, value=Decimal(values[mode])
        )
        r = await _order(client, world, h.order_body(ticket.id, voucher=f"mode{n}x"))
        assert r.status_code == 201, r.text
        assert r.json()["positions"][0]["price"] == price, mode
        assert r.json()["positions"][0]["voucher"] is not None


async def test_subtract_never_below_zero_and_given_price_is_trusted(client, world, factory):
    ticket, _ = await _ticket(factory, world)
    await h.voucher(factory, world.event, "BIGOFF", price_mode="subtract", value=50, max_usages=2)
    r = await _order(client, world, h.order_body(ticket.id, voucher="BIGOFF"))
    assert r.json()["positions"][0]["price"] == "0.00"
    body = h.order_body(ticket.id, voucher="BIGOFF")
    body["positions"][0]["price"] = "3.00"
    r = await _order(client, world, body)
    assert r.status_code == 201 and r.json()["positions"][0]["price"] == "3.00"


async def test_code_rules(client, world: World, factory):
    ticket, q = await _ticket(factory, world)
    other, _ = await _ticket(factory, world, name="Other")
    date_bound = await h.voucher(
        factory, world.event, "EXPIRED", valid_until=utcnow() - dt.timedelta(minutes=1)
    )
    assert date_bound.id
    await h.voucher(factory, world.event, "ONLYOTHER", item_id=other.id)
    await h.voucher(factory, world.event, "QUOTAONE", quota_id=q.id, max_usages=5)
    cases = {
        "NOPE1": 'Object with code="NOPE1" does not exist.',
        "expired": "The specified voucher has expired.",
        "onlyother": "The specified voucher is not valid for this item.",
    }
    for code, message in cases.items():
        r = await _order(client, world, h.order_body(ticket.id, voucher=code))
        assert _errors(r) == [{"voucher": [message]}], code
    r = await _order(client, world, h.order_body(ticket.id, voucher="QUOTAONE"))
    assert r.status_code == 201, r.text
    r = await _order(client, world, h.order_body(other.id, voucher="QUOTAONE"))
    assert _errors(r) == [{"voucher": ["The specified voucher is not valid for this item."]}]


async def test_max_usages_counts_within_the_order(client, world: World, factory):
    ticket, _ = await _ticket(factory, world)
    v = await h.voucher(factory, world.event, "TWICE", max_usages=2)
    r = await _order(client, world, h.order_body(ticket.id, 3, voucher="TWICE"))
    exhausted = "The voucher has already been used the maximum number of times."
    assert _errors(r) == [{}, {}, {"voucher": [exhausted]}]
    r = await _order(client, world, h.order_body(ticket.id, 2, voucher="TWICE"))
    assert r.status_code == 201
    assert (await h.fetch(factory, v.id)).redeemed == 2
    r = await _order(client, world, h.order_body(ticket.id, voucher="TWICE"))
    assert _errors(r) == [{"voucher": [exhausted]}]


async def test_min_usages_on_first_use(client, world: World, factory):
    ticket, _ = await _ticket(factory, world)
    await h.voucher(factory, world.event, "GROUP3", max_usages=10, min_usages=3)
    r = await _order(client, world, h.order_body(ticket.id, 2, voucher="GROUP3"))
    assert "at least 3 matching products" in _errors(r)[0]["voucher"][0]
    r = await _order(client, world, h.order_body(ticket.id, 3, voucher="GROUP3"))
    assert r.status_code == 201, r.text
    # Once used, single further uses are fine.
    r = await _order(client, world, h.order_body(ticket.id, 1, voucher="GROUP3"))
    assert r.status_code == 201, r.text


async def test_require_voucher_and_hidden_products(client, world: World, factory):
    locked, _ = await _ticket(factory, world, name="Locked", require_voucher=True)
    hidden, _ = await _ticket(factory, world, name="Hidden", hide_without_voucher=True)
    await h.voucher(factory, world.event, "SHOWALL", max_usages=10)
    await h.voucher(factory, world.event, "NOSHOW", max_usages=10, show_hidden_items=False)
    r = await _order(client, world, h.order_body(locked.id))
    assert _errors(r) == [{"voucher": ["This product can only be bought using a voucher."]}]
    assert (
        await _order(client, world, h.order_body(locked.id, voucher="NOSHOW"))
    ).status_code == 201
    r = await _order(client, world, h.order_body(hidden.id, voucher="NOSHOW"))
    assert "item" in _errors(r)[0]
    assert (
        await _order(client, world, h.order_body(hidden.id, voucher="SHOWALL"))
    ).status_code == 201


async def test_cancel_expire_reactivate_recount(client, world: World, factory):
    ticket, _ = await _ticket(factory, world)
    v = await h.voucher(factory, world.event, "ONCE01")
    r = await _order(client, world, h.order_body(ticket.id, voucher="ONCE01"))
    code = r.json()["code"]
    assert (await h.fetch(factory, v.id)).redeemed == 1
    action = lambda name: client.post(  # noqa: E731
        f"{h.ORDERS}{code}/{name}/", json={}, headers=auth(world.admin)
    )
    assert (await action("mark_canceled")).status_code == 200
    assert (await h.fetch(factory, v.id)).redeemed == 0
    # Someone else uses it meanwhile: the canceled order cannot come back.
    r2 = await _order(client, world, h.order_body(ticket.id, voucher="ONCE01"))
    assert r2.status_code == 201
    r = await action("reactivate")
    assert r.status_code == 400 and "maximum number of times" in r.json()["detail"]
    assert (
        await client.post(
            f"{h.ORDERS}{r2.json()['code']}/mark_canceled/", json={}, headers=auth(world.admin)
        )
    ).status_code == 200
    assert (await action("reactivate")).status_code == 200
    assert (await h.fetch(factory, v.id)).redeemed == 1
    assert (await action("mark_expired")).status_code == 200
    assert (await h.fetch(factory, v.id)).redeemed == 0


async def test_position_cancel_and_test_order_delete_give_usages_back(client, world, factory):
    ticket, _ = await _ticket(factory, world)
    v = await h.voucher(factory, world.event, "THREE3", max_usages=3)
    r = await _order(client, world, h.order_body(ticket.id, 2, voucher="THREE3", testmode=True))
    assert r.status_code == 201, r.text
    order = r.json()
    pos_url = f"{h.BASE}/orderpositions/{order['positions'][1]['id']}/"
    assert (await client.delete(pos_url, headers=auth(world.admin))).status_code == 204
    assert (await h.fetch(factory, v.id)).redeemed == 1
    r = await client.delete(f"{h.ORDERS}{order['code']}/", headers=auth(world.admin))
    assert r.status_code == 204
    assert (await h.fetch(factory, v.id)).redeemed == 0


async def test_budget_caps_the_discount_and_is_tracked(client, world, factory):
    ticket, _ = await _ticket(factory, world)  # 20.00
    v = await h.voucher(
        factory,
        world.event,
        "BUDGET",
        max_usages=10,
        price_mode="subtract",
        value=10,
        budget=Decimal("15.00"),
    )
    r = await _order(client, world, h.order_body(ticket.id, 2, voucher="BUDGET"))
    assert r.status_code == 201, r.text
    prices = [p["price"] for p in r.json()["positions"]]
    assert prices == ["10.00", "15.00"]
    assert [p["voucher_budget_use"] for p in r.json()["positions"]] == ["10.00", "5.00"]
    assert (await h.fetch(factory, v.id)).budget_used == Decimal("15.00")
    # Budget spent: a given price implying a discount is refused, the listed price is fine.
    body = h.order_body(ticket.id, voucher="BUDGET")
    body["positions"][0]["price"] = "19.00"
    r2 = await _order(client, world, body)
    assert "remaining budget of 0.00" in _errors(r2)[0]["price"][0]
    r3 = await _order(client, world, h.order_body(ticket.id, voucher="BUDGET"))
    assert r3.json()["positions"][0]["price"] == "20.00"
    await client.post(
        f"{h.ORDERS}{r.json()['code']}/mark_canceled/", json={}, headers=auth(world.admin)
    )
    assert (await h.fetch(factory, v.id)).budget_used == Decimal("0.00")


async def test_carts_hold_usages_until_they_expire(client, world: World, factory):
    ticket, _ = await _ticket(factory, world)
    await h.voucher(factory, world.event, "ONECART")
    cart = {"item": ticket.id, "price": "1.00", "voucher": "ONECART"}
    r = await client.post(h.CARTS, json=cart, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    r = await _order(client, world, h.order_body(ticket.id, voucher="ONECART"))
    assert _errors(r)[0]["voucher"] == [
        "The voucher has already been used the maximum number of times."
    ]
    past = (utcnow() - dt.timedelta(seconds=1)).isoformat()
    r = await client.post(h.CARTS, json={**cart, "expires": past}, headers=auth(world.admin))
    assert r.status_code == 400  # (an expiry in the past is refused anyway)
    # Delete the cart: the usage is free again.
    carts = (await client.get(h.CARTS, headers=auth(world.admin))).json()["results"]
    await client.delete(f"{h.CARTS}{carts[0]['id']}/", headers=auth(world.admin))
    r = await _order(client, world, h.order_body(ticket.id, voucher="ONECART"))
    assert r.status_code == 201, r.text


async def test_simulate_counts_nothing(client, world: World, factory):
    ticket, _ = await _ticket(factory, world)
    v = await h.voucher(factory, world.event, "SIMSIM")
    r = await _order(client, world, h.order_body(ticket.id, voucher="SIMSIM", simulate=True))
    assert r.status_code == 201, r.text
    assert r.json()["positions"][0]["voucher"] == v.id
    assert (await h.fetch(factory, v.id)).redeemed == 0
    r = await _order(client, world, h.order_body(ticket.id, voucher="SIMSIM"))
    assert r.status_code == 201


async def test_addons_included(client, world: World, factory):
    ticket, _ = await _ticket(factory, world)
    extra, _ = await _ticket(factory, world, name="Extra")
    await h.voucher(factory, world.event, "ALLIN1", all_addons_included=True)
    body = {
        "email": "fan@example.org",
        "positions": [
            {"positionid": 1, "item": ticket.id, "voucher": "ALLIN1"},
            {"positionid": 2, "item": extra.id, "addon_to": 1},
        ],
    }
    r = await _order(client, world, body)
    assert r.status_code == 201, r.text
    assert [p["price"] for p in r.json()["positions"]] == ["20.00", "0.00"]
