"""A person in headless Chromium sets up an event in the back office against a live server
(PostgreSQL): logs in with a TOTP code, creates an event, enables a payment method in its
settings, creates a product, a quota and a check-in list, sees the go-live problem listed,
goes live, finds an order placed through the API, marks it paid and refunds part of it,
looks at the other catalog pages, runs an export (the progress page follows the job and offers
the file, which is downloaded) and creates a scanner device whose pairing QR code is shown.
Every page visited is checked by axe-core (no serious or
critical violation) at 390 px and 1280 px, nothing scrolls sideways, and a full-page
screenshot of each is saved (``ADMIT_SCREENSHOT_DIR``, else the test's temporary folder).

Needs Chromium, npm (for axe-core) and PostgreSQL; skips with the missing part's reason."""

from __future__ import annotations

from pathlib import Path

import httpx

from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
from tests import axe
from tests.control.walk import Walk
from tests.oauth.helpers import PASSWORD, make_totp


async def _order(base: str, token: str, item: int) -> str:
    e = f"{base}/api/v1/organizers/acme/events/gala"
    headers = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(timeout=60, headers=headers) as api:
        variations = (await api.get(f"{e}/items/{item}/variations/")).json()["results"]
        body = {"email": "lin@example.org", "payment_provider": "manual",
                "positions": [{"item": item, "variation": variations[0]["id"],
                               "attendee_name": "Lin Chen"}]}  # fmt: skip
        response = await api.post(f"{e}/orders/", json=body)
        assert response.status_code == 201, response.text
        return response.json()["code"]


async def _customer(base: str, token: str) -> str:
    """A customer account made through the API: its identifier."""
    headers = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(timeout=60, headers=headers) as api:
        body = {"email": "kim@example.org", "name_parts": {"full_name": "Kim Lee"}}
        response = await api.post(f"{base}/api/v1/organizers/acme/customers/", json=body)
        assert response.status_code == 201, response.text
        return response.json()["identifier"]


