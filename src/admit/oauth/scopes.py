"""The scopes an application may ask for: ``read`` (the API's safe methods), ``write``
(the unsafe ones too) and ``profile`` (``GET /api/v1/me``)."""

from __future__ import annotations

SCOPES = ("read", "write", "profile")
DEFAULT_SCOPE = "read write"
DESCRIPTIONS = {
    "read": "Read data of the organizers you choose below",
    "write": "Change data of the organizers you choose below",
    "profile": "See your name, e-mail address, language and time zone",
}


def canonical_scope(scope: str | None) -> str:
    """The requested scopes in canonical order (unknown ones are refused before this); the
    default when none were asked for."""
    if not scope or not scope.split():
        return DEFAULT_SCOPE
    wanted = set(scope.split())
    return " ".join(s for s in SCOPES if s in wanted)
