"""A buyer with a customer account in headless Chromium against a live server that sends its
mail to a local SMTP server (aiosmtpd): puts a ticket that requires a membership into the
cart, is asked at checkout to log in, signs up, gets the mail, sets the password from its
link (which leads back to the checkout), logs out and in again (after a refused attempt),
buys the ticket with the membership the organizer granted meanwhile, and finds the order on
the account page. Every page is
checked with axe-core at a phone's width (390 px) and a desktop's (1280 px) and saved as a
screenshot (``ADMIT_SCREENSHOT_DIR``, else the test's temporary folder; never committed).

Needs Chromium, npm (for axe-core) and PostgreSQL (the live server); skips with the missing
part's reason otherwise.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select

from admit.db import Base, create_database
from admit.models import Customer, Order
from tests import axe
from tests.factories import Factory, World, build_world
from tests.live import SERVER_POOL_ENV, free_port, serving
from tests.mail.conftest import Mailbox
from tests.shop import accounts_helpers as ah
from tests.shop import helpers as h
from tests.walk import WIDTHS, Walk


@dataclass
class MailingShop:
    base_url: str
    factory: Factory
    world: World
    mailbox: Mailbox


@pytest.fixture
async def mailing_shop(live_database: str, tmp_path: Path) -> AsyncIterator[MailingShop]:
    """A server of its own (one worker) on the live database, emptied, with its mail going to
    a local SMTP server."""
    db = create_database(live_database, pool_size=4)
    async with db.engine.begin() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        tables = [t.name for t in reversed(Base.metadata.sorted_tables)]
        await raw.execute("; ".join(f'DELETE FROM "{n}"' for n in tables))
    factory = Factory(db.sessionmaker)
    world = await build_world(factory)
    box = Mailbox()
    port = free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    env = {
        **os.environ,
        "ADMIT_DATABASE_URL": live_database,
        "ADMIT_DATA_DIR": str(tmp_path / "data"),
        "ADMIT_SMTP_URL": f"smtp://127.0.0.1:{port}?timeout=10",
        **SERVER_POOL_ENV,
    }
    try:
        with serving(env, tmp_path / "server.log") as url:
            yield MailingShop(url, factory, world, box)
    finally:
        controller.stop()
        await db.dispose()


async def _mail_to(box: Mailbox, address: str, seconds: float = 30) -> str:
    """The text part of the first mail to ``address``, once it arrived."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for message in box.messages:
            if address in message["To"]:
                return message.get_body(preferencelist=("plain",)).get_content()
        await asyncio.sleep(0.2)
    raise AssertionError(f"no mail to {address} within {seconds} s")


async def test_a_member_signs_up_and_buys_with_a_membership_in_chromium(
    mailing_shop: MailingShop, tmp_path: Path
) -> None:
    assert "axe" in axe.script()  # before the browser: a missing part skips at once
    live = mailing_shop
    factory, world = live.factory, live.world
    shop = await h.setup(factory, world, contact_mail="tickets@acme.example")
    await ah.accounts_on(factory, world.org, contact_mail="hello@acme.example")
    item, season = await ah.membership_item(factory, shop.event, "Members' evening")
    front = f"{live.base_url}/{world.org.slug}/{world.event.slug}/"
    account = f"{live.base_url}/{world.org.slug}/account/"

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select

    walk = Walk(tmp_path, "accounts", WIDTHS[0])
    driver, wait, snap, field, click = walk.driver, walk.wait, walk.check, walk.by_id, walk.click
    try:
        # 1. the product list says what the ticket needs; the checkout asks to log in
        driver.get(front)
        field(f"qty-{item.id}")
        assert "Requires a membership" in driver.page_source
        snap("front")
        field(f"qty-{item.id}").send_keys("1")
        click(".products button[type=submit]")
        wait.until(ec.presence_of_element_located((By.ID, "cart")))
        driver.find_element(By.LINK_TEXT, "Go to checkout").click()
        field("checkout-login")
        assert "This ticket requires a membership: please" in driver.page_source
        snap("checkout-guest")

        # 2. sign up from the login page the checkout links to
        click("#checkout-login")
        field("login")
        snap("login")
        driver.find_element(By.LINK_TEXT, "Create an account").click()
        field("signup")
        snap("signup")
        field("name").send_keys("Ada Lovelace")
        field("email").send_keys("ada@example.org")
        click("#signup")
        wait.until(ec.title_contains("Check your mailbox"))
        snap("sent")

        # 3. the mail's link sets the password (and logs in)
        text = await _mail_to(live.mailbox, "ada@example.org")
        assert "Hello Ada Lovelace" in text
        driver.get(ah.link_in(text))
        field("set-password")
        snap("set-password")
        field("password").send_keys(ah.PASSWORD)
        field("password_repeat").send_keys(ah.PASSWORD)
        click("#set-password")
        # back at the checkout, logged in: but no membership yet
        wait.until(ec.title_contains("Checkout"))
        assert "Your password has been set" in driver.page_source
        assert "none of yours is valid for it" in driver.page_source
        assert field("email").get_attribute("value") == "ada@example.org"  # from the account
        snap("checkout-no-membership")

        # 4. the organizer grants a membership; log out, and in again (a wrong password first)
        async with factory.sessionmaker() as session:
            ada = await session.scalar(select(Customer).where(Customer.email == "ada@example.org"))
        await ah.membership(factory, ada, season)
        driver.get(account)
        field("logout")
        snap("account-new")
        click("#logout")
        field("login")
        field("email").send_keys("ada@example.org")
        field("password").send_keys("not my password")
        click("#login")
        alert = field("form-errors")
        assert "Wrong e-mail address or password." in alert.text
        assert field("email").get_attribute("value") == "ada@example.org"  # input kept
        snap("login-refused")
        field("password").send_keys(ah.PASSWORD)
        click("#login")
        wait.until(ec.presence_of_element_located((By.ID, "memberships")))
        assert "Season pass" in field("memberships").text
        snap("account-membership")

        # 5. buy the ticket with the membership
        driver.get(f"{front}checkout/")
        choice = Select(walk.by_css("select[id^=membership_]"))
        assert [o.text for o in choice.options] == [choice.first_selected_option.text]
        assert choice.first_selected_option.text.startswith("Season pass (")
        assert field("email").get_attribute("value") == "ada@example.org"  # from the account
        field("email_repeat")
        assert "You are logged in as" in driver.page_source
        snap("checkout-member")
        click("#place-order")
        wait.until(ec.title_contains("Order"))
        assert "Pending payment" in driver.page_source
        snap("order")
        async with factory.sessionmaker() as session:
            order = await session.scalar(select(Order))
        assert order is not None and order.customer_id == ada.id

        # 6. the account page lists the order, linking to it
        driver.get(account)
        orders = field("orders")
        assert order.code in orders.text and "Pending payment" in orders.text
        assert "Used 1 of 3" in field("memberships").text
        snap("account-orders")
        driver.find_element(By.PARTIAL_LINK_TEXT, order.code).click()
        wait.until(ec.title_contains(order.code))
        driver.get(f"{account}?lang=de")
        wait.until(ec.presence_of_element_located((By.ID, "orders")))
        assert "Ihre Bestellungen" in driver.page_source
        snap("account-de")
        walk.assert_clean()
    finally:
        driver.quit()
    walk.assert_accessible()
