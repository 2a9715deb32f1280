"""Routes whose answer carries a secret refuse ``X-Idempotency-Key`` (400).

A keyed request's answer is stored for ``ADMIT_IDEMPOTENCY_HOURS`` so that a retry can be
answered the same. For an answer that carries a secret shown only once — OAuth access and
refresh tokens, a new team API token, a device's API token, a webhook's signing secret — that
would keep the secret in plain text beside its hash, and a keyed repeat of an OAuth code
exchange would hand out the same tokens again instead of counting as the code's reuse. So those
routes take no key: the request is refused before it runs, and a client retries it without
one (each of them is safe to repeat: a second token, a second exchange that revokes both).

Routes mark themselves (the kit imports no domain): ``secret_bearing("POST", path)`` with the
route's path template as mounted (``{name}`` matches one path segment; a trailing slash is
optional). Only keyed requests are checked: a set lookup of the path's last segment (a
cart or a scan costs ~0.3 µs), then one precompiled pattern per method.
"""

from __future__ import annotations

import re

REFUSED = (
    "This request's answer carries a secret, which is never stored: it takes no "
    "X-Idempotency-Key. Send it without one."
)
_TEMPLATES: dict[str, list[str]] = {}
_PATTERNS: dict[str, re.Pattern[str] | None] = {}
# The last segment of every marked path (a literal: templates end in one), per method.
_LAST: dict[str, set[str]] = {}
_PARAM = re.compile(r"\\\{[^/]*?\\\}")


def secret_bearing(method: str, path: str) -> None:
    """Marks ``method path`` (the full path template, e.g. ``/api/v1/device/roll``) as
    answering a secret: keyed requests to it are refused."""
    path = path.rstrip("/")
    last = path.rpartition("/")[2]
    if "{" in last:
        raise ValueError(f"{path}: a secret-bearing path must end in a literal segment")
    template = _PARAM.sub("[^/]+", re.escape(path))
    _TEMPLATES.setdefault(method.upper(), []).append(template)
    _LAST.setdefault(method.upper(), set()).add(last)
    _PATTERNS.pop(method.upper(), None)


def bears_secret(method: str, path: str) -> bool:
    """Whether a request to ``path`` with ``method`` answers a marked route's secret."""
    last = _LAST.get(method)
    if not last or path.rstrip("/").rpartition("/")[2] not in last:
        return False
    if method not in _PATTERNS:
        templates = _TEMPLATES.get(method)
        _PATTERNS[method] = re.compile("(?:" + "|".join(templates) + ")/?") if templates else None
    pattern = _PATTERNS[method]
    return pattern is not None and pattern.fullmatch(path) is not None
