"""The interactive API docs in a real browser (headless Chromium through Selenium).

A server process (``admit serve`` on SQLite in a temporary folder) serves ``/api/v1/docs``;
scrolled from top to bottom at a phone's width and a desktop's, the page shows an operation
block for every operation of the OpenAPI document, no error banner ("Unable to render this
definition" is what Swagger UI 4 shows for an OpenAPI 3.1 document), and the browser reports no
Content-Security-Policy violation (the page allows no inline script). Screenshots go to the
test's temporary folder, and to ``ADMIT_TEST_SCREENSHOTS`` when that names a folder.

Needs Debian's ``chromium`` and ``chromium-driver``; skips with the reason otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.live import _free_port, _wait_until_serving

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
WIDTHS = (390, 1280)


def _browser(width: int):
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("headless Chromium is not installed (apt-get install chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},900")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@pytest.fixture(scope="module")
def docs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``admit serve`` on SQLite: the docs page needs no PostgreSQL."""
    data_dir = tmp_path_factory.mktemp("docs-server")
    port = _free_port()
    env = {
        **os.environ,
        "ADMIT_DATA_DIR": str(data_dir),
        "ADMIT_BASE_URL": f"http://127.0.0.1:{port}",
    }
    env.pop("ADMIT_DATABASE_URL", None)
    subprocess.run([sys.executable, "-m", "admit", "migrate"], env=env, check=True)
    log = (data_dir / "server.log").open("wb")
    command = [sys.executable, "-m", "admit", "serve", "--port", str(port), "--workers", "1"]
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_serving(url, process)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _operations(url: str) -> set[tuple[str, str]]:
    document = httpx.get(f"{url}/api/v1/openapi.json").json()
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


@pytest.mark.parametrize("width", WIDTHS)
def test_docs_page_renders_every_operation(docs_server: str, tmp_path: Path, width: int):
    expected = _operations(docs_server)
    assert len(expected) > 200
    page = httpx.get(f"{docs_server}/api/v1/docs")
    policy = page.headers["content-security-policy"]
    assert "unsafe-inline" not in policy and "script-src 'self'" in policy
    assert "<script>" not in page.text  # every script is a served file

    driver = _browser(width)
    try:
        driver.get(f"{docs_server}/api/v1/docs")
        deadline = time.monotonic() + 60
        while not _shown_operations(driver) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert driver.find_element("css selector", ".info .title").text.startswith("Admit")
        _save(driver, tmp_path, f"docs-{width}-top.png")
        # Swagger UI lays the operations out as they come into view: scrolled through from
        # top to bottom, every operation of the document has been shown.
        shown: set[tuple[str, str]] = set()
        y, deadline = 0, time.monotonic() + 240
        while time.monotonic() < deadline:
            driver.execute_script("window.scrollTo(0, arguments[0])", y)
            time.sleep(0.2)
            shown |= _shown_operations(driver)
            height = driver.execute_script("return document.body.scrollHeight")
            if y >= height and shown >= expected:
                break
            y += 600
            if y == 600 * 12:
                _save(driver, tmp_path, f"docs-{width}-middle.png")
        assert "Unable to render" not in driver.find_element("tag name", "body").text
        assert not driver.find_elements("css selector", ".errors-wrapper")
        assert expected - shown == set(), sorted(expected - shown)[:10]
        _save(driver, tmp_path, f"docs-{width}-bottom.png")
        # Opening an operation shows its description and parameters.
        driver.execute_script("window.scrollTo(0, 0)")
        time.sleep(1)
        driver.find_elements("css selector", ".opblock .opblock-summary-control")[0].click()
        time.sleep(1)
        opened = driver.find_element("css selector", ".opblock.is-open")
        # Its summary and description (what it does, the permission it needs) are shown.
        assert opened.find_element("css selector", ".opblock-summary-description").text
        description = opened.find_element("css selector", ".opblock-description-wrapper").text
        assert "Permission:" in description, description
        _save(driver, tmp_path, f"docs-{width}-open.png")
        violations = [
            entry["message"]
            for entry in driver.get_log("browser")
            if "Content Security Policy" in entry["message"] or entry["level"] == "SEVERE"
        ]
        assert violations == []
    finally:
        driver.quit()
