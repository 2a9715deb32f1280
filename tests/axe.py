"""axe-core, the accessibility checker, fetched from the npm registry for the browser tests.

The script is taken once per machine with ``npm pack`` (npm's own client, the registry the
project may reach) into a cache under the user's cache directory and read from there on; a
machine without npm, or without the registry, skips the page checks with a missing-part reason
that ``.ci/run`` turns into a failure in CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.parts import missing

VERSION = "4.14.1"
# What a page must not have: every rule of WCAG 2.0/2.1 A and AA, and axe's best practices.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]


def _cache() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "admit-tests" / f"axe-core-{VERSION}"


def script() -> str:
    """The text of ``axe.min.js``; skips the test when it cannot be had."""
    target = _cache() / "axe.min.js"
    if not target.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(missing("axe-core", "npm is not installed: apt-get install npm"))
        target.parent.mkdir(parents=True, exist_ok=True)
        packed = subprocess.run(
            [npm, "pack", f"axe-core@{VERSION}", "--pack-destination", str(target.parent)],
            capture_output=True,
            text=True,
            timeout=180,
        )
        archive = target.parent / f"axe-core-{VERSION}.tgz"
        if packed.returncode != 0 or not archive.exists():
            pytest.skip(missing("axe-core", f"npm pack failed: {packed.stderr.strip()[-300:]}"))
        with tarfile.open(archive) as tar:
            member = tar.extractfile("package/axe.min.js")
            assert member is not None
            partial = target.with_suffix(".part")
            partial.write_bytes(member.read())
            partial.replace(target)  # whole or not at all, when two test processes race
        archive.unlink()
    return target.read_text(encoding="utf-8")


def violations(driver: Any) -> list[dict[str, Any]]:
    """Runs axe on the page the driver shows; its violations, each with the elements."""
    driver.execute_script(script())
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}})"
        ".then(r => done(r.violations), e => done([{id: 'axe-error', help: String(e)}]));",
        TAGS,
    )
    return [
        {
            "id": v["id"],
            "impact": v.get("impact"),
            "help": v.get("help"),
            "nodes": [n.get("target") for n in v.get("nodes", [])][:5],
        }
        for v in result
    ]
