"""Questions in headless Chromium: a question shown only when another is answered so (the
shop's script hides it, and gives it back its ``required``), a file question whose refused
file is named at the field with the rest kept, the order page linking the uploaded file; then
a sold-out date of a series offering its waiting list. Every page is checked with axe-core at
390 px and 1280 px and saved as a screenshot (as ``test_browser.py``).
"""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from tests import axe
from tests.shop import helpers as h
from tests.walk import WIDTHS, Walk


async def test_dependent_and_file_questions_in_chromium(live_server, tmp_path: Path) -> None:
    assert "axe" in axe.script()
    factory, world = live_server.factory, live_server.world
    shop = await h.setup(factory, world)
    guest = await h.question(factory, shop.event, shop.ticket, "Bringing a guest?", type="B")
    name = await h.question(
        factory,
        shop.event,
        shop.ticket,
        "Guest name",
        required=True,
        dependency_question_id=guest.id,
        dependency_values=["True"],
        identifier="GUEST",
    )
    photo = await h.question(
        factory, shop.event, shop.ticket, "Photo for your badge", type="F", required=True
    )
    good = tmp_path / "badge.png"
    out = io.BytesIO()
    Image.new("RGB", (40, 30), (20, 120, 200)).save(out, "PNG")
    good.write_bytes(out.getvalue())
    bad = tmp_path / "notes.txt"
    bad.write_text("not a picture")
    front = f"{live_server.base_url}/{world.org.slug}/{world.event.slug}/"

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    walk = Walk(tmp_path, "shop-questions", WIDTHS[0])
    driver, wait, snap = walk.driver, walk.wait, walk.check

    field = walk.by_id

    def by_name(question_id: int):
        return driver.find_element(By.CSS_SELECTOR, f"[name^=q_][name$='_{question_id}']")

    try:
        driver.get(front)
        field(f"qty-{shop.ticket.id}").send_keys("1")
        driver.find_element(By.CSS_SELECTOR, ".products button[type=submit]").click()
        wait.until(ec.presence_of_element_located((By.ID, "cart")))
        driver.find_element(By.LINK_TEXT, "Go to checkout").click()
        field("email").send_keys("ada@example.org")
        field("email_repeat").send_keys("ada@example.org")
        guest_box = by_name(guest.id)
        guest_name = by_name(name.id)
        assert not guest_name.is_displayed()  # hidden until the guest box is ticked
        assert guest_name.get_attribute("required") is None
        guest_box.click()
        wait.until(lambda _: guest_name.is_displayed())
        assert guest_name.get_attribute("required") is not None
        snap("checkout")
        guest_name.send_keys("Grace Hopper")
        by_name(photo.id).send_keys(str(bad))
        field("pay-banktransfer").click()
        field("place-order").click()
        alert = field("form-errors")
        assert "Photo for your badge: The file must be a PDF" in alert.text
        error = driver.find_element(By.CSS_SELECTOR, "p.error[id$='-error']")
        assert "PDF, PNG, JPEG or GIF" in error.text
        assert by_name(name.id).get_attribute("value") == "Grace Hopper"  # kept
        assert by_name(name.id).is_displayed()  # its question is still ticked
        snap("checkout-file-refused")
        by_name(photo.id).send_keys(str(good))
        field("place-order").click()
        wait.until(ec.title_contains("Order"))
        link = driver.find_element(By.LINK_TEXT, "badge.png")
        async with live_server.client() as http:
            got = await http.get(link.get_attribute("href"))
        assert got.status_code == 200 and got.content == good.read_bytes()
        snap("order")
        # the order page's details form: the file held is named, a new one replaces it
        held = driver.find_element(By.CSS_SELECTOR, "form[action$='details'] p.muted.small")
        assert "badge.png" in held.text
        other = tmp_path / "badge-2.png"
        other.write_bytes(good.read_bytes())
        driver.find_element(
            By.CSS_SELECTOR, f"form[action$='details'] [name^=q_][name$='_{photo.id}']"
        ).send_keys(str(other))
        driver.find_element(By.XPATH, "//button[text()='Save changes']").click()
        wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, ".flash"), "saved"))
        assert driver.find_elements(By.LINK_TEXT, "badge-2.png")
        snap("order-file-replaced")

    finally:
        driver.quit()
    walk.assert_accessible()


async def test_waiting_list_of_a_sold_out_date_in_chromium(live_server, tmp_path: Path) -> None:
    assert "axe" in axe.script()
    factory, world = live_server.factory, live_server.world
    s = await h.series(factory, world, waiting_list_enabled=True)
    async with live_server.client() as http:
        r = await h.cart(http, world, {"item": s.shop.ticket.id}, subevent=s.late.id)
        r = await h.buy(http, world, r.json()["cart_id"], payment_provider="banktransfer")
        assert r.status_code == 201, r.text
    front = f"{live_server.base_url}/{world.org.slug}/{world.event.slug}/"

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    walk = Walk(tmp_path, "shop-waiting", WIDTHS[0])
    driver, wait, snap = walk.driver, walk.wait, walk.check

    try:
        driver.get(f"{front}{s.late.id}/")
        email = wait.until(ec.presence_of_element_located((By.ID, f"wl-email-{s.shop.ticket.id}")))
        assert "Sold out" in driver.page_source
        snap("date-sold-out")
        email.send_keys("eve@example.org")
        driver.find_element(By.CSS_SELECTOR, f"#wl-{s.shop.ticket.id} button").click()
        wait.until(ec.text_to_be_present_in_element((By.TAG_NAME, "main"), "waiting list"))
        assert "You are on the waiting list" in driver.page_source
        snap("joined")
    finally:
        driver.quit()
    walk.assert_accessible()
