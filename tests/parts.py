"""Skip reasons for tests that need a real part of an installation this machine lacks.

Every such skip says ``missing part: <part> (<why>)``, one of :data:`PARTS`, so ``.ci/run``
can fail a CI run in which a group of tests did not run for want of PostgreSQL, Redis,
RabbitMQ, Chromium or a private PostgreSQL cluster (locally the skip is fine). A skip that
is not about a missing part (a SQLite parametrisation of a PostgreSQL-only behaviour) must not
use this phrase.
"""

from __future__ import annotations

PHRASE = "missing part:"
PARTS = ("PostgreSQL", "Redis", "RabbitMQ", "Chromium", "axe-core", "private PostgreSQL cluster")


def missing(part: str, why: str) -> str:
    """The skip reason for a test that cannot run here without ``part``."""
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r}: one of {PARTS}")
    return f"{PHRASE} {part} ({why})"
