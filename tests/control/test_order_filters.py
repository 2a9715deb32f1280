"""The orders list's filters: product or variation, payment method, days placed in the event's
time zone, with the search and status, kept by the form and by the pager; bad values are
answered 400 with a message by their field."""

from __future__ import annotations

import datetime as dt
import re

from sqlalchemy import select, update

from admit.models import Event, Order
from tests.control.conftest import E, _post, sign_in


def _count(text: str) -> int:
    found = re.search(r'role="status">(\d+) orders?', text)
    assert found, text[text.find("<main") :][:1500]
    return int(found.group(1))


async def _sizes(api, shop) -> tuple[int, int, int]:
    """A product with two variations and one order of its "S", paid by another method."""
    item = await _post(api, shop.token, f"{E}/items/", {
        "name": {"en": "Shirt"}, "default_price": "10.00",
        "variations": [{"value": {"en": "S"}}, {"value": {"en": "L"}}]})  # fmt: skip
    await _post(api, shop.token, f"{E}/quotas/",
                {"name": "Shirts", "size": 10, "items": [item["id"]],
                 "variations": [v["id"] for v in item["variations"]]})  # fmt: skip
    small, large = (v["id"] for v in item["variations"])
    position = {"item": item["id"], "variation": small, "attendee_name": "Dan Flavin"}
    body = {"email": "dan@example.org", "payment_provider": "stripe", "positions": [position]}
    shop.orders.append(await _post(api, shop.token, f"{E}/orders/", body))
    return item["id"], small, large


async def test_product_variation_and_payment_filters(web, api, factory, people, shop):
    shirt, small, large = await _sizes(api, shop)
    await sign_in(web, factory, people["reader"])
    url = shop.base + "orders/"
    everything = await web.get(url)
    assert everything.status_code == 200 and _count(everything.text) == 4
    assert f'<option value="{shirt}-{small}">Shirt – S</option>' in everything.text
    assert _count((await web.get(url, params={"product": str(shop.item)})).text) == 3
    by_shirt = await web.get(url, params={"product": str(shirt)})
    assert _count(by_shirt.text) == 1 and "dan@example.org" in by_shirt.text
    assert f'<option value="{shirt}" selected>' in by_shirt.text  # the form keeps the choice
    assert _count((await web.get(url, params={"product": f"{shirt}-{small}"})).text) == 1
    assert _count((await web.get(url, params={"product": f"{shirt}-{large}"})).text) == 0
    stripe = await web.get(url, params={"provider": "stripe"})
    assert _count(stripe.text) == 1 and '<option value="stripe" selected>' in stripe.text
    bank = await web.get(url, params={"provider": "banktransfer", "status": "n"})
    assert _count(bank.text) == 2 and "ada@example.org" not in bank.text
    both = await web.get(url, params={"provider": "banktransfer", "search": "Twombly",
                                      "product": str(shop.item)})  # fmt: skip
    assert _count(both.text) == 1 and "cy@example.org" in both.text
    assert 'value="Twombly"' in both.text