async def test_back_office_build_walk(live_server, tmp_path: Path) -> None:
    script = axe.script()
    assert "axe" in script
    factory, world = live_server.factory, live_server.world
    base = live_server.base_url
    boss = await factory.user("builder@example.org", password=PASSWORD, fullname="Bo Builder")
    await factory.team(world.org, members=[boss], event_permissions=list(EVENT_PERMISSIONS),
                       organizer_permissions=list(ORGANIZER_PERMISSIONS))  # fmt: skip
    totp = await make_totp(factory, boss)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    walk = Walk(tmp_path, "control-build")
    driver, wait, check = walk.driver, walk.wait, walk.check

    def fill(values: dict[str, str]) -> None:
        for name, value in values.items():
            field = driver.find_element(By.ID, f"f-{name}")
            if field.get_attribute("type") == "datetime-local":
                driver.execute_script("arguments[0].value = arguments[1]", field, value)
            elif field.tag_name == "select":
                driver.execute_script("arguments[0].value = arguments[1]", field, value)
            else:
                field.clear()
                field.send_keys(value)

    def tick(selector: str) -> None:
        box = driver.find_element(By.CSS_SELECTOR, selector)
        if not box.is_selected():
            box.click()

    def flash(text: str) -> None:
        from selenium.common.exceptions import StaleElementReferenceException, TimeoutException

        waiting = WebDriverWait(driver, 30, ignored_exceptions=(StaleElementReferenceException,))
        try:  # the new page's message (the page before may show one too: not that one)
            waiting.until(lambda d: text in "".join(
                e.text for e in d.find_elements(By.CLASS_NAME, "flash")))  # fmt: skip
        except TimeoutException:
            main = driver.find_element(By.TAG_NAME, "main").text
            raise AssertionError(f"no message {text!r}: {main[:1500]}") from None

    event = f"{base}/control/event/acme/gala/"
    try:
        walk.login(base, boss.email, PASSWORD, totp.now)

        driver.find_element(By.ID, "new-event").click()
        wait.until(ec.presence_of_element_located((By.ID, "f-slug")))
        fill({"name": "Gala Night", "slug": "gala", "date_from": "2031-05-01T19:00",
              "timezone": "Europe/Berlin", "currency": "EUR"})  # fmt: skip
        check("event-new")
        driver.find_element(By.ID, "create-event").click()
        flash("The event was created.")
        check("event-settings")

        tick('input[name="plugins"][value="manualpayment"]')
        tick("#f-payment_manual__enabled")
        fill({"frontpage_text": "Dress code: festive."})
        driver.find_element(By.ID, "save-settings").click()
        flash("The event's settings were saved.")

        driver.get(event + "products/new")
        wait.until(ec.presence_of_element_located((By.ID, "f-default_price")))
        fill({"name": "Dinner seat", "default_price": "abc", "variations": "Standard\nVIP = 150"})
        driver.find_element(By.ID, "save-products").click()
        wait.until(ec.presence_of_element_located((By.ID, "f-default_price-error")))
        check("product-error")
        fill({"default_price": "80.00"})
        tick("#f-admission")
        driver.find_element(By.ID, "save-products").click()
        flash("The product was created.")
        assert "VIP" in driver.page_source
        check("product")
        item = int(driver.current_url.rstrip("/").rsplit("/", 1)[1])

        driver.get(event + "live/")
        wait.until(ec.presence_of_element_located((By.ID, "go-live")))
        assert "at least one quota" in driver.page_source
        check("live-problems")

        driver.get(event + "quotas/new")
        wait.until(ec.presence_of_element_located((By.ID, "f-name")))
        fill({"name": "Ballroom", "size": "120"})
        tick(f'input[name="items"][value="{item}"]')
        driver.find_element(By.ID, "save-quotas").click()
        # the API's rule, in its words: a product with variations needs them named too
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "p.error")))
        assert "none of these are in the variations list" in driver.page_source
        check("quota-error")
        for box in driver.find_elements(By.CSS_SELECTOR, 'input[name="variations"]'):
            box.click()
        driver.find_element(By.ID, "save-quotas").click()
        flash("The quota was created.")
        assert "Available now" in driver.page_source
        check("quota")

        driver.get(event + "checkinlists/new")
        wait.until(ec.presence_of_element_located((By.ID, "f-name")))
        fill({"name": "Front door"})
        tick("#f-all_products")
        driver.find_element(By.ID, "save-checkinlists").click()
        flash("The check-in list was created.")
        check("checkin-list")

        driver.get(event + "live/")
        wait.until(ec.presence_of_element_located((By.ID, "go-live"))).click()
        flash("The shop is live.")
        check("live")

        code = await _order(base, world.admin, item)
        driver.get(event + "orders/")
        wait.until(ec.presence_of_element_located((By.LINK_TEXT, code))).click()
        wait.until(ec.presence_of_element_located((By.ID, "mark-paid"))).click()
        flash("The order was marked as paid.")
        refund_amount = wait.until(ec.presence_of_element_located((By.ID, "refund-amount")))
        refund_amount.send_keys("30.00")
        driver.find_element(By.ID, "refund").click()
        flash("The refund was created.")
        assert "Refund created" in driver.page_source and "user Bo Builder" in driver.page_source
        check("order-refunded")

        areas = ("categories", "taxrules", "questions", "vouchers", "products", "quotas",
                 "discounts", "discounts/new", "exports/scheduled/new")  # fmt: skip
        for area in areas:
            driver.get(event + f"{area}/".replace("new/", "new"))
            check("list-" + area.replace("/", "-"))
        # deleting: a product that has been ordered is refused on its confirm page, in words
        driver.get(event + f"products/{item}/delete")
        wait.until(ec.presence_of_element_located((By.ID, "confirm-delete"))).click()
        wait.until(ec.presence_of_element_located((By.ID, "delete-refused")))
        assert "already been ordered" in driver.page_source
        check("product-delete-refused")
        driver.get(event + "vouchers/batch")
        check("vouchers-batch")
        fill({"count": "3", "tag": "press"})
        driver.find_element(By.ID, "create-vouchers").click()
        flash("3 vouchers were created.")
        assert driver.page_source.count("0 of 1") == 3
        check("vouchers-tagged")
        driver.get(event + "questions/new")
        check("question-new")

        # an export: the progress page follows the job, then offers the file
        driver.get(event + "exports/")
        wait.until(ec.presence_of_element_located((By.ID, "run-orderlist")))
        check("exports")
        driver.execute_script("document.getElementById('orderlist-_format').value = 'xlsx'")
        driver.find_element(By.ID, "run-orderlist").click()
        wait.until(ec.url_contains("/exports/orderlist/"))
        link = WebDriverWait(driver, 90).until(
            ec.presence_of_element_located((By.ID, "export-download"))
        )
        check("export-done")
        fetched = driver.execute_async_script(
            "var done = arguments[arguments.length - 1];"
            "fetch(arguments[0], {credentials: 'same-origin'}).then(function (r) {"
            "  return r.arrayBuffer().then(function (b) {"
            "    done([r.status, r.headers.get('content-type'), b.byteLength,"
            "          r.headers.get('content-disposition')]); }); })"
            ".catch(function (e) { done(['error', String(e)]); });",
            link.get_attribute("href"),
        )
        assert fetched[0] == 200, fetched
        assert "spreadsheetml" in fetched[1] and fetched[2] > 1000, fetched
        assert ".xlsx" in fetched[3], fetched

        # a scanner device: its pairing QR code is shown as an image
        driver.get(f"{base}/control/organizer/acme/devices/new")
        wait.until(ec.presence_of_element_located((By.ID, "f-name")))
        check("device-new")
        fill({"name": "Front door scanner"})
        driver.find_element(By.ID, "create-device").click()
        flash("The device was created.")
        qr = wait.until(ec.presence_of_element_located((By.ID, "pairing-qr")))
        wait.until(lambda d: d.execute_script("return arguments[0].complete", qr))
        assert driver.execute_script("return arguments[0].naturalWidth", qr) > 100
        check("device")
        driver.get(f"{base}/control/organizer/acme/devices/")
        assert "Front door scanner" in driver.page_source
        check("devices")
        customer = await _customer(base, world.admin)
        for area in ("exports/", "webhooks/new", "teams/new", "giftcards/new", "customers/"):
            driver.get(f"{base}/control/organizer/acme/{area}")
            check("organizer-" + area.replace("/", "-").strip("-"))
        driver.find_element(By.LINK_TEXT, customer).click()
        wait.until(ec.text_to_be_present_in_element((By.TAG_NAME, "main"), "Kim Lee"))
        check("customer")
        driver.get(f"{base}/control/organizer/acme/giftcards/new")
        wait.until(ec.presence_of_element_located((By.ID, "f-value")))
        fill({"value": "25.00"})
        driver.find_element(By.ID, "create-giftcard").click()
        flash("was created")
        check("giftcard")
        walk.assert_clean()
    finally:
        driver.quit()
    walk.assert_accessible()
