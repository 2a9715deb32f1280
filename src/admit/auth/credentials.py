"""Generating and hashing credentials.

API tokens are 64 random characters, so a single SHA-256 is a sound way to store them: the
lookup stays one indexed equality, and nothing about a stolen hash helps to guess the token.
Passwords are low-entropy and use argon2.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from fastapi import Request
from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.context import LANE_REQUEST, prefetch_event, wants_event_snapshot
from admit.kit.lanes.fastread import FastReader

TOKEN_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"

_hasher = PasswordHasher()


def generate_token(length: int = 64) -> str:
    return "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(length))


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def hash_password(password: str) -> str:
    return _hasher.hash(password)


@cache
def dummy_hash() -> str:
    """Verified when no account matches, so a wrong e-mail address costs as long as a wrong
    password (response times do not tell which addresses have accounts). Made on first use:
    hashing costs a noticeable part of a second, which every process paid on import."""
    return hash_password("admit-no-such-user")


def hash_fingerprint(password_hash: str | None) -> str:
    """Changes whenever the password does: sessions and links that carry it end with it."""
    return hashlib.sha256((password_hash or "-").encode()).hexdigest()[:16]


def verify_password(password_hash: str | None, password: str) -> bool:
    if not password_hash:
        return False
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


@dataclass
class CredentialCache:
    """Credential rows a worker looked up recently, for fast-lane requests only.

    At the doors every scan would otherwise first look up its scanner's token: a statement
    per request for an answer that changes about never. Entries live ``ttl`` seconds; any
    write through the normal application (which is how tokens, devices, teams and events
    change) empties the cache of its worker at once. Only found credentials are kept, so a
    new token works at once everywhere.
    """

    ttl: float
    entries: dict[tuple[Any, ...], tuple[float, Sequence[Any]]] = field(default_factory=dict)

    def get(self, key: tuple[Any, ...]) -> Sequence[Any] | None:
        hit = self.entries.get(key)
        if hit is None:
            return None
        if hit[0] < time.monotonic():
            del self.entries[key]
            return None
        return hit[1]

    def put(self, key: tuple[Any, ...], row: Sequence[Any]) -> None:
        if self.ttl > 0:
            if len(self.entries) >= 10_000:
                self.entries.clear()
            self.entries[key] = (time.monotonic() + self.ttl, row)

    def clear(self) -> None:
        self.entries.clear()


async def credential_row(
    request: Request,
    session: AsyncSession,
    token: str,
    queries: tuple[Select[Any], Select[Any]],
    width: int,
    organizer_column: int,
) -> Sequence[Any] | None:
    """The credential's row in one statement; on a read of an event URL the same statement
    also fetches the event (``queries``: without, with the event), handed on through
    :func:`prefetch_event`. ``width`` columns belong to the credential, the organizer id is
    column ``organizer_column``."""
    plain, with_event = queries
    fast: FastReader = session.info["fast"]
    event_slug = request.path_params.get("event")
    if event_slug is None or not wants_event_snapshot(request):
        event_slug = None
    token_hash = hash_token(token)
    cache: CredentialCache | None = None
    if LANE_REQUEST in request.scope:
        cache = request.app.state.credential_cache
        key = (id(plain), token_hash, event_slug)
        row = cache.get(key)
    if cache is None or row is None:
        if event_slug is None:
            row = await fast.one(session, plain, {"token_hash": token_hash})
        else:
            params = {"token_hash": token_hash, "event_slug": event_slug}
            row = await fast.one(session, with_event, params)
        if row is not None and cache is not None:
            cache.put(key, row)
    if row is None or event_slug is None:
        return row
    prefetch_event(request, row[organizer_column], event_slug, row[width:])
    return row[:width]
