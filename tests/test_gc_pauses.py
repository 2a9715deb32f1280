"""``ADMIT_LOG_GC_PAUSES_MS``: collections that hold a worker long enough are logged."""

from __future__ import annotations

import gc
import logging

import pytest

from admit import app


def test_a_collection_over_the_threshold_is_logged_once_per_process(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app.log_gc_pauses(0.0001)
    app.log_gc_pauses(0.0001)
    try:
        assert gc.callbacks.count(app._gc_timer) == 1
        cycles = [[] for _ in range(1000)]
        for one in cycles:
            one.append(one)  # a cycle only the collector frees
        del cycles, one
        with caplog.at_level(logging.WARNING, logger="admit.gc"):
            gc.collect()
        messages = [r.getMessage() for r in caplog.records if r.name == "admit.gc"]
        full = [m for m in messages if "generation 2" in m]
        assert full and int(full[0].rsplit("(", 1)[1].split()[0]) >= 1000, messages
    finally:
        gc.callbacks.remove(app._gc_timer)


def test_off_by_default() -> None:
    app.log_gc_pauses(0)
    assert app._gc_timer not in gc.callbacks
