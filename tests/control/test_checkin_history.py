"""The event's check-in history page: every scan newest first, with list, ticket, attendee,
result and reason, and the device; filtered by list, result and ticket, paged with the
filters kept; linked from the check-in page and from an order's tickets."""

from __future__ import annotations

import datetime as dt
import re

from sqlalchemy import select

from admit.models import Checkin, Device, Event
from tests.control.conftest import E, _post, sign_in
from tests.oauth.helpers import csrf


def _count(text: str) -> int:
    found = re.search(r'role="status">(\d+) scans?', text)
    assert found, text[text.find("<main") :][:1500]
    return int(found.group(1))


async def _scans(web, api, factory, people, shop) -> int:
    """Ada admitted at the entrance, Bob (unpaid) refused, an unknown code refused on a second
    list, and a scan by a device: four scans. Returns the second list's id."""
    side = await _post(api, shop.token, f"{E}/checkinlists/", {"name": "Side door",
                                                             "all_products": True})  # fmt: skip
    device = await _post(api, shop.token, "/api/v1/organizers/acme/devices/",
                         {"name": "Door scanner", "all_events": True})  # fmt: skip
    await sign_in(web, factory, people["scanner"])
    token = csrf((await web.get(shop.base + "checkin/")).text)
    for secret, clist in ((shop.orders[0]["positions"][0]["secret"], shop.checkin_list),
                          (shop.orders[1]["positions"][0]["secret"], shop.checkin_list),
                          ("NOPE-UNKNOWN-CODE", side["id"])):  # fmt: skip
        form = {"csrf_token": token, "secret": secret, "list": str(clist)}
        await web.post(shop.base + "checkin/redeem", data=form)
    async with factory.sessionmaker() as session:
        event = await session.scalar(select(Event.id).where(Event.slug == "summit"))
        pk = await session.scalar(select(Device.id).where(Device.device_id == device["device_id"]))
        later = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)
        session.add(Checkin(event_id=event, list_id=side["id"], datetime=later, created=later,
                            position_id=shop.orders[2]["positions"][0]["id"], successful=False,
                            error_reason="unpaid", device_id=pk, type="entry"))  # fmt: skip
        await session.commit()
    return side["id"]


async def test_history_filters_and_links(web, api, factory, people, shop, monkeypatch):
    side = await _scans(web, api, factory, people, shop)
    url = shop.base + "checkin/history/"
    await sign_in(web, factory, people["reader"])
    page = await web.get(url)
    assert page.status_code == 200 and _count(page.text) == 4
    body = page.text[page.text.find("<tbody>") :]
    # newest first: the device's scan, then the unknown code, then Bob, then Ada
    assert body.index("device Door scanner") < body.index("NOPE-UNKNOWN") < body.index("Bob")
    assert body.index("Bob Builder") < body.index("Ada Lovelace")
    assert "The order is not paid." in body and "This ticket is not known." in body
    assert "Side door" in body and "Entrance" in body
    assert _count((await web.get(url, params={"result": "ok"})).text) == 1
    assert _count((await web.get(url, params={"result": "failed"})).text) == 3
    assert _count((await web.get(url, params={"list": str(side)})).text) == 2
    both = await web.get(url, params={"list": str(side), "result": "failed"})
    assert _count(both.text) == 2 and f'<option value="{side}" selected>' in both.text
    ada = shop.orders[0]
    by_ticket = await web.get(url, params={"search": f"{ada['code']}-1"})
    assert _count(by_ticket.text) == 1 and "Ada Lovelace" in by_ticket.text
    assert _count((await web.get(url, params={"search": ada["code"].lower()})).text) == 1
    secret = ada["positions"][0]["secret"][:10]
    assert _count((await web.get(url, params={"search": secret})).text) == 1
    assert _count((await web.get(url, params={"search": "NOPE-UNK"})).text) == 1
    assert _count((await web.get(url, params={"search": "nothing%"})).text) == 0
    monkeypatch.setattr("admit.control.checkin_history.PAGE_SIZE", 1)
    paged = await web.get(url, params={"result": "failed"})
    assert "page 1 of 3" in paged.text
    link = re.search(r'href="\?([^"]+)" rel="next"', paged.text).group(1).replace("&amp;", "&")
    assert "result=failed" in link and "page=2" in link
    assert "page 2 of 3" in (await web.get(url + "?" + link)).text
    checkin = await web.get(shop.base + "checkin/")
    assert 'href="/control/event/acme/summit/checkin/history/"' in checkin.text
    order = await web.get(f"{shop.base}orders/{ada['code']}/")
    assert f'checkin/history/?search={ada["code"]}-1"' in order.text


async def test_bad_values_and_permissions(web, factory, people, shop):
    url = shop.base + "checkin/history/"
    await sign_in(web, factory, people["scanner"])
    assert (await web.get(url)).status_code == 200
    for field, value in (("list", "abc"), ("list", "999999"), ("result", "maybe"),
                         ("page", "0"), ("search", "x" * 300)):  # fmt: skip
        response = await web.get(url, params={field: value})
        assert response.status_code == 400, (field, value)
        assert f'id="{field}-error"' in response.text or field == "page"
    await sign_in(web, factory, people["nobody"])
    assert (await web.get(url)).status_code == 403
