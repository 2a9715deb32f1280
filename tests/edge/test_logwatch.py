"""The session-wide check (``admit.auth.logwatch``, loaded by pyproject's pytest options)."""

from __future__ import annotations

import logging

from admit.auth import credentials, logwatch
from admit.auth.logwatch import SecretWatch


def _record(message: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("admit.test", logging.WARNING, __file__, 1, message, args, None)


def test_it_finds_remembered_secrets_in_formatted_lines():
    watch = SecretWatch()
    token = credentials.generate_token()
    watch.remember_token(token)
    watch.remember_token("short")  # too short to search for
    watch.remember_password("correct horse battery")
    watch.emit(_record("nothing here %s", "abcdefghijklmnopqrstuvwxyz0123"))
    assert watch.leaks == []
    watch.emit(_record("oops: %s", f"x{token}y"))  # inside a longer run too
    watch.emit(_record("user typed %s", "correct horse battery"))
    watch.emit(_record("Authorization: Token %s", token))  # scrubbed before it is written
    assert len(watch.leaks) == 2
    assert "admit.test logged secret(s)" in watch.leaks[0]


def test_the_suite_records_every_generated_token():
    # The plugin is active in this run: tokens made anywhere are remembered.
    token = credentials.generate_token()
    assert token in logwatch.WATCH.tokens
    assert logwatch.WATCH in logging.getLogger().handlers
