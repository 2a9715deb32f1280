"""The back-office browser walks' part (``test_browser``, ``test_browser_build``): the shared
walk (``tests.walk``) signed in with a TOTP code."""

from __future__ import annotations

from typing import Any

from tests.walk import Walk as BrowserWalk


class Walk(BrowserWalk):
    """A walk through the back office, at a desktop's width."""

    def login(self, base: str, email: str, password: str, code: Any) -> None:
        """Signs in at ``/control/`` (``code()`` the TOTP code) and waits for the organizer."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec

        driver, wait = self.driver, self.wait
        driver.get(f"{base}/control/")
        wait.until(ec.presence_of_element_located((By.ID, "email"))).send_keys(email)
        driver.find_element(By.ID, "password").send_keys(password)
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(ec.presence_of_element_located((By.ID, "code"))).send_keys(code())
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(ec.url_contains("/control/organizer/acme/"))
