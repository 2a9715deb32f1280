"""The order page's forms in headless Chromium: a refused change of the attendee's details
(the sentence at the field, the input kept), the change saved, part of the order paid with a
gift card, and the invoice address changed after a refused try. Every page is checked with
axe-core at 390 px and 1280 px and saved as a screenshot (as ``test_browser.py``)."""

from __future__ import annotations

from pathlib import Path

from tests import axe
from tests.shop import helpers as h
from tests.walk import WIDTHS, Walk


async def test_order_page_details_and_gift_card_in_chromium(live_server, tmp_path: Path) -> None:
    assert "axe" in axe.script()
    factory, world = live_server.factory, live_server.world
    shop = await h.setup(factory, world, invoice_address_required=True)
    age = await h.question(factory, shop.event, shop.ticket, "Your age", type="N", required=True)
    await h.gift_card(factory, world, "BROWSER-CARD", "10.00")
    async with live_server.client() as http:
        r = await h.cart(http, world, {"item": shop.ticket.id})
        cart = r.json()["cart_id"]
        pid = r.json()["positions"][0]["id"]
        details = [{"id": pid, "answers": [{"question": age.id, "answer": "30"}]}]
        address = {"name": "Ada Lovelace", "street": "Hauptstr. 1", "zipcode": "10115",
                   "city": "Berlin", "country": "DE"}  # fmt: skip
        r = await h.buy(http, world, cart, payment_provider="banktransfer", positions=details,
                        invoice_address=address)  # fmt: skip
        assert r.status_code == 201, r.text
        page = r.json()["url"]

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    walk = Walk(tmp_path, "shop-order", WIDTHS[0])
    driver, wait, snap = walk.driver, walk.wait, walk.check

    field = walk.by_css

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
        city = field("#ia_city")
        city.clear()
        city.send_keys("Hamburg")
        driver.execute_script("arguments[0].value = ''", field("#ia_street"))  # required
        driver.find_element(By.XPATH, "//button[text()='Save the invoice address']").click()
        assert "This field is required." in field("#ia_street-error").text
        assert field("#ia_city").get_attribute("value") == "Hamburg"  # kept
        snap("address-refused")
        field("#ia_street").send_keys("Jungfernstieg 1")
        zipcode = field("#ia_zipcode")
        zipcode.clear()
        zipcode.send_keys("20354")
        driver.find_element(By.XPATH, "//button[text()='Save the invoice address']").click()
        wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, ".flash"), "address"))
        assert field("#ia_city").get_attribute("value") == "Hamburg"
        snap("address-saved")
    finally:
        driver.quit()
    walk.assert_accessible()
