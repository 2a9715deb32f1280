"""Headless Chromium through Selenium for the tests that need a real browser (the API docs
page, the OAuth login). Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run``
installs them); the test skips with the missing part's reason otherwise."""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

from tests.parts import missing

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def chromium(width: int, height: int = 900) -> Any:
    """A new headless browser with a window ``width`` wide and ``height`` high that keeps the page's
    console messages (``driver.get_log("browser")``); the caller quits it."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip(missing("Chromium", "apt-get install chromium chromium-driver"))
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip(missing("Chromium", "selenium is not installed: pip install -e '.[test]'"))
    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    # A headless window is never narrower than 500 px: a phone's width needs the viewport
    # set through the DevTools protocol (as the browser's device mode does).
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    return driver
