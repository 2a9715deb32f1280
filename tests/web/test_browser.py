"""A person in a real browser (headless Chromium through Selenium) against a live server:
log in with a TOTP code, consent to one of two organizers, land at a local test client with
the code; the client exchanges it, reads /me and the granted organizer (200), is refused the
other organizer (403), refreshes and revokes.

Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them) and
PostgreSQL (the live server fixture); skips with the reason otherwise.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
from tests.browser import chromium
from tests.oauth.helpers import PASSWORD, make_app, make_totp, pkce


class _Callback(BaseHTTPRequestHandler):
    """The test client's redirect endpoint: remembers what it was sent."""

    received: list[str]

    def do_GET(self) -> None:
        self.received.append(self.path)
        body = b"<!doctype html><title>Client</title><p id=done>Thanks</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def callback() -> Iterator[tuple[str, list[str]]]:
    received: list[str] = []
    handler = type("Handler", (_Callback,), {"received": received})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/callback", received
    finally:
        server.shutdown()
        server.server_close()


async def test_login_consent_exchange_refresh_revoke(live_server, callback):
    driver = chromium(420)  # a phone-sized window
    redirect_uri, received = callback
    factory, world = live_server.factory, live_server.world
    alice = await factory.user("alice@example.org", password=PASSWORD, fullname="Alice")
    for org in (world.org, world.other):
        await factory.team(
            org,
            members=[alice],
            event_permissions=list(EVENT_PERMISSIONS),
            organizer_permissions=list(ORGANIZER_PERMISSIONS),
        )
    totp = await make_totp(factory, alice)
    app = await make_app(factory, uris=[redirect_uri], name="Box office tool")
    verifier, challenge = pkce()
    query = {
        "response_type": "code",
        "client_id": app.client_id,
        "redirect_uri": redirect_uri,
        "scope": "read write profile",
        "state": "browser-state",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    base = live_server.base_url
    try:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait

        wait = WebDriverWait(driver, 20)
        driver.get(f"{base}/api/v1/oauth/authorize?{urlencode(query)}")
        wait.until(ec.presence_of_element_located((By.ID, "email"))).send_keys(alice.email)
        driver.find_element(By.ID, "password").send_keys(PASSWORD)
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(ec.presence_of_element_located((By.ID, "code"))).send_keys(totp.now())
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        checkbox = wait.until(ec.element_to_be_clickable((By.ID, f"org-{world.org.slug}")))
        assert "Box office tool" in driver.page_source
        if os.environ.get("ADMIT_SCREENSHOT_DIR"):
            driver.save_screenshot(os.path.join(os.environ["ADMIT_SCREENSHOT_DIR"], "consent.png"))
        checkbox.click()
        driver.find_element(By.ID, "allow").click()
        wait.until(ec.presence_of_element_located((By.ID, "done")))
    finally:
        driver.quit()

    arrived = [path for path in received if path.startswith("/callback?")]
    assert len(arrived) == 1, received
    params = {k: v[0] for k, v in parse_qs(urlsplit(arrived[0]).query).items()}
    assert params["state"] == "browser-state"

    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        data = {
            "grant_type": "authorization_code",
            "code": params["code"],
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        response = await client.post("/api/v1/oauth/token", data=data, headers=app.basic)
        assert response.status_code == 200, response.text
        tokens = response.json()
        assert tokens["expires_in"] == 86400 and tokens["scope"] == "read write profile"

        def bearer(token: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {token}"}

        me = await client.get("/api/v1/me", headers=bearer(tokens["access_token"]))
        assert me.status_code == 200 and me.json()["email"] == alice.email
        granted = f"/api/v1/organizers/{world.org.slug}/events/"
        refused = f"/api/v1/organizers/{world.other.slug}/events/"
        assert (
            await client.get(granted, headers=bearer(tokens["access_token"]))
        ).status_code == 200
        assert (
            await client.get(refused, headers=bearer(tokens["access_token"]))
        ).status_code == 403

        data = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
        response = await client.post("/api/v1/oauth/token", data=data, headers=app.basic)
        assert response.status_code == 200, response.text
        new = response.json()
        # The old access token is dead in every worker at once (two workers serve this).
        for _ in range(4):
            old = await client.get(granted, headers=bearer(tokens["access_token"]))
            assert old.status_code == 401
        assert (await client.get(granted, headers=bearer(new["access_token"]))).status_code == 200

        response = await client.post(
            "/api/v1/oauth/revoke_token", data={"token": new["refresh_token"]}, headers=app.basic
        )
        assert response.status_code == 200 and response.json() == {}
        for _ in range(4):
            gone = await client.get(granted, headers=bearer(new["access_token"]))
            assert gone.status_code == 401


async def test_the_sessions_list_fits_a_phone_and_a_desktop(live_server):
    """The settings page with two sessions at 390 and 1280 CSS pixels: nothing scrolls
    sideways, the list and its button are visible; "Log out all other sessions" ends the other
    browser's session on the (two-worker) server. With ``ADMIT_SCREENSHOT_DIR`` set, full-page
    screenshots ``sessions-390.png`` and ``sessions-1280.png`` are written there."""
    driver = chromium(420)  # a phone-sized window
    factory = live_server.factory
    alice = await factory.user("alice@example.org", password=PASSWORD, fullname="Alice")
    base = live_server.base_url
    phone_agent = (
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/126.0 Mobile Safari/537.36"
    )
    async with httpx.AsyncClient(
        base_url=base, timeout=30, headers={"User-Agent": phone_agent}
    ) as phone:
        from tests.oauth.helpers import login

        assert (await login(phone, alice.email)).status_code == 303
        try:
            from selenium.webdriver.common.by import By
            from selenium.webdriver.support import expected_conditions as ec
            from selenium.webdriver.support.ui import WebDriverWait

            wait = WebDriverWait(driver, 20)
            driver.get(f"{base}/login")
            wait.until(ec.presence_of_element_located((By.ID, "email"))).send_keys(alice.email)
            driver.find_element(By.ID, "password").send_keys(PASSWORD)
            driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            wait.until(ec.presence_of_element_located((By.ID, "sessions")))
            for width in (390, 1280):
                driver.execute_cdp_cmd(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600},
                )
                driver.get(f"{base}/settings/")
                wait.until(ec.presence_of_element_located((By.ID, "sessions")))
                sideways = driver.execute_script(
                    "return document.documentElement.scrollWidth - window.innerWidth"
                )
                assert sideways <= 0, (width, sideways)
                cards = driver.find_elements(By.CSS_SELECTOR, ".sessions li")
                assert len(cards) == 2 and all(c.is_displayed() for c in cards)
                assert "Chrome on Android" in driver.page_source
                button = driver.find_element(By.XPATH, "//button[contains(., 'other sessions')]")
                assert button.is_displayed()
                right = driver.execute_script(
                    "return arguments[0].getBoundingClientRect().right", button
                )
                assert right <= width
                if os.environ.get("ADMIT_SCREENSHOT_DIR"):
                    height = driver.execute_script("return document.documentElement.scrollHeight")
                    driver.execute_cdp_cmd(
                        "Emulation.setDeviceMetricsOverride",
                        {
                            "width": width,
                            "height": height,
                            "deviceScaleFactor": 1,
                            "mobile": width < 600,
                        },
                    )
                    path = os.path.join(os.environ["ADMIT_SCREENSHOT_DIR"], f"sessions-{width}.png")
                    driver.save_screenshot(path)
            driver.find_element(By.XPATH, "//button[contains(., 'other sessions')]").click()
            wait.until(ec.presence_of_element_located((By.CLASS_NAME, "flash")))
            assert "1 other session was logged out." in driver.page_source
        finally:
            driver.quit()
        for _ in range(4):  # whichever worker answers
            assert (await phone.get("/settings/")).status_code == 303
