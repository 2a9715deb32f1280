"""What a fast lane's batched write decided for each request that reached it."""

from __future__ import annotations

from typing import Any

import pytest

from admit.kit.lanes.batching import Coalescer


def record_outcomes(app: Any, monkeypatch: pytest.MonkeyPatch, batches: Coalescer) -> list[str]:
    """The outcome kinds the lane's batch writer (``batches``) returned, in order; skips off
    PostgreSQL, where there is no lane."""
    if not app.state.db.fast.native:
        pytest.skip("the fast lanes are PostgreSQL's")
    outcomes: list[str] = []
    original = batches._flush

    async def spy(key: Any, items: list[Any]) -> Any:
        result = await original(key, items)
        outcomes.extend(kind for kind, _ in result)
        return result

    monkeypatch.setattr(batches, "_flush", spy)
    return outcomes
