"""Every page a person sees today, checked by axe-core in headless Chromium at a phone's width
(390 px) and a desktop's (1280 px): no WCAG 2.1 A/AA violation and none of axe's best
practices broken. Each page is also saved as a screenshot (``ADMIT_SCREENSHOT_DIR``, else the
test's temporary folder) for a person to look at.

Needs Chromium, npm (for axe-core) and PostgreSQL (the live server); skips with the missing
part's reason otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlencode

from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
from tests import axe
from tests.browser import chromium
from tests.oauth.helpers import PASSWORD, make_app, pkce

WIDTHS = (390, 1280)


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("ADMIT_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def test_every_page_passes_axe_at_both_widths(live_server, tmp_path: Path) -> None:
    script = axe.script()  # before the browser: a missing part skips at once
    assert "axe" in script
    factory, world = live_server.factory, live_server.world
    ada = await factory.user("ada@example.org", password=PASSWORD, fullname="Ada")
    await factory.team(
        world.org,
        members=[ada],
        event_permissions=list(EVENT_PERMISSIONS),
        organizer_permissions=list(ORGANIZER_PERMISSIONS),
    )
    app = await make_app(factory, uris=["https://client.example.org/cb"], name="Box office")
    _, challenge = pkce()
    authorize = urlencode(
        {
            "response_type": "code",
            "client_id": app.client_id,
            "redirect_uri": "https://client.example.org/cb",
            "scope": "read",
            "state": "s",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
    )
    public = {"login": "/login", "password-reset": "/password-reset"}
    signed_in = {
        "settings": "/settings/",
        "password": "/settings/password/",
        "two-factor": "/settings/2fa/",
        "apps": "/settings/apps/",
        "app-new": "/settings/apps/new",
        "consent": f"/api/v1/oauth/authorize?{authorize}",
    }
    base = live_server.base_url
    shots = _shots(tmp_path)
    found: dict[str, list[dict]] = {}
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    def check(driver, name: str, path: str, width: int) -> None:
        driver.get(base + path)
        WebDriverWait(driver, 20).until(ec.presence_of_element_located((By.TAG_NAME, "main")))
        driver.save_screenshot(str(shots / f"{name}-{width}.png"))
        found[f"{name} at {width} px"] = axe.violations(driver)

    for width in WIDTHS:
        driver = chromium(width)
        try:
            for name, path in public.items():
                check(driver, name, path, width)
            driver.get(f"{base}/login")
            email = WebDriverWait(driver, 20).until(
                ec.presence_of_element_located((By.ID, "email"))
            )
            email.send_keys(ada.email)
            driver.find_element(By.ID, "password").send_keys(PASSWORD)
            driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            WebDriverWait(driver, 20).until(ec.url_changes(f"{base}/login"))
            for name, path in signed_in.items():
                check(driver, name, path, width)
        finally:
            driver.quit()

    assert len(found) == len(WIDTHS) * (len(public) + len(signed_in))
    bad = {page: v for page, v in found.items() if v}
    assert not bad, bad


def test_axe_finds_a_real_violation() -> None:
    """The checker is live: a page with an unlabeled input and no language fails it."""
    axe.script()
    driver = chromium(390)
    try:
        driver.get("data:text/html,<title>x</title><main><input type=text></main>")
        ids = {v["id"] for v in axe.violations(driver)}
    finally:
        driver.quit()
    assert {"label", "html-has-lang"} <= ids, ids
