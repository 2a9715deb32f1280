"""The shop's pages over HTTP (no browser): the product list, the cart, the checkout form with
its refusals (input kept), the order page with its PDF and the cancel button, CSRF and the
security headers."""

from __future__ import annotations

import re

from sqlalchemy import update

from admit.models import Event
from tests.oauth.helpers import csrf
from tests.shop import helpers as h


async def test_front_page_lists_products_with_headers(client, world, factory):
    shop = await h.setup(factory, world)
    r = await client.get(f"/{world.org.slug}/{world.event.slug}/")
    assert r.status_code == 200
    assert "Ticket" in r.text and "23.00 EUR" in r.text and "Free" in r.text
    assert f'name="qty_{shop.ticket.id}"' in r.text
    policy = r.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in policy and "script-src 'self'" in policy
    assert '<script src="/static/shop-timer.js" defer></script>' in r.text
    assert "<script>" not in r.text  # no inline script: the policy allows none
    assert r.headers["X-Frame-Options"] == "DENY"
    css = await client.get("/static/shop.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert (await client.get(f"/{world.org.slug}/nothing/")).status_code == 404


async def test_buy_by_bank_transfer_then_cancel(client, world, factory):
    shop = await h.setup(factory, world)
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = csrf((await client.get(front)).text)
    r = await client.post(f"{front}cart/add", data={f"qty_{shop.ticket.id}": "1"})
    assert r.status_code == 403  # no CSRF token
    r = await client.post(
        f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.ticket.id}": "2"}
    )
    assert r.status_code == 303
    page = (await client.get(front)).text
    assert "Your cart" in page and "46.00" in page
    form = await client.get(f"{front}checkout/")
    assert form.status_code == 200 and "Bank transfer" in form.text
    # a refusal keeps what was typed and names the problem
    r = await h.checkout_form(client, front, token, email_repeat="ada@example.com")
    assert r.status_code == 400
    assert "The two e-mail addresses differ." in r.text and 'value="ada@example.org"' in r.text
    r = await h.checkout_form(client, front, token)
    assert r.status_code == 303, r.text
    order_url = r.headers["location"]
    page = await client.get(order_url)
    assert page.status_code == 200
    assert "Please pay by bank transfer" in page.text and h.IBAN in page.text
    code = order_url.rstrip("/").split("/")[-2]
    assert code in page.text
    wrong = order_url.rstrip("/").rsplit("/", 1)[0] + "/" + "a" * 16 + "/"
    assert (await client.get(wrong)).status_code == 404
    assert (await client.get(f"{order_url}tickets.pdf")).status_code == 404  # unpaid
    r = await client.post(f"{order_url}cancel", data={"csrf_token": token})
    assert r.status_code == 303
    assert "Canceled" in (await client.get(order_url)).text


async def test_free_ticket_and_pdf(client, world, factory):
    shop = await h.setup(factory, world, attendee_names_required=True)
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = csrf((await client.get(front)).text)
    await client.post(f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.free.id}": "1"})
    form = (await client.get(f"{front}checkout/")).text
    pid = re.search(r'name="name_(\d+)"', form).group(1)  # type: ignore[union-attr]
    data = {"csrf_token": token, "email": "bo@example.org", "email_repeat": "bo@example.org"}
    r = await client.post(f"{front}checkout/", data=data)
    assert r.status_code == 400 and "Ticket 1 – Name: This field is required." in r.text
    r = await client.post(f"{front}checkout/", data={**data, f"name_{pid}": "Bo Diddley"})
    assert r.status_code == 303
    page = await client.get(r.headers["location"])
    assert "Paid" in page.text and "Bo Diddley" in page.text
    pdf = await client.get(f"{r.headers['location']}tickets.pdf")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")


async def test_sold_out_and_closed(client, world, factory):
    shop = await h.setup(factory, world, size=1)
    front = f"/{world.org.slug}/{world.event.slug}/"
    r = await h.cart(client, world, {"item": shop.ticket.id})
    assert r.status_code == 201
    page = (await client.get(front)).text
    assert "Reserved by other buyers" in page
    token = csrf(page)
    r = await client.post(
        f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.free.id}": "5"}
    )
    assert r.status_code == 400
    assert "no more tickets available in the quota &#34;Free&#34;" in r.text
    assert 'value="5"' in r.text  # the quantity typed is kept
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Event).where(Event.id == world.event.id).values(settings={"shop_open": False})
        )
        await session.commit()
    assert "The shop of this event is closed." in (await client.get(front)).text


async def test_cart_timer_without_and_with_javascript(client, world, factory):
    shop = await h.setup(factory, world)
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = csrf((await client.get(front)).text)
    await client.post(f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.ticket.id}": "1"})
    for url in (front, f"{front}checkout/"):
        page = (await client.get(url)).text
        timer = re.search(r'<p class="muted timer" id="cart-timer" data-expires="([^"]+)"', page)
        assert timer is not None, url
        # readable without the script: the end of the reservation as a time of day
        assert re.search(r"Reserved for you until \d\d:\d\d UTC", page)
    script = await client.get("/static/shop-timer.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert "data-expires" in script.text and "ran-out" in script.text
