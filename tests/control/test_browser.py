"""A person in headless Chromium runs the back office against a live server (two workers,
PostgreSQL): logs in with a TOTP code, opens the organizer, the event's dashboard, the orders,
an order, marks it paid, finds a ticket and checks it in by hand. Every page visited is
checked by axe-core (no serious or critical violation) at a phone's width (390 px) and a
desktop's (1280 px), nothing scrolls sideways, and a full-page screenshot of each is saved
(``ADMIT_SCREENSHOT_DIR``, else the test's temporary folder).

Needs Chromium, npm (for axe-core) and PostgreSQL; skips with the missing part's reason."""

from __future__ import annotations

from pathlib import Path

import httpx

from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
from tests import axe
from tests.control.walk import Walk
from tests.oauth.helpers import PASSWORD, make_totp


async def _sell(base: str, token: str) -> tuple[list[dict], int]:
    """A product, a quota, a check-in list and three orders, through the API."""
    e = f"{base}/api/v1/organizers/acme/events/summit"
    headers = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as api:

        async def post(path: str, body: dict) -> dict:
            response = await api.post(e + path, json=body)
            assert response.status_code in (200, 201), response.text
            return response.json()

        item = await post(
            "/items/", {"name": {"en": "Conference ticket"}, "default_price": "95.00"}
        )
        await post("/quotas/", {"name": "Main hall", "size": 250, "items": [item["id"]]})
        clist = await post("/checkinlists/", {"name": "Main entrance", "all_products": True})
        orders = []
        for email, name, status in (
            ("ada@example.org", "Ada Lovelace", "p"),
            ("grace@example.org", "Grace Hopper", "n"),
            ("alan@example.org", "Alan Turing", "n"),
        ):
            body = {"email": email, "status": status, "payment_provider": "banktransfer",
                    "positions": [{"item": item["id"], "attendee_name": name}]}  # fmt: skip
            orders.append(await post("/orders/", body))
    return orders, clist["id"]


async def _mark_paid(base: str, token: str, code: str) -> None:
    url = f"{base}/api/v1/organizers/acme/events/summit/orders/{code}/mark_paid/"
    async with httpx.AsyncClient(timeout=60) as api:
        response = await api.post(url, headers={"Authorization": f"Token {token}"})
        assert response.status_code == 200, response.text


async def test_back_office_walk(live_server, tmp_path: Path) -> None:
    script = axe.script()  # before the browser: a missing part skips at once
    assert "axe" in script
    factory, world = live_server.factory, live_server.world
    base = live_server.base_url
    orders, _ = await _sell(base, world.admin)
    ada = await factory.user("boss@example.org", password=PASSWORD, fullname="Bea Boss")
    await factory.team(world.org, members=[ada], event_permissions=list(EVENT_PERMISSIONS),
                       organizer_permissions=list(ORGANIZER_PERMISSIONS))  # fmt: skip
    totp = await make_totp(factory, ada)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    walk = Walk(tmp_path, "control")
    driver, wait, check = walk.driver, walk.wait, walk.check
    try:
        walk.login(base, ada.email, PASSWORD, totp.now)
        assert "Summit" in driver.page_source and "Bea Boss" in driver.page_source
        check("organizer")

        driver.find_element(By.LINK_TEXT, "Summit").click()
        wait.until(ec.presence_of_element_located((By.ID, "chart-sales")))
        assert "Tickets per product" in driver.page_source
        check("dashboard")

        driver.find_element(By.CSS_SELECTOR, 'nav.menu a[href$="/orders/"]').click()
        wait.until(ec.presence_of_element_located((By.ID, "search")))
        assert "3 orders" in driver.page_source
        check("orders")

        driver.find_element(By.ID, "search").send_keys("Grace")
        driver.find_element(By.CSS_SELECTOR, "form.filters button").click()
        wait.until(ec.url_contains("search=Grace"))  # not the link of the page searched from
        wait.until(ec.presence_of_element_located((By.LINK_TEXT, orders[1]["code"]))).click()
        wait.until(ec.presence_of_element_located((By.ID, "mark-paid")))
        assert "Grace Hopper" in driver.page_source
        check("order")

        driver.find_element(By.ID, "mark-paid").click()
        wait.until(ec.presence_of_element_located((By.CLASS_NAME, "flash")))
        assert "The order was marked as paid." in driver.page_source
        check("order-paid")

        driver.find_element(By.CSS_SELECTOR, 'nav.menu a[href$="/checkin/"]').click()
        wait.until(ec.presence_of_element_located((By.ID, "search"))).send_keys("Grace")
        driver.find_element(By.CSS_SELECTOR, "form.filters button").click()
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "td form button"))).click()
        wait.until(ec.presence_of_element_located((By.CLASS_NAME, "flash")))
        assert "Checked in: Grace Hopper" in driver.page_source
        check("checkin")

        driver.find_element(By.ID, "checkin-history").click()
        wait.until(ec.presence_of_element_located((By.ID, "result")))
        assert "Grace Hopper" in driver.page_source and "1 scan" in driver.page_source
        check("checkin-history")

        driver.find_element(By.CSS_SELECTOR, 'nav.menu a[href$="/orders/"]').click()
        wait.until(ec.presence_of_element_located((By.ID, "search")))
        alan_code = orders[2]["code"]
        driver.find_element(By.LINK_TEXT, alan_code).click()
        wait.until(ec.presence_of_element_located((By.ID, "extend-expires")))
        # a refused action: the error stands by its field, the typed value kept
        driver.execute_script("document.getElementById('extend-expires').value = '2001-01-01'")
        driver.find_element(By.CSS_SELECTOR, 'form[action$="/extend"] button').click()
        wait.until(ec.presence_of_element_located((By.ID, "extend-expires-error")))
        check("order-error")

        # a ticket's own form, refused by the API's order change: the message by its field
        driver.find_element(By.CSS_SELECTOR, 'td.links a[href*="/positions/"]').click()
        wait.until(ec.presence_of_element_located((By.ID, "price"))).clear()
        driver.find_element(By.ID, "price").send_keys("lots")
        driver.find_element(By.ID, "change-position").click()
        wait.until(ec.presence_of_element_located((By.ID, "price-error")))
        check("ticket-error")

        driver.get(f"{base}/control/event/acme/summit/orders/?status=n&provider=banktransfer"
                   "&placed_from=2000-01-01&product=")  # fmt: skip
        wait.until(ec.presence_of_element_located((By.ID, "placed_until")))
        assert "1 order<" in driver.page_source and alan_code in driver.page_source
        check("orders-filtered")

        driver.get(f"{base}/control/event/acme/summit/?refresh=2")
        wait.until(ec.presence_of_element_located((By.ID, "chart-sales")))
        assert "1 of 2 checked in" in driver.page_source  # Ada's and Grace's paid tickets
        # a sale elsewhere shows up without a reload (the page's one script, CSP 'self')
        paid = (By.CSS_SELECTOR, ".tiles li:first-child .tile-value")  # "Paid orders"
        assert driver.find_element(*paid).text == "2"
        await _mark_paid(base, world.admin, orders[2]["code"])
        wait.until(lambda d: d.find_element(*paid).text == "3")
        assert "Updated" in driver.find_element(By.ID, "refreshed").text
        walk.assert_clean()
    finally:
        driver.quit()
    walk.assert_accessible()
    assert len(walk.found) == 2 * 10
