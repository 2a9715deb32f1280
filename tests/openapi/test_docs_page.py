"""The interactive API docs in a real browser (headless Chromium through Selenium).

A server process (``admit serve`` on SQLite in a temporary folder) serves ``/api/v1/docs``;
at a phone's width and a desktop's, the page shows no error banner ("Unable to render this
definition" is what Swagger UI 4 shows for an OpenAPI 3.1 document), scrolled from top to
bottom (at the desktop's) it shows an operation block for every operation of the OpenAPI
document, and the browser reports no Content-Security-Policy violation (the page allows no
inline script). Screenshots go to the test's temporary folder, and to
``ADMIT_TEST_SCREENSHOTS`` when that names a folder.

Needs Debian's ``chromium`` and ``chromium-driver`` (see ``tests/browser.py``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser import chromium
from tests.live import serving

WIDTHS = (390, 1280)
# Scrolled through at one width: the operations shown do not depend on it, and a scroll
# through some 300 operations costs half a minute of a loaded machine.
FULL_SCROLL_WIDTH = 1280


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One browser for the module: each test sets its window's width and loads the page
    afresh, so starting Chromium once per test would only cost time."""
    driver = chromium(WIDTHS[0])
    driver.set_script_timeout(240)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def docs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``admit serve`` on SQLite: the docs page needs no PostgreSQL."""
    data_dir = tmp_path_factory.mktemp("docs-server")
    env = {**os.environ, "ADMIT_DATA_DIR": str(data_dir)}
    env.pop("ADMIT_DATABASE_URL", None)
    subprocess.run([sys.executable, "-m", "admit", "migrate"], env=env, check=True)
    with serving(env, data_dir / "server.log") as url:
        yield url


def _operations(url: str) -> set[tuple[str, str]]:
    document = httpx.get(f"{url}/api/v1/openapi.json", timeout=60).json()  # built on first ask
    assert document["openapi"].startswith("3.1")
    return {(method.upper(), path) for path, ops in document["paths"].items() for method in ops}


def _shown_operations(driver) -> set[tuple[str, str]]:
    found = driver.execute_script(
        """return Array.from(document.querySelectorAll('.opblock')).map(b => [
            b.querySelector('.opblock-summary-method').textContent.trim(),
            b.querySelector('.opblock-summary-path').getAttribute('data-path')]);"""
    )
    return {(method, path) for method, path in found}


def _save(driver, tmp_path: Path, name: str) -> Path:
    shot = tmp_path / name
    driver.save_screenshot(str(shot))
    target = os.environ.get("ADMIT_TEST_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(target) / name)
    return shot


# Swagger UI renders only the operations near the view (a virtual list): scrolled from top to
# bottom a window's height less an overlap at a time, each step collected once the browser has
# painted the new position twice, every operation has been shown once. In the page, so a
# step costs no round trip to the driver.
SCROLL_THROUGH = """
const done = arguments[arguments.length - 1];
const shown = new Map();
const frame = () => new Promise((painted) => requestAnimationFrame(() => painted()));
(async () => {
  const step = Math.max(100, window.innerHeight - 100);
  for (let y = 0; ; y += step) {
    window.scrollTo(0, y);
    await frame();
    await frame();
    for (const b of document.querySelectorAll('.opblock')) {
      const method = b.querySelector('.opblock-summary-method').textContent.trim();
      const path = b.querySelector('.opblock-summary-path').getAttribute('data-path');
      shown.set(method + ' ' + path, [method, path]);
    }
    if (y >= document.documentElement.scrollHeight - window.innerHeight) break;
  }
  done(Array.from(shown.values()));
})();
"""


@pytest.mark.parametrize("width", WIDTHS)
def test_docs_page_renders_every_operation(
    docs_server: str, browser: Any, tmp_path: Path, width: int
):
    expected = _operations(docs_server)
    assert len(expected) > 200
    page = httpx.get(f"{docs_server}/api/v1/docs")
    policy = page.headers["content-security-policy"]
    assert "unsafe-inline" not in policy and "script-src 'self'" in policy
    assert "<script>" not in page.text  # every script is a served file

    from selenium.webdriver.support.wait import WebDriverWait

    driver = browser
    driver.set_window_size(width, 900)
    driver.get_log("browser")  # what an earlier test's page logged is not this one's
    driver.get(f"{docs_server}/api/v1/docs")
    wait = WebDriverWait(driver, 60, poll_frequency=0.1)
    wait.until(lambda d: _shown_operations(d))
    assert driver.find_element("css selector", ".info .title").text.startswith("Admit")
    _save(driver, tmp_path, f"docs-{width}-top.png")
    if width == FULL_SCROLL_WIDTH:
        shown = {(method, path) for method, path in driver.execute_async_script(SCROLL_THROUGH)}
        _save(driver, tmp_path, f"docs-{width}-bottom.png")
        assert expected - shown == set(), sorted(expected - shown)[:10]
    assert "Unable to render" not in driver.find_element("tag name", "body").text
    assert not driver.find_elements("css selector", ".errors-wrapper")
    # Opening an operation shows its description and parameters.
    driver.execute_script("window.scrollTo(0, 0)")
    wait.until(lambda d: d.find_elements("css selector", ".opblock .opblock-summary-control"))
    driver.find_elements("css selector", ".opblock .opblock-summary-control")[0].click()
    opened = wait.until(lambda d: d.find_element("css selector", ".opblock.is-open"))
    # Its summary and description (what it does, the permission it needs) are shown.
    assert opened.find_element("css selector", ".opblock-summary-description").text
    description = wait.until(
        lambda d: opened.find_element("css selector", ".opblock-description-wrapper").text
    )
    assert "Permission:" in description, description
    _save(driver, tmp_path, f"docs-{width}-open.png")
    violations = [
        entry["message"]
        for entry in driver.get_log("browser")
        if "Content Security Policy" in entry["message"] or entry["level"] == "SEVERE"
    ]
    assert violations == []
