"""The browser walks' shared part (the shop's buyer walks, the back office's): a headless
Chromium and the check made of every page visited, at a phone's width and a desktop's: nothing
scrolls sideways, axe-core's findings kept, a full-page screenshot saved
(``ADMIT_SCREENSHOT_DIR``, else the test's temporary folder; never committed)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests import axe
from tests.browser import chromium

WIDTHS = (390, 1280)
SEVERE = ("serious", "critical")


def shots_folder(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("ADMIT_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Walk:
    """One browser, its waits, and what axe found on each page checked (``found``). The walk
    goes on at ``width`` between checks (a buyer's walk at a phone's, the back office's at a
    desktop's)."""

    def __init__(self, tmp_path: Path, prefix: str, width: int = 1280) -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        self.shots = shots_folder(tmp_path)
        self.prefix = prefix  # the screenshots' file names: {prefix}-{page}-{width}.png
        self.width = width
        self.found: dict[str, list[dict]] = {}
        self.driver: Any = chromium(width)
        self.wait: Any = WebDriverWait(self.driver, 30)

    def size(self, width: int, height: int = 900) -> None:
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)

    def check(self, name: str) -> None:
        """axe and a full-page screenshot of the page shown, at both widths."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec

        driver = self.driver
        for width in WIDTHS:
            self.size(width)
            self.wait.until(ec.presence_of_element_located((By.TAG_NAME, "main")))
            sideways = driver.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth"
            )
            assert sideways <= 0, (name, width, sideways)
            self.found[f"{name} at {width} px"] = axe.violations(driver)
            height = driver.execute_script("return document.documentElement.scrollHeight")
            self.size(width, min(max(int(height), 600), 4000))
            driver.save_screenshot(str(self.shots / f"{self.prefix}-{name}-{width}.png"))
        self.size(self.width)

    def by_id(self, element_id: str) -> Any:
        """The element once it is on the page."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec

        return self.wait.until(ec.presence_of_element_located((By.ID, element_id)))

    def by_css(self, selector: str) -> Any:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec

        return self.wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, selector)))

    def click(self, selector: str) -> None:
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.CSS_SELECTOR, selector).click()

    def assert_clean(self) -> None:
        """No script error or CSP violation logged (network ones aside: a favicon, a refusal)."""
        logged = self.driver.get_log("browser")
        severe = [m for m in logged if m["level"] == "SEVERE" and m.get("source") != "network"]
        assert not severe, severe

    def assert_accessible(self) -> None:
        severe = {
            page: [v for v in violations if v.get("impact") in SEVERE]
            for page, violations in self.found.items()
        }
        assert not any(severe.values()), severe
