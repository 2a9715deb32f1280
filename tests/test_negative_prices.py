"""A ticket never costs less than nothing: a negative position price is a 400 on order
creation and on cart positions (also nested add-ons and on the fast lane), naming the field;
zero is fine."""

from __future__ import annotations

import pytest

from tests.carts import helpers as carts
from tests.factories import World, auth
from tests.orders import helpers as orders

NEGATIVE = ["Ensure this value is greater than or equal to 0."]


@pytest.mark.parametrize("price", ["-0.01", "-10", -5, -0.5])
async def test_order_position_with_a_negative_price(client, world: World, factory, price):
    item = await orders.item(factory, world.event)
    body = orders.body(item.id, 2)
    body["positions"][1]["price"] = price
    response = await client.post(orders.url(world), json=body, headers=auth(world.admin))
    assert response.status_code == 400, response.text
    assert response.json() == {"positions": [{}, {"price": NEGATIVE}]}
    listed = await client.get(orders.url(world), headers=auth(world.admin))
    assert listed.json()["count"] == 0


async def test_order_position_priced_zero_is_fine(client, world: World, factory):
    item = await orders.item(factory, world.event)
    body = orders.body(item.id)
    body["positions"][0]["price"] = "0.00"
    response = await client.post(orders.url(world), json=body, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    assert response.json()["positions"][0]["price"] == "0.00"


async def test_cart_position_with_a_negative_price(client, world: World, factory):
    item = await carts.item(factory, world.event)
    await carts.quota(factory, world.event, 10, [item])
    url = carts.url(world)
    response = await client.post(
        url, json={"item": item.id, "price": "-1.00"}, headers=auth(world.admin)
    )
    assert response.status_code == 400, response.text
    assert response.json() == {"price": NEGATIVE}
    nested = {"item": item.id, "price": "1.00", "addons": [{"item": item.id, "price": "-2"}]}
    response = await client.post(url, json=nested, headers=auth(world.admin))
    assert response.status_code == 400, response.text
    assert response.json() == {"addons": [{"price": NEGATIVE}]}
    response = await client.post(
        f"{url}bulk_create/", json=[{"item": item.id, "price": "-1.00"}], headers=auth(world.admin)
    )
    assert response.status_code in (200, 400), response.text
    assert "greater than or equal to 0" in response.text
    listed = await client.get(url, headers=auth(world.admin))
    assert listed.json()["count"] == 0
    response = await client.post(
        url, json={"item": item.id, "price": "0"}, headers=auth(world.admin)
    )
    assert response.status_code == 201, response.text
