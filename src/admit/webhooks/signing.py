"""Webhook secrets and the ``Admit-Signature`` header.

``Admit-Signature: t=<unix time>,v1=<hex>`` where ``<hex>`` is HMAC-SHA256, keyed with the
secret's UTF-8 bytes, over ``"<t>." + body``. While a rotated-out secret is still valid, a
second ``v1=`` entry carries its signature; a receiver accepts the delivery when any ``v1``
matches one of its secrets (and ``t`` is recent, against replays).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

SIGNATURE_HEADER = "Admit-Signature"


def new_secret() -> str:
    """A fresh webhook secret (256 bits, URL-safe text)."""
    return "whsec_" + secrets.token_urlsafe(32)


def signature(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(secrets_: list[str], timestamp: int, body: bytes) -> str:
    """The header value signed with each of ``secrets_`` (current first)."""
    parts = [f"t={timestamp}"] + [f"v1={signature(s, timestamp, body)}" for s in secrets_]
    return ",".join(parts)
