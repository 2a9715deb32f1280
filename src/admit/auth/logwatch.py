"""A pytest plugin: no log line written during the test suite may carry a secret it created.

Every token made with :func:`admit.auth.credentials.generate_token` (API, device and OAuth
tokens, client secrets, invitations) and every password hashed with ``hash_password`` is
remembered; every log record of the run (Admit's loggers at INFO, the access log included,
formatted by the production formatter as it would be written) is searched for them. A test
during which a secret reached the logs fails, naming the logger; secrets logged outside any
test fail the session.

Registered in pyproject's pytest options (``-p admit.auth.logwatch``). It lives in the package
because pytest imports ``-p`` plugins before the tests directory is importable, and beside the
credentials it watches (the plumbing in ``kit`` knows no domain); it is only ever imported by
pytest.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Callable, Generator
from typing import Any

import pytest

from admit.auth import credentials
from admit.kit.http.logs import JsonFormatter, RequestIdFilter

# Tokens are runs of the token alphabet; shorter ones are not checked (a chance match in an
# ordinary word or id would be a false alarm).
_MIN_TOKEN = 24
_RUN = re.compile(rf"[a-z0-9]{{{_MIN_TOKEN},}}")
_MIN_PASSWORD = 10


class SecretWatch(logging.Handler):
    """Remembers secrets and finds them in formatted log records."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.tokens: set[str] = set()
        self.lengths: set[int] = set()
        self.passwords: set[str] = set()
        self.leaks: list[str] = []
        self.setFormatter(JsonFormatter())
        self.addFilter(RequestIdFilter())

    def remember_token(self, token: str) -> None:
        if len(token) >= _MIN_TOKEN:
            self.tokens.add(token)
            self.lengths.add(len(token))

    def remember_password(self, password: str) -> None:
        if len(password) >= _MIN_PASSWORD:
            self.passwords.add(password)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:  # a record that cannot be formatted is logging's own problem
            return
        found = self.secrets_in(line)
        if found:
            shown = ", ".join(f"{secret[:6]}…" for secret in sorted(found))
            self.leaks.append(f"{record.name} logged secret(s) {shown}: {line[:500]}")

    def secrets_in(self, line: str) -> set[str]:
        found = {p for p in self.passwords if p in line}
        for run in _RUN.findall(line):
            for length in self.lengths:
                for start in range(len(run) - length + 1):
                    if run[start : start + length] in self.tokens:
                        found.add(run[start : start + length])
        return found


WATCH = SecretWatch()


def _recording(function: Callable[..., Any], remember: Callable[[str], None], arg: int) -> Any:
    def recording(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        remember(result if arg < 0 else str(args[arg] if args else next(iter(kwargs.values()))))
        return result

    recording.__wrapped__ = function  # type: ignore[attr-defined]
    return recording


def _patch(name: str, replacement: Callable[..., Any]) -> None:
    """Replaces ``credentials.<name>`` there and in every module that imported it by name."""
    original = getattr(credentials, name)
    for module in list(sys.modules.values()):
        if module is not None and getattr(module, name, None) is original:
            setattr(module, name, replacement)


def pytest_configure(config: pytest.Config) -> None:
    _patch("generate_token", _recording(credentials.generate_token, WATCH.remember_token, -1))
    _patch("hash_password", _recording(credentials.hash_password, WATCH.remember_password, 0))
    logging.getLogger().addHandler(WATCH)
    admit = logging.getLogger("admit")
    if admit.getEffectiveLevel() > logging.INFO:
        admit.setLevel(logging.INFO)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator:
    outcome = yield
    if not WATCH.leaks:
        return
    report = outcome.get_result()
    leaks, WATCH.leaks = WATCH.leaks, []
    report.outcome = "failed"
    report.longrepr = "secrets written to the logs:\n" + "\n".join(leaks)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if WATCH.leaks:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("secrets written to the logs outside tests:", red=True)
            for leak in WATCH.leaks:
                reporter.write_line(f"  {leak}")
        session.exitstatus = 1
