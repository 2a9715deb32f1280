"""The database's JSON against the Python rendering of the same list page (the tests of
``kit/resources/sql_json.py``'s users): which path answered, and the two answers compared
byte for byte, with a readable diff when they differ."""

from __future__ import annotations

import difflib
import json
from types import ModuleType
from typing import Any

import httpx
import pytest


class Paths:
    """Counts the answers the database's JSON gave; ``off`` turns it off. ``module`` is the
    domain module whose ``_in_sql`` chooses the path."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> None:
        self.in_sql = 0
        self.off = False
        chosen = module._in_sql

        def choose(*args: Any) -> bool:
            answer = not self.off and chosen(*args)
            self.in_sql += answer
            return answer

        monkeypatch.setattr(module, "_in_sql", choose)


async def compare(client: httpx.AsyncClient, h: dict[str, str], paths: Paths, url: str) -> int:
    """The page as served against the page rendered in Python; its status."""
    paths.off = False
    served = await client.get(url, headers=h)
    paths.off = True
    python = await client.get(url, headers=h)
    paths.off = False
    assert served.status_code == python.status_code, (url, served.text, python.text)
    if served.content != python.content:
        a = json.dumps(json.loads(python.content), indent=1).splitlines()
        b = json.dumps(json.loads(served.content), indent=1).splitlines()
        diff = "\n".join(difflib.unified_diff(a, b, "python", "database", lineterm=""))
        pytest.fail(f"{url}: the database's JSON differs\n{diff or 'key order or spacing'}")
    return served.status_code