async def test_days_are_the_events_and_the_pager_keeps_the_filters(
    web, factory, people, shop, monkeypatch
):
    async with factory.sessionmaker() as session:
        await session.execute(update(Event).where(Event.slug == "summit")
                              .values(timezone="Europe/Berlin"))  # fmt: skip
        # 23:30 UTC on 1 January is already 2 January in Berlin
        late = dt.datetime(2020, 1, 1, 23, 30, tzinfo=dt.UTC)
        code = shop.orders[0]["code"]
        await session.execute(update(Order).where(Order.code == code).values(datetime=late))
        await session.commit()
    await sign_in(web, factory, people["reader"])
    url = shop.base + "orders/"
    second = await web.get(url, params={"placed_from": "2020-01-02", "placed_until": "2020-01-02"})
    assert second.status_code == 200 and _count(second.text) == 1 and code in second.text
    assert 'value="2020-01-02"' in second.text and "Europe/Berlin" in second.text
    first = await web.get(url, params={"placed_until": "2020-01-01"})
    assert _count(first.text) == 0
    recent = await web.get(url, params={"placed_from": "2020-01-03"})
    assert _count(recent.text) == 2 and code not in recent.text
    monkeypatch.setattr("admit.control.orders.PAGE_SIZE", 1)
    paged = await web.get(url, params={"product": str(shop.item), "placed_from": "2020-01-03"})
    assert "page 1 of 2" in paged.text
    following = re.search(r'href="\?([^"]+)" rel="next"', paged.text)
    assert following is not None
    link = following.group(1).replace("&amp;", "&")
    assert f"product={shop.item}" in link and "placed_from=2020-01-03" in link and "page=2" in link
    assert "page 2 of 2" in (await web.get(url + "?" + link)).text


async def test_bad_filter_values_are_told_by_their_field(web, factory, people, shop):
    await sign_in(web, factory, people["reader"])
    url = shop.base + "orders/"
    cases = {
        "product": ["abc", "99999", "1-2-3", "-", "1-", "9" * 40],
        "provider": ["<script>", "x" * 100],
        "placed_from": ["2030-13-01", "yesterday", "0001-01-01", "2030-1-1"],
        "placed_until": ["2030-02-30"],
        "page": ["0", "x"],
    }
    for field, values in cases.items():
        for value in values:
            response = await web.get(url, params={field: value, "search": "kept"})
            assert response.status_code == 400, (field, value)
            assert f'id="{field}-error"' in response.text or field == "page", (field, value)
            assert 'value="kept"' in response.text
    backwards = await web.get(
        url, params={"placed_from": "2030-02-02", "placed_until": "2030-02-01"}
    )
    assert backwards.status_code == 400
    assert "The last day cannot be before the first day." in backwards.text
    assert 'value="2030-02-02"' in backwards.text and 'value="2030-02-01"' in backwards.text


async def test_filters_are_the_apis(web, api, factory, people, shop):
    """The page and ``GET E/orders/`` with the same filters find the same orders."""
    shirt, small, _ = await _sizes(api, shop)
    await sign_in(web, factory, people["reader"])
    page = await web.get(shop.base + "orders/", params={"product": f"{shirt}-{small}",
                                                        "provider": "stripe"})  # fmt: skip
    listed = await api.get(f"{E}/orders/", params={"item": shirt, "variation": small,
                                                   "payment_provider": "stripe"},
                           headers={"Authorization": f"Token {shop.token}"})  # fmt: skip
    codes = [o["code"] for o in listed.json()["results"]]
    assert codes and all(c in page.text for c in codes) and _count(page.text) == len(codes)
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(Order.id).where(Order.code == codes[0]))


async def test_a_joined_filter_counts_up_to_a_cap(web, factory, people, shop, monkeypatch):
    """A filter on positions or payments counts at most ``COUNT_CAP`` orders; the pager
    still goes on while rows follow."""
    monkeypatch.setattr("admit.control.orders.COUNT_CAP", 2)
    monkeypatch.setattr("admit.control.orders.PAGE_SIZE", 1)
    await sign_in(web, factory, people["reader"])
    url = shop.base + "orders/"
    plain = await web.get(url)
    assert "3 orders, page 1 of 3" in plain.text  # no joined filter: counted exactly
    capped = await web.get(url, params={"product": str(shop.item)})
    assert "More than 2 orders, page 1" in capped.text and 'rel="next"' in capped.text
    last = await web.get(url, params={"product": str(shop.item), "page": "3"})
    assert "More than 2 orders, page 3" in last.text and 'rel="next"' not in last.text
    assert 'rel="prev"' in last.text
    few = await web.get(url, params={"provider": "banktransfer", "status": "p"})
    assert "1 order<" in few.text
