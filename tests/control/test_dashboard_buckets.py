"""The dashboard's time buckets (orders per UTC day, entries per UTC hour) on either database:
SQLite groups by formatted text, PostgreSQL by the truncated moment; both show the same."""

from __future__ import annotations

import datetime as dt

from tests.control.test_pages import _as


async def test_orders_per_day_and_entries_per_hour(web, api, people, shop):
    before = dt.datetime.now(dt.UTC)  # the fixture's orders were placed just before
    paid = shop.orders[0]["positions"][0]["secret"]
    entered = await api.post(
        "/api/v1/organizers/acme/checkinrpc/redeem/",
        json={"secret": paid, "lists": [shop.checkin_list]},
        headers={"Authorization": f"Token {shop.token}"},
    )
    assert entered.status_code == 201, entered.text
    now = dt.datetime.now(dt.UTC)
    await _as(web, people["boss"])
    page = (await web.get(shop.base)).text
    # A run that crosses midnight or the top of the hour has its rows on either side.
    sales = page.split('id="sales-table"')[1].split("</details>")[0]
    days = {f'<td>{t:%Y-%m-%d}</td><td class="num">3</td>' for t in (before, now)}
    assert any(day in sales for day in days), sales  # 1 paid, 2 pending
    entries = page.split('id="entries-table"')[1].split("</details>")[0]
    hours = {f'<td>{t:%m-%d %H}:00</td><td class="num">1</td>' for t in (before, now)}
    assert any(hour in entries for hour in hours), entries
    assert "1 of 1 checked in" in page


async def test_lists_beyond_the_scan_are_counted_apart_alike(web, api, people, shop, monkeypatch):
    from admit.control import stats

    paid = shop.orders[0]["positions"][0]["secret"]
    entered = await api.post(
        "/api/v1/organizers/acme/checkinrpc/redeem/",
        json={"secret": paid, "lists": [shop.checkin_list]},
        headers={"Authorization": f"Token {shop.token}"},
    )
    assert entered.status_code == 201, entered.text
    await _as(web, people["boss"])
    scanned = (await web.get(shop.base)).text
    monkeypatch.setattr(stats, "LISTS_AT_ONCE", 0)
    stats.kept.forget()
    apart = (await web.get(shop.base)).text
    for page in (scanned, apart):
        assert "1 of 1 checked in" in page and "1 paid, 2 pending" in page
