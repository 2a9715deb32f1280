"""Generating and hashing credentials.

API tokens are 64 random characters, so a single SHA-256 is a sound way to store them: the
lookup stays one indexed equality, and nothing about a stolen hash helps to guess the token.
Passwords are low-entropy and use argon2.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from fastapi import Request
from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.context import prefetch_event, wants_event_snapshot
from admit.kit.fastread import FastReader

TOKEN_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"

_hasher = PasswordHasher()


def generate_token(length: int = 64) -> str:
    return "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(length))


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    if not password_hash:
        return False
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


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
    token_hash = hash_token(token)
    event_slug = request.path_params.get("event")
    if event_slug is None or not wants_event_snapshot(request):
        return await fast.one(session, plain, {"token_hash": token_hash})
    params = {"token_hash": token_hash, "event_slug": event_slug}
    row = await fast.one(session, with_event, params)
    if row is None:
        return None
    prefetch_event(request, row[organizer_column], event_slug, row[width:])
    return row[:width]
