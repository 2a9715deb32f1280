"""Apps with edge settings of their own (rate limits, proxies, log format) on the test
database, a record of which requests the fast lane answered, and log capture."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from admit import app as app_module
from admit.app import create_app
from admit.config import Settings
from admit.kit.http.logs import JsonFormatter, RequestIdFilter, TextFormatter
from tests.conftest import _no_server_errors


@contextlib.asynccontextmanager
async def edge_app(database_url: str, data_dir: Path, **settings: Any) -> AsyncIterator[FastAPI]:
    """An application on ``database_url`` built with ``settings`` (its own edge layers)."""
    settings.setdefault("base_url", "http://testserver")
    application = create_app(Settings(data_dir=data_dir, database_url=database_url, **settings))
    try:
        yield application
    finally:
        store = getattr(_innermost_rate_limit(application), "store", None)
        if store is not None and hasattr(store, "client"):
            await store.client.aclose()
        await application.state.db.dispose()


def _innermost_rate_limit(application: FastAPI) -> Any:
    """The rate-limit layer's function (it carries its store), if the app has one: the edge
    layers are closures over the next one inward."""
    pending, seen = [application.edge], set()
    while pending:
        layer = pending.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        if hasattr(layer, "store"):
            return layer
        for cell in getattr(layer, "__closure__", None) or ():
            if callable(cell.cell_contents):
                pending.append(cell.cell_contents)
    return None


@contextlib.asynccontextmanager
async def client_for(
    application: FastAPI,
    ip: str = "127.0.0.1",
    base_url: str = "http://testserver",
    checked: bool = True,
) -> AsyncIterator[httpx.AsyncClient]:
    """A client whose requests come from ``ip``; ``checked`` fails the test on any 5xx."""
    transport = httpx.ASGITransport(app=application, client=(ip, 50000))
    hooks = {"response": [_no_server_errors]} if checked else {}
    async with httpx.AsyncClient(
        transport=transport, base_url=base_url, event_hooks=hooks
    ) as client:
        yield client


class LaneSpy:
    """Counts the requests each fast-lane handler answered itself (did not decline)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.answered: dict[str, int] = {}
        for route in app_module.LANE.routes:
            monkeypatch.setattr(route, "handler", self._spy(route.template, route.handler))

    def _spy(self, template: str, handler: Any) -> Any:
        async def spy(request: Any) -> Any:
            answer = await handler(request)
            if answer is not None:
                self.answered[template] = self.answered.get(template, 0) + 1
            return answer

        return spy

    def count(self, suffix: str) -> int:
        return sum(n for template, n in self.answered.items() if template.endswith(suffix))


class Captured(logging.Handler):
    """Every record (as the JSON and the text formatter write it) and the raw records."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.addFilter(RequestIdFilter())
        self.json = JsonFormatter()
        self.text = TextFormatter()
        self.records: list[logging.LogRecord] = []
        self.json_lines: list[str] = []
        self.text_lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.json_lines.append(self.json.format(record))
        self.text_lines.append(self.text.format(record))


@contextlib.contextmanager
def captured_logs(level: int = logging.DEBUG) -> Iterator[Captured]:
    """Captures Admit's log records (at ``level``) and uvicorn's while the block runs."""
    handler = Captured()
    loggers = [logging.getLogger(name) for name in ("admit", "uvicorn")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(level)
    try:
        yield handler
    finally:
        for logger, old in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(old)
