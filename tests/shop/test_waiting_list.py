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


async def test_a_sold_out_date_of_a_series_takes_entries_for_that_date(client, world, factory):
    s = await h.series(factory, world, waiting_list_enabled=True)
    front = f"/{world.org.slug}/{world.event.slug}/"
    ticket = s.shop.ticket.id
    r = await h.cart(client, world, {"item": ticket}, subevent=s.late.id)
    r = await h.buy(client, world, r.json()["cart_id"], payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    late = (await client.get(f"{front}{s.late.id}/")).text
    assert "Sold out" in late and f'id="wl-{ticket}"' in late
    assert f'name="subevent" value="{s.late.id}"' in late and "(Evening" in late
    early = (await client.get(f"{front}{s.early.id}/")).text
    assert f'id="wl-{ticket}"' not in early  # still on sale
    token = re.search(r'name="csrf_token" value="([^"]+)"', late).group(1)  # type: ignore[union-attr]
    form = {"csrf_token": token, "product": str(ticket), f"wl_email_{ticket}": "eve@example.org"}
    for junk in ("", "abc", "99999999999", str(s.past.id), "0"):
        r = await client.post(f"{front}waitinglist", data={**form, "subevent": junk})
        assert r.status_code == 400, junk
    r = await client.post(f"{front}waitinglist", data={**form, "subevent": str(s.early.id)})
    assert r.status_code == 400 and "currently available" in r.text
    assert "Matinee" in r.text  # that date's page again (no form there: it is on sale)
    r = await client.post(f"{front}waitinglist", data={**form, "subevent": str(s.late.id)})
    assert r.status_code == 303 and r.headers["location"] == f"{front}{s.late.id}/"
    assert "You are on the waiting list" in (await client.get(r.headers["location"])).text
    # the headless API: the date is required, and must be sold out
    url = f"{h.base(world)}/waitinglist/"
    body = {"item": ticket, "email": "api@example.org"}
    r = await client.post(url, json=body)
    assert r.status_code == 400 and "subevent" in r.json()
    r = await client.post(url, json={**body, "subevent": s.early.id})
    assert r.status_code == 400
    r = await client.post(url, json={**body, "subevent": s.late.id})
    assert r.status_code == 201, r.text
    async with factory.sessionmaker() as session:
        rows = (
            await session.execute(
                select(WaitingListEntry.email, WaitingListEntry.subevent_id).order_by(
                    WaitingListEntry.email
                )
            )
        ).all()
    assert [tuple(r) for r in rows] == [
        ("api@example.org", s.late.id),
        ("eve@example.org", s.late.id),
    ]


async def test_a_date_is_refused_for_an_event_without_dates(client, world, factory):
    shop = await h.setup(factory, world, size=0, waiting_list_enabled=True)
    r = await client.post(
        f"{h.base(world)}/waitinglist/",
        json={"item": shop.ticket.id, "email": "w@example.org", "subevent": 1},
    )
    assert r.status_code == 400 and "subevent" in r.json()
