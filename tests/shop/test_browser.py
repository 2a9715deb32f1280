"""A buyer in headless Chromium against a live server: buys a free ticket, then a ticket paid
by bank transfer with a voucher and the method's fee (after one refused attempt, whose input
is kept; the total follows the payment method chosen), sees both
order pages, downloads the PDF and cancels the unpaid order. Every page is checked with
axe-core at a phone's width (390 px) and a desktop's (1280 px) and saved as a screenshot
(``ADMIT_SCREENSHOT_DIR``, else the test's temporary folder; never committed).

Needs Chromium, npm (for axe-core) and PostgreSQL (the live server); skips with the missing
part's reason otherwise.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from admit.models import Item
from tests import axe
from tests.shop import helpers as h
from tests.walk import WIDTHS, Walk


async def test_a_buyer_buys_two_orders_in_chromium(live_server, tmp_path: Path) -> None:
    assert "axe" in axe.script()  # before the browser: a missing part skips at once
    factory, world = live_server.factory, live_server.world
    shop = await h.setup(
        factory,
        world,
        attendee_names_required=True,
        contact_mail="tickets@acme.example",
        frontpage_text={"en": "Two days of talks on ticketing, with lunch."},
        payment_banktransfer__fee_abs="1.50",  # shown with bank transfer, in its total
    )
    await factory._add(
        Item(
            event_id=shop.event.id,
            name={"en": "Workshop"},
            default_price=Decimal("40.00"),
            description={"en": "Hands-on, limited seats."},
        )
    )
    await h.voucher(factory, shop.event, "SAVE5", price_mode="subtract", value=5, max_usages=3)
    base = live_server.base_url
    front = f"{base}/{world.org.slug}/{world.event.slug}/"

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    walk = Walk(tmp_path, "shop", WIDTHS[0])
    driver, wait, snap = walk.driver, walk.wait, walk.check

    field = walk.by_id

    click = walk.click

    try:
        # 1. the free ticket
        driver.get(front)
        field(f"qty-{shop.free.id}")
        assert "23.00 EUR" in driver.page_source and "Two days of talks" in driver.page_source
        snap("front")
        field(f"qty-{shop.free.id}").send_keys("1")
        click(".products button[type=submit]")
        wait.until(ec.presence_of_element_located((By.ID, "cart")))
        snap("cart")
        driver.find_element(By.LINK_TEXT, "Go to checkout").click()
        field("email").send_keys("ada@example.org")
        field("email_repeat").send_keys("ada@example.org")
        snap("checkout-free")
        driver.find_element(By.CSS_SELECTOR, "input[id^=name_]").send_keys("Ada Lovelace")
        click("#place-order")
        wait.until(ec.title_contains("Order"))
        assert "Paid" in driver.page_source and "Ada Lovelace" in driver.page_source
        snap("order-free")
        pdf_link = driver.find_element(By.PARTIAL_LINK_TEXT, "Download all tickets")
        async with live_server.client() as http:
            pdf = await http.get(pdf_link.get_attribute("href"))
        assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")

        # 2. a ticket with a voucher, paid by bank transfer, after a refused first try
        driver.get(front)
        field(f"qty-{shop.ticket.id}").send_keys("1")
        field("voucher").send_keys("SAVE5")
        click(".products button[type=submit]")
        wait.until(ec.presence_of_element_located((By.ID, "cart")))
        assert "18.00" in driver.find_element(By.ID, "cart").text
        driver.find_element(By.LINK_TEXT, "Go to checkout").click()
        field("email").send_keys("grace@example.org")
        field("email_repeat").send_keys("grace@example.com")
        driver.find_element(By.CSS_SELECTOR, "input[id^=name_]").send_keys("Grace Hopper")
        # each method names its fee; the total follows the method chosen
        assert "+ 1.50 EUR payment fee" in field("fee-banktransfer").text
        click("#pay-giftcard")
        assert field("total-amount").text == "18.00 EUR"
        click("#pay-banktransfer")
        assert field("total-amount").text == "19.50 EUR"
        snap("checkout-fee")
        click("#place-order")
        alert = field("form-errors")
        assert "The two e-mail addresses differ." in alert.text
        assert field("email").get_attribute("value") == "grace@example.org"  # input kept
        snap("checkout-refused")
        repeat = field("email_repeat")
        repeat.clear()
        repeat.send_keys("grace@example.org")
        click("#place-order")
        wait.until(ec.title_contains("Order"))
        page = driver.page_source
        assert "Pending payment" in page and h.IBAN in page and "18.00 EUR" in page
        assert "Payment fee (Bank transfer)" in page and "Total 19.50 EUR" in page
        snap("order-bank")
        click("button.danger")
        wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, ".status"), "Canceled"))
        snap("order-canceled")
    finally:
        driver.quit()
    walk.assert_accessible()
