"""The back office as a person uses it: navigation, dashboard, orders and their actions."""

from __future__ import annotations

import re

from tests.control.conftest import E
from tests.oauth.helpers import csrf, login


async def _as(web, email: str) -> None:
    assert (await login(web, email)).status_code == 303


async def test_home_lists_organizers_and_goes_to_the_only_one(web, people):
    response = await web.get("/control/")
    assert response.status_code == 303 and response.headers["location"].startswith("/login?next=")
    await _as(web, people["boss"])
    response = await web.get("/control/")
    assert (
        response.status_code == 303 and response.headers["location"] == "/control/organizer/acme/"
    )
    page = await web.get("/control/organizer/acme/")
    assert page.status_code == 200
    assert "Summit 2030" in page.text and "offline" in page.text
    assert "Boss" in page.text and 'action="/logout"' in page.text
    assert "script-src 'none'" in page.headers["content-security-policy"]


async def test_dashboard_counts(web, people, shop):
    await _as(web, people["boss"])
    page = await web.get(shop.base)
    assert page.status_code == 200, page.text
    text = page.text
    assert "Summit 2030" in text and "Dashboard" in text
    # one paid, two pending orders of 20.00 each
    assert re.search(r"Paid orders</span><span class=\"tile-value\">1<", text)
    assert re.search(r"Pending orders</span><span class=\"tile-value\">2<", text)
    assert "20.00 EUR" in text and "40.00 EUR" in text
    assert "<svg" in text and "Orders placed per day" in text
    assert (
        'id="list-' in text and "0 of 1 checked in" in text
    )  # pending tickets are not on the list
    assert "1 paid, 2 pending" in text and "97 available" in text
    # the one script: this site's own file, no inline script, only on the dashboard
    assert '<script src="/control/static/live.js" defer></script>' in text
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert text.count("<script") == 1 and 'data-refresh="30"' in text
    faster = await web.get(shop.base, params={"refresh": "5"})
    assert 'data-refresh="5"' in faster.text
    script = await web.get("/control/static/live.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    orders = await web.get(shop.base + "orders/")
    assert "script-src 'none'" in orders.headers["content-security-policy"]


async def test_orders_search_filter_and_detail(web, people, shop):
    await _as(web, people["boss"])
    listing = await web.get(shop.base + "orders/")
    assert listing.status_code == 200 and "3 orders" in listing.text
    found = await web.get(shop.base + "orders/", params={"search": "Twombly"})
    assert "1 order<" in found.text and "cy@example.org" in found.text
    assert "bob@example.org" not in found.text
    paid = await web.get(shop.base + "orders/", params={"status": "p"})
    assert "ada@example.org" in paid.text and "bob@example.org" not in paid.text
    bad = await web.get(shop.base + "orders/", params={"status": "x"})
    assert bad.status_code == 400 and 'id="status-error"' in bad.text
    code = shop.orders[1]["code"]
    detail = await web.get(f"{shop.base}orders/{code}/")
    assert (
        detail.status_code == 200 and "Bob Builder" in detail.text and "banktransfer" in detail.text
    )
    missing = await web.get(f"{shop.base}orders/NOSUCH/")
    assert missing.status_code == 404


async def test_mark_paid_through_the_api_code(web, api, people, shop):
    await _as(web, people["boss"])
    code = shop.orders[1]["code"]
    detail = await web.get(f"{shop.base}orders/{code}/")
    token = csrf(detail.text)
    done = await web.post(f"{shop.base}orders/{code}/mark_paid", data={"csrf_token": token})
    assert done.status_code == 303
    after = await web.get(done.headers["location"])
    assert "The order was marked as paid." in after.text
    assert 'id="mark-paid"' not in after.text  # only the actions that can apply are offered
    order = await api.get(f"{E}/orders/{code}/", headers={"Authorization": f"Token {shop.token}"})
    assert order.json()["status"] == "p" and order.json()["payment_provider"] == "manual"
    again = await web.post(f"{shop.base}orders/{code}/mark_paid", data={"csrf_token": token})
    assert again.status_code == 400 and "already paid" in again.text


async def test_action_errors_are_shown_by_their_field_and_nothing_is_kept(web, api, people, shop):
    await _as(web, people["boss"])
    code = shop.orders[2]["code"]
    token = csrf((await web.get(f"{shop.base}orders/{code}/")).text)
    past = await web.post(
        f"{shop.base}orders/{code}/extend", data={"csrf_token": token, "expires": "2001-01-01"}
    )
    assert past.status_code == 400
    assert 'id="extend-expires-error"' in past.text and "in the future" in past.text
    assert 'value="2001-01-01"' in past.text  # the input is kept
    fee = await web.post(
        f"{shop.base}orders/{code}/cancel", data={"csrf_token": token, "cancellation_fee": "500"}
    )
    assert fee.status_code == 400 and 'id="cancel-cancellation_fee-error"' in fee.text
    order = await api.get(f"{E}/orders/{code}/", headers={"Authorization": f"Token {shop.token}"})
    assert order.json()["status"] == "n"
    ok = await web.post(
        f"{shop.base}orders/{code}/cancel", data={"csrf_token": token, "cancellation_fee": ""}
    )
    assert ok.status_code == 303
    order = await api.get(f"{E}/orders/{code}/", headers={"Authorization": f"Token {shop.token}"})
    assert order.json()["status"] == "c"
    canceled = await web.get(f"{shop.base}orders/{code}/")
    assert 'id="reactivate"' in canceled.text and "Cancel order" not in canceled.text
    forged = await web.post(f"{shop.base}orders/{code}/resend", data={"csrf_token": "forged"})
    assert forged.status_code == 403 and "CSRF" in forged.text
    sent = await web.post(f"{shop.base}orders/{code}/resend", data={"csrf_token": token})
    assert sent.status_code == 303


async def test_reader_sees_no_actions_and_outsider_is_refused(web, people, shop):
    await _as(web, people["reader"])
    code = shop.orders[0]["code"]
    detail = await web.get(f"{shop.base}orders/{code}/")
    assert detail.status_code == 200 and "Mark as paid" not in detail.text
    token = csrf(detail.text)
    refused = await web.post(f"{shop.base}orders/{code}/mark_paid", data={"csrf_token": token})
    assert refused.status_code == 403 and "Not allowed" in refused.text
    assert refused.headers["content-type"].startswith("text/html")


async def test_manual_checkin_goes_through_redeem(web, people, shop):
    await _as(web, people["scanner"])
    page = await web.get(shop.base + "checkin/", params={"search": "Ada"})
    assert page.status_code == 200 and "Ada Lovelace" in page.text and "0 of 1" in page.text
    token = csrf(page.text)
    secret = shop.orders[0]["positions"][0]["secret"]
    form = {"csrf_token": token, "secret": secret, "list": str(shop.checkin_list), "search": "Ada"}
    done = await web.post(shop.base + "checkin/redeem", data=form)
    assert done.status_code == 303 and done.headers["location"].endswith("?search=Ada")
    after = await web.get(done.headers["location"])
    assert "Checked in: Ada Lovelace" in after.text and "1 of 1 checked in" in after.text
    again = await web.post(shop.base + "checkin/redeem", data=form)
    assert again.status_code == 400 and "already been checked in" in again.text
    unpaid = shop.orders[1]["positions"][0]["secret"]
    refused = await web.post(shop.base + "checkin/redeem", data={**form, "secret": unpaid})
    assert refused.status_code == 400 and "not paid" in refused.text
    history = (await web.get(shop.base + "checkin/")).text.split("<h2>Latest scans</h2>")[1]
    assert history.count("refused") == 2 and "(" + shop.orders[1]["code"] + "-1)" in history
    assert "The order is not paid." in history and "entry" in history
    bad_list = await web.post(shop.base + "checkin/redeem", data={**form, "list": "999999"})
    assert bad_list.status_code == 400 and "does not exist" in bad_list.text


async def test_catalog_pages(web, people, shop):
    await _as(web, people["nobody"])
    products = await web.get(shop.base + "products/")
    assert (
        products.status_code == 200 and "Ticket" in products.text and "20.00 EUR" in products.text
    )
    quotas = await web.get(shop.base + "quotas/")
    assert quotas.status_code == 200 and "Hall" in quotas.text and "97 available" in quotas.text
    assert "Products: Ticket" in quotas.text
    menu = products.text.split('aria-label="Event menu"')[1].split("</nav>")[0]
    assert "Orders" not in menu and "Check-in" not in menu  # only what this user may open


async def test_dashboard_counts_again_after_a_change(web, api, people, shop):
    await _as(web, people["boss"])
    before = await web.get(shop.base)
    assert re.search(r"Paid orders</span><span class=\"tile-value\">1<", before.text)
    again = await web.get(shop.base)  # the kept copy, the same numbers
    assert re.search(r"Paid orders</span><span class=\"tile-value\">1<", again.text)
    code = shop.orders[1]["code"]
    paid = await api.post(
        f"{E}/orders/{code}/mark_paid/", headers={"Authorization": f"Token {shop.token}"}
    )
    assert paid.status_code == 200
    after = await web.get(shop.base)
    assert re.search(r"Paid orders</span><span class=\"tile-value\">2<", after.text)
    assert "40.00 EUR" in after.text  # paid revenue
