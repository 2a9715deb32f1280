"""The order page's forms in headless Chromium: a refused change of the attendee's details
(the sentence at the field, the input kept), the change saved, then part of the order paid
with a gift card. Every page is checked with axe-core at 390 px and 1280 px and saved as a
screenshot (as ``test_browser.py``)."""

from __future__ import annotations

from pathlib import Path

from tests import axe
from tests.browser import chromium
from tests.shop import helpers as h
from tests.shop.test_browser import SERIOUS, WIDTHS, _shots


async def test_order_page_details_and_gift_card_in_chromium(live_server, tmp_path: Path) -> None:
    assert "axe" in axe.script()
    factory, world = live_server.factory, live_server.world
    shop = await h.setup(factory, world)
    age = await h.question(factory, shop.event, shop.ticket, "Your age", type="N", required=True)
    await h.gift_card(factory, world, "BROWSER-CARD", "10.00")
    async with live_server.client() as http:
        r = await h.cart(http, world, {"item": shop.ticket.id})
        cart = r.json()["cart_id"]
        pid = r.json()["positions"][0]["id"]
        details = [{"id": pid, "answers": [{"question": age.id, "answer": "30"}]}]
        r = await h.buy(http, world, cart, payment_provider="banktransfer", positions=details)
        assert r.status_code == 201, r.text
        page = r.json()["url"]
    shots = _shots(tmp_path)
    problems: dict[str, list[dict]] = {}

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    driver = chromium(WIDTHS[0])
    wait = WebDriverWait(driver, 20)

    def viewport(width: int, height: int = 900) -> None:
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)

    def snap(label: str) -> None:
        for width in WIDTHS:
            viewport(width)
            height = driver.execute_script("return document.documentElement.scrollHeight")
            viewport(width, min(int(height), 4000))
            driver.save_screenshot(str(shots / f"shop-order-{label}-{width}.png"))
            problems[f"{label} at {width} px"] = axe.violations(driver)
        viewport(WIDTHS[0])

    def field(css: str):
        return wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))

    try:
        driver.get(page)
        field("#details-title")
        snap("forms")
        name = field("input[name^=name_]")
        answer = field(f"input[name^=q_][name$='_{age.id}']")
        name.send_keys("Ada Lovelace")
        driver.execute_script("arguments[0].value = ''", answer)  # a required answer removed
        driver.find_element(By.XPATH, "//button[text()='Save changes']").click()
        error = field(f"p.error[id^=q_][id$='_{age.id}-error']")
        assert "This field is required." in error.text
        assert field("input[name^=name_]").get_attribute("value") == "Ada Lovelace"  # kept
        snap("details-refused")
        answer = field(f"input[name^=q_][name$='_{age.id}']")
        answer.send_keys("31")
        driver.find_element(By.XPATH, "//button[text()='Save changes']").click()
        wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, ".flash"), "saved"))
        field("#gift_card").send_keys("BROWSER-CARD")
        driver.find_element(By.XPATH, "//button[text()='Pay with gift card']").click()
        wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, ".flash"), "remain"))
        assert "13.00 EUR remain to be paid" in driver.page_source
        assert "Ada Lovelace" in driver.page_source
        snap("gift-card-part")
    finally:
        driver.quit()
    serious = {
        where: [v for v in found if v["impact"] in SERIOUS]
        for where, found in problems.items()
        if any(v["impact"] in SERIOUS for v in found)
    }
    assert not serious, serious
