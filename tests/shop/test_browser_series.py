"""A business buyer in headless Chromium: picks a date of an event series, adds a VIP ticket
(with its bundled drink), chooses a shirt on the add-on step, enters a French company's
invoice address with a VAT ID, sees the reverse-charged price on the checkout page before the
binding order, and places it. Every page is checked with axe-core at 390 px and 1280 px and
saved as a screenshot (as ``test_browser.py``).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from sqlalchemy import update

from admit.models import CartPosition
from tests import axe
from tests.shop import helpers as h
from tests.walk import WIDTHS, Walk


async def test_series_addon_and_reverse_charge_in_chromium(live_server, tmp_path: Path) -> None:
    assert "axe" in axe.script()
    factory, world = live_server.factory, live_server.world
    s = await h.series(factory, world, invoice_address_vatid=True)
    x = await h.extras(factory, s.shop, subevent=s.early)
    await h.reverse_charge_rule(factory, s.shop, x.vip, x.shirt, x.drink)
    front = f"{live_server.base_url}/{world.org.slug}/{world.event.slug}/"

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select

    walk = Walk(tmp_path, "shop-series", WIDTHS[0])
    driver, wait, snap = walk.driver, walk.wait, walk.check

    field = walk.by_id

    try:
        driver.get(front)
        wait.until(ec.presence_of_element_located((By.ID, "dates-title")))
        assert "Matinee" in driver.page_source and "Old" not in driver.page_source
        snap("dates")
        driver.find_element(By.PARTIAL_LINK_TEXT, "Matinee").click()
        field(f"qty-{x.vip.id}").send_keys("1")
        assert "30.00 EUR" in driver.page_source  # the date's own ticket price
        snap("date")
        driver.find_element(By.CSS_SELECTOR, ".products button[type=submit]").click()
        wait.until(ec.presence_of_element_located((By.ID, "addons-continue")))
        snap("addons")
        shirt = driver.find_element(By.CSS_SELECTOR, f"input[name$='_{x.shirt.id}']")
        shirt.send_keys("1")
        driver.find_element(By.ID, "addons-continue").click()
        countdown = field("cart-timer").find_element(By.CLASS_NAME, "countdown")
        wait.until(lambda _: re.fullmatch(r"\d+:\d\d left", countdown.text))
        # the reservation runs out while the buyer looks: the script says so
        async with factory.sessionmaker() as session:
            soon = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=3)
            await session.execute(update(CartPosition).values(expires=soon))
            await session.commit()
        driver.refresh()
        note = field("cart-timer").find_element(By.CLASS_NAME, "expired-note")
        wait.until(lambda _: note.is_displayed() and "ran out" in note.text)
        snap("checkout-ran-out")
        driver.refresh()
        field("email").send_keys("compta@example.fr")
        field("email_repeat").send_keys("compta@example.fr")
        assert "75.00" in field("total").text  # 60 + 15, VAT included
        field("ia_is_business").click()
        field("ia_company").send_keys("Société Exemple SARL")
        field("ia_street").send_keys("1 rue de la Paix")
        field("ia_zipcode").send_keys("75002")
        field("ia_city").send_keys("Paris")
        Select(field("ia_country")).select_by_value("FR")
        field("ia_vat_id").send_keys("FR40303265045")
        driver.find_element(By.CSS_SELECTOR, "button[name=step]").click()
        wait.until(ec.presence_of_element_located((By.ID, "reverse-charge")))
        assert "63.03" in field("total").text  # 75.00 without its 19 % VAT
        assert field("ia_company").get_attribute("value") == "Société Exemple SARL"
        snap("checkout-reverse-charge")
        field("pay-banktransfer").click()
        field("place-order").click()
        wait.until(ec.title_contains("Order"))
        page = driver.page_source
        assert "Pending payment" in page and "63.03" in page and "Matinee" in page
        snap("order")
    finally:
        driver.quit()
    walk.assert_accessible()
