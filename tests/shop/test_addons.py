"""Add-ons and bundles in the shop and the headless checkout: a bundle goes into the cart with
its main product (shown as included, its designated price part of the main price); add-ons
are chosen per position after adding (min/max per category), hold quota, and the checkout
checks the rules again."""

from __future__ import annotations

from sqlalchemy import select

from admit.models import CartPosition, OrderPosition
from tests.oauth.helpers import csrf
from tests.shop import helpers as h


async def test_bundle_and_addons_through_the_pages(client, world, factory):
    shop = await h.setup(factory, world)
    x = await h.extras(factory, shop, parking_min=1)
    front = f"/{world.org.slug}/{world.event.slug}/"
    page = (await client.get(front)).text
    assert f'name="qty_{x.vip.id}"' in page
    assert f'name="qty_{x.shirt.id}"' not in page  # add-ons are not sold on their own
    token = csrf(page)
    r = await client.post(f"{front}cart/add", data={"csrf_token": token, f"qty_{x.vip.id}": "1"})
    assert r.status_code == 303 and r.headers["location"] == f"{front}cart/addons/"
    step = (await client.get(f"{front}cart/addons/")).text
    assert "Shirt" in step and "Parking" in step and "Included" in step
    async with factory.sessionmaker() as session:
        rows = list(await session.scalars(select(CartPosition).order_by(CartPosition.id)))
    vip = next(r for r in rows if r.item_id == x.vip.id)
    assert [(r.item_id, r.is_bundled, str(r.price)) for r in rows if r.addon_to_id] == [
        (x.drink.id, True, "5.00")
    ]
    assert str(vip.price) == "55.00"  # the drink carries 5.00 of the 60.00
    # parking is required (min 1): refused, with the choice kept
    shirts = {"csrf_token": token, f"addon_{vip.id}_{x.shirt.id}": "2"}
    r = await client.post(f"{front}cart/addons/", data=shirts)
    assert r.status_code == 400
    errors = r.text.split('id="form-errors"', 1)[1].split("</div>", 1)[0]
    assert "Choose at least 1 add-on(s) of this kind." in errors
    assert f'name="addon_{vip.id}_{x.shirt.id}"' in r.text and 'value="2"' in r.text
    r = await client.post(
        f"{front}cart/addons/", data={**shirts, f"addon_{vip.id}_{x.parking.id}": "1"}
    )
    assert r.status_code == 303 and r.headers["location"] == f"{front}checkout/"
    form = (await client.get(f"{front}checkout/")).text
    assert "Drink" in form and "Shirt" in form
    cart_page = (await client.get(front)).text
    assert "included" in cart_page and "90.00" in cart_page  # 55 + 5 + 2 * 15 + 0
    r = await h.checkout_form(client, front, token, email="vip@example.org")
    assert r.status_code == 303, r.text
    async with factory.sessionmaker() as session:
        placed = list(await session.scalars(select(OrderPosition).order_by(OrderPosition.id)))
    got = sorted((p.item_id, str(p.price), p.addon_to_id is not None) for p in placed)
    want = sorted(
        [
            (x.vip.id, "55.00", False),
            (x.drink.id, "5.00", True),
            (x.shirt.id, "15.00", True),
            (x.shirt.id, "15.00", True),
            (x.parking.id, "0.00", True),
        ]
    )
    assert got == want


async def test_addon_quota_and_rules_in_the_headless_api(client, world, factory):
    shop = await h.setup(factory, world)
    x = await h.extras(factory, shop, parking_min=1)
    r = await h.cart(client, world, {"item": x.vip.id})
    assert r.status_code == 201, r.text
    cart_id = r.json()["cart_id"]
    main = next(p for p in r.json()["positions"] if p["addon_to"] is None)
    assert any(p["bundled"] for p in r.json()["positions"])
    offered = (await client.get(f"{h.base(world)}/carts/{cart_id}/addons/")).json()
    cats = {c["name"]: c for c in offered["positions"][0]["categories"]}
    assert cats["Parking"]["min_count"] == 1 and cats["Merch"]["max_count"] == 2
    assert cats["Parking"]["products"][0]["price"] == "0.00"  # included
    # the checkout refuses a VIP ticket without its required parking
    r = await h.buy(client, world, cart_id, payment_provider="banktransfer")
    assert r.status_code == 400 and "Choose at least 1" in r.text
    url = f"{h.base(world)}/carts/{cart_id}/positions/{main['id']}/addons/"
    r = await client.put(url, json={"products": [{"item": x.shirt.id, "count": 3}]})
    assert r.status_code == 400  # at most 2 shirts
    r = await client.put(
        url,
        json={"products": [{"item": x.shirt.id, "count": 2}, {"item": x.parking.id}]},
    )
    assert r.status_code == 200, r.text
    assert r.json()["total"] == "90.00"
    # the shirts' quota (3) holds: a second buyer gets one, not two
    other = (await h.cart(client, world, {"item": x.vip.id})).json()
    other_main = next(p for p in other["positions"] if p["addon_to"] is None)
    other_url = f"{h.base(world)}/carts/{other['cart_id']}/positions/{other_main['id']}/addons/"
    r = await client.put(
        other_url,
        json={"products": [{"item": x.shirt.id, "count": 2}, {"item": x.parking.id}]},
    )
    assert r.status_code == 400 and "Shirts" in r.text
    r = await client.put(
        other_url,
        json={"products": [{"item": x.shirt.id, "count": 1}, {"item": x.parking.id}]},
    )
    assert r.status_code == 200, r.text
    # an add-on of another category, or a plain product, is refused
    r = await client.put(other_url, json={"products": [{"item": shop.ticket.id}]})
    assert r.status_code == 400
    r = await h.buy(client, world, cart_id, payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    assert r.json()["total"] == "90.00"


async def test_addons_chosen_many_times_at_once_leave_one_main_position(
    client, world, factory, database_url
):
    """Eight PUTs of one position's add-ons at once (a double click, retries): each replaces
    the position, so only the first to delete it may write it again; the others waited for its
    row lock (seen in PostgreSQL) and are refused. Before, each wrote a new main position: the
    cart held the VIP ticket (and its quota) several times."""
    import asyncio

    import pytest

    from tests.lock_waits import PG_ONLY, lock_waits

    if not database_url.startswith("postgresql"):
        pytest.skip(PG_ONLY)
    shop = await h.setup(factory, world)
    x = await h.extras(factory, shop)
    r = await h.cart(client, world, {"item": x.vip.id})
    assert r.status_code == 201, r.text
    cart_id = r.json()["cart_id"]
    main = next(p for p in r.json()["positions"] if p["addon_to"] is None)
    url = f"{h.base(world)}/carts/{cart_id}/positions/{main['id']}/addons/"
    body = {"products": [{"item": x.shirt.id, "count": 1}, {"item": x.parking.id}]}
    async with lock_waits(factory) as waiting_seen:
        answers = await asyncio.gather(*(client.put(url, json=body) for _ in range(8)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses.count(200) == 1 and set(statuses) <= {200, 400, 409}, statuses
    async with factory.sessionmaker() as session:
        rows = list(await session.scalars(select(CartPosition).order_by(CartPosition.id)))
    assert sorted(r.item_id for r in rows if r.addon_to_id is None) == [x.vip.id]
    assert sorted(r.item_id for r in rows if r.addon_to_id) == sorted(
        [x.drink.id, x.shirt.id, x.parking.id]
    )
    assert max(waiting_seen) >= 1, waiting_seen  # the requests did meet at the row's lock
