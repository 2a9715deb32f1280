"""An event series in the shop and the headless checkout: the buyer picks a date (upcoming
ones only, with availability), sees that date's products and prices (its overrides), and the
cart, the order and its page carry the date."""

from __future__ import annotations

from sqlalchemy import select

from admit.models import OrderPosition
from tests.oauth.helpers import csrf
from tests.shop import helpers as h


async def test_dates_then_products_then_order_carries_the_date(client, world, factory):
    s = await h.series(factory, world)
    front = f"/{world.org.slug}/{world.event.slug}/"
    page = await client.get(front)
    assert page.status_code == 200
    assert "Choose a date" in page.text
    assert f'href="{front}{s.early.id}/"' in page.text and "Matinee" in page.text
    assert "Old" not in page.text  # a past date is not offered
    assert f'name="qty_{s.shop.ticket.id}"' not in page.text  # no products before a date
    date_page = await client.get(f"{front}{s.early.id}/")
    assert date_page.status_code == 200
    assert "30.00 EUR" in date_page.text and "23.00 EUR" not in date_page.text  # override
    assert f'name="subevent" value="{s.early.id}"' in date_page.text
    late_page = (await client.get(f"{front}{s.late.id}/")).text
    assert "23.00 EUR" in late_page
    assert (await client.get(f"{front}{s.past.id}/")).status_code == 404
    token = csrf(date_page.text)
    # without a date the cart refuses, in a sentence on the date list
    r = await client.post(
        f"{front}cart/add", data={"csrf_token": token, f"qty_{s.shop.ticket.id}": "1"}
    )
    assert r.status_code == 400 and "Choose a date first." in r.text
    r = await client.post(
        f"{front}cart/add",
        data={"csrf_token": token, f"qty_{s.shop.ticket.id}": "1", "subevent": str(s.early.id)},
    )
    assert r.status_code == 303 and r.headers["location"] == f"{front}{s.early.id}/#cart"
    cart_page = (await client.get(f"{front}{s.early.id}/")).text
    assert "Your cart" in cart_page and "Matinee" in cart_page and "30.00" in cart_page
    form = await client.get(f"{front}checkout/")
    assert form.status_code == 200 and "Matinee" in form.text
    r = await h.checkout_form(client, front, token)
    assert r.status_code == 303, r.text
    order_page = (await client.get(r.headers["location"])).text
    assert "Matinee" in order_page and "30.00" in order_page
    async with factory.sessionmaker() as session:
        rows = (await session.execute(select(OrderPosition.subevent_id, OrderPosition.price))).all()
    assert [(sub, str(price)) for sub, price in rows] == [(s.early.id, "30.00")]


async def test_a_date_sells_only_its_own_quota(client, world, factory):
    s = await h.series(factory, world)
    front = f"/{world.org.slug}/{world.event.slug}/"
    r = await h.cart(client, world, {"item": s.shop.ticket.id}, subevent=s.late.id)
    assert r.status_code == 201, r.text
    dates = (await client.get(f"{h.base(world)}/dates/")).json()["dates"]
    assert [(d["id"], d["availability"]) for d in dates] == [
        (s.early.id, "available"),
        (s.late.id, "sold_out"),
    ]
    page = (await client.get(front)).text
    assert "Sold out" in page and f'href="{front}{s.late.id}/"' not in page
    assert f'href="{front}{s.early.id}/"' in page
    r = await h.cart(client, world, {"item": s.shop.ticket.id}, subevent=s.late.id)
    assert r.status_code == 400  # the late date's single ticket is in the first cart
    r = await h.cart(client, world, {"item": s.shop.ticket.id, "count": 2}, subevent=s.early.id)
    assert r.status_code == 201


async def test_headless_catalog_and_cart_take_the_date(client, world, factory):
    s = await h.series(factory, world)
    info = (await client.get(f"{h.base(world)}/")).json()
    assert info["has_subevents"] is True and info["shop_open"] is True
    r = await client.get(f"{h.base(world)}/catalog/")
    assert r.status_code == 400 and "subevent" in r.json()
    r = await client.get(f"{h.base(world)}/catalog/", params={"subevent": s.past.id})
    assert r.status_code == 400 and "subevent" in r.json()
    r = await client.get(f"{h.base(world)}/catalog/", params={"subevent": "x"})
    assert r.status_code == 400
    r = await client.get(f"{h.base(world)}/catalog/", params={"subevent": s.early.id})
    prices = {p["name"]: p["price"] for p in r.json()["products"]}
    assert prices["Ticket"] == "30.00"
    r = await h.cart(client, world, {"item": s.shop.ticket.id})
    assert r.status_code == 400 and r.json()["subevent"] == ["Choose a date first."]
    r = await h.cart(client, world, {"item": s.shop.ticket.id}, subevent=s.early.id)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["positions"][0]["subevent"] == s.early.id
    assert body["positions"][0]["price"] == "30.00" and "Matinee" in body["positions"][0]["date"]
    r = await h.buy(client, world, body["cart_id"], payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    assert r.json()["positions"][0]["subevent"] == s.early.id
    assert r.json()["total"] == "30.00"


async def test_a_single_event_refuses_a_date(client, world, factory):
    shop = await h.setup(factory, world)
    r = await h.cart(client, world, {"item": shop.ticket.id}, subevent=1)
    assert r.status_code == 400 and "subevent" in r.json()
    r = await client.get(f"{h.base(world)}/dates/")
    assert r.json() == {"dates": []}
    assert (await client.get(f"/{world.org.slug}/{world.event.slug}/1/")).status_code == 404
