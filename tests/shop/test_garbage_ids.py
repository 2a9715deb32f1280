"""The shop's newer routes and pages fed junk in their query strings, bodies and ids (on a
live series, a live cart and a placed order, so the validation past the lookups is reached):
a 4xx every time, in the documented shape (JSON for the API, the page for the pages)."""

from __future__ import annotations

import pytest

from tests.shop import helpers as h
from tests.test_garbage_bodies import GARBAGE

HUGE = "99999999999"  # past an INTEGER column: must not reach PostgreSQL
# "+99999": a sign is a valid number, but no date has that id ("+1" may name a real one)
JUNK_IDS = ["x", "-1", "0", HUGE, "²", "1_0", "+99999"]


def _api_4xx(response) -> None:
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    assert response.status_code != 422, response.text
    assert isinstance(response.json(), dict), response.text


@pytest.mark.parametrize("junk", JUNK_IDS)
async def test_catalog_of_a_series_refuses_a_junk_date(client, world, factory, junk):
    await h.series(factory, world)
    r = await client.get(f"{h.base(world)}/catalog/", params={"subevent": junk})
    _api_4xx(r)
    assert r.status_code == 400


async def test_cart_routes_refuse_junk_queries_and_bodies(client, world, factory):
    shop = await h.setup(factory, world)
    x = await h.extras(factory, shop)
    made = await h.cart(client, world, {"item": x.vip.id, "count": 1})
    assert made.status_code == 201, made.text
    cart_id = made.json()["cart_id"]
    url = f"{h.base(world)}/carts/{cart_id}/"
    for query in (
        {"country": "XYZ"},
        {"country": "\x00"},
        {"is_business": "maybe"},
        {"vat_id": "v" * 65},
        {"country": "DE", "is_business": "yes", "vat_id": "%%%"},
    ):
        r = await client.get(url, params=query)
        if r.status_code != 200:
            _api_4xx(r)
    _api_4xx(await client.get(f"{h.base(world)}/carts/{'x' * 300}/addons/"))
    assert (await client.get(f"{url}addons/")).status_code == 200
    position = made.json()["positions"][0]["id"]
    for pos in (str(position), HUGE, "0", "-1"):
        for body in GARBAGE:
            r = await client.put(f"{url}positions/{pos}/addons/", json=body)
            if not (r.status_code == 200 and pos == str(position) and isinstance(body, dict)):
                _api_4xx(r)  # (an object without products clears the real position's add-ons)
    for pos in (HUGE, "-1"):
        _api_4xx(await client.put(f"{url}positions/{pos}/addons/", json={"products": []}))
        _api_4xx(await client.delete(f"{url}positions/{pos}/"))


@pytest.mark.parametrize("junk", [HUGE, "0", "x", "²"])
async def test_series_date_page_with_a_junk_date_is_a_404(client, world, factory, junk):
    await h.series(factory, world)
    r = await client.get(f"/{world.org.slug}/{world.event.slug}/{junk}/")
    assert r.status_code == 404, r.text
    if junk.isascii() and junk.isdigit():  # the date page's own 404 (others match no route)
        assert "text/html" in r.headers["content-type"]


async def test_addon_step_refuses_junk_fields_with_the_page(client, world, factory):
    from tests.oauth.helpers import csrf

    shop = await h.setup(factory, world)
    x = await h.extras(factory, shop)
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = csrf((await client.get(front)).text)
    await client.post(f"{front}cart/add", data={"csrf_token": token, f"qty_{x.vip.id}": "1"})
    step = await client.get(f"{front}cart/addons/")
    assert step.status_code == 200
    import re

    vip = re.search(r'name="addon_(\d+)_', step.text).group(1)
    for name, value in (
        (f"addon_{vip}_{x.shirt.id}", "²"),
        (f"addon_{vip}_{x.shirt.id}", HUGE),
        (f"addon_{vip}_{HUGE}", "1"),
        (f"addon_{vip}_{x.shirt.id}-{HUGE}", "1"),
        (f"addon_{vip}_{x.shirt.id}-1", "1"),  # the shirt has no variations
        (f"addon_{vip}_²", "1"),
        (f"addon_{vip}_", "1"),
    ):
        r = await client.post(f"{front}cart/addons/", data={"csrf_token": token, name: value})
        assert r.status_code == 400, (name, value, r.status_code, r.text[-500:])


@pytest.mark.parametrize("junk", [HUGE, "x", "0", "-1", "²"])
async def test_invoice_pdf_with_a_junk_id_is_the_404_page(client, world, factory, junk):
    shop = await h.setup(factory, world)
    made = await h.cart(client, world, {"item": shop.ticket.id, "count": 1})
    placed = await h.buy(client, world, made.json()["cart_id"], payment_provider="banktransfer")
    assert placed.status_code == 201, placed.text
    url = placed.json()["url"].removeprefix("http://testserver")
    assert (await client.get(url)).status_code == 200
    r = await client.get(f"{url}invoices/{junk}.pdf")
    assert r.status_code == 404, r.text
