"""Generating and hashing credentials.

API tokens are 64 random characters, so a single SHA-256 is a sound way to store them: the
lookup stays one indexed equality, and nothing about a stolen hash helps to guess the token.
Passwords are low-entropy and use argon2.
"""

from __future__ import annotations

import hashlib
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

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
