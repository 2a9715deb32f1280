"""Sold out: the shop offers the waiting list (page and headless API), through the waiting
list's own rules."""

from __future__ import annotations

import re

from sqlalchemy import select

from admit.models import WaitingListEntry
from tests.shop import helpers as h


async def test_sold_out_product_takes_waiting_list_entries(client, world, factory):
    shop = await h.setup(factory, world, size=1, waiting_list_enabled=True)
    front = f"/{world.org.slug}/{world.event.slug}/"
    url = f"{h.base(world)}/waitinglist/"
    body = {"item": shop.ticket.id, "email": "wait@example.org"}
    r = await client.post(url, json=body)
    assert r.status_code == 400 and r.json() == {
        "non_field_errors": ["This product is currently available."]
    }
    r = await h.cart(client, world, {"item": shop.ticket.id})
    r = await h.buy(client, world, r.json()["cart_id"], payment_provider="banktransfer")
    assert r.status_code == 201
    page = (await client.get(front)).text
    assert "Sold out" in page and f'id="wl-{shop.ticket.id}"' in page
    r = await client.post(url, json=body)
    assert r.status_code == 201, r.text
    r = await client.post(url, json=body)
    assert r.status_code == 400  # already waiting
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    form = {"csrf_token": token, "product": str(shop.ticket.id)}
    r = await client.post(f"{front}waitinglist", data={**form, f"wl_email_{shop.ticket.id}": "x"})
    assert r.status_code == 400 and 'value="x"' in r.text
    r = await client.post(
        f"{front}waitinglist", data={**form, f"wl_email_{shop.ticket.id}": "two@example.org"}
    )
    assert r.status_code == 303
    assert "You are on the waiting list" in (await client.get(front)).text
    async with factory.sessionmaker() as session:
        emails = sorted((await session.scalars(select(WaitingListEntry.email))).all())
    assert emails == ["two@example.org", "wait@example.org"]


async def test_no_waiting_list_unless_the_event_has_one(client, world, factory):
    shop = await h.setup(factory, world, size=0)
    r = await client.post(
        f"{h.base(world)}/waitinglist/", json={"item": shop.ticket.id, "email": "w@example.org"}
    )
    assert r.status_code == 400 and r.json() == {
        "non_field_errors": ["This event has no waiting list."]
    }
    assert "Waiting list" not in (await client.get(f"/{world.org.slug}/{world.event.slug}/")).text
