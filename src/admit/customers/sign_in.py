"""A buyer's login to their customer account, shared by the shop's pages and the headless
checkout: an e-mail address and password checked once, then a signed token.

The token carries the customer's id, their organizer and a fingerprint of the password hash,
signed with the installation's secret key: nothing is stored, a token of one organizer is
worthless at another, and changing the password (or deactivating the account) ends every
token at once. It expires after :data:`TOKEN_DAYS`.

Checking a password costs tens of milliseconds of CPU (argon2); it runs in a thread so the
serving loop keeps answering others, and an unknown address costs as long as a wrong password
(the time does not tell which addresses have an account).
"""

from __future__ import annotations

import asyncio

from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import dummy_hash, hash_fingerprint, verify_password
from admit.db import utcnow
from admit.models import Customer

TOKEN_DAYS = 30
_SALT = "admit.customer-login"


def _serializer(secret_key: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(secret_key, salt=_SALT)


def may_log_in(customer: Customer | None) -> bool:
    """An account that may log in: active, its address confirmed, a password set."""
    return bool(
        customer is not None
        and customer.is_active
        and customer.is_verified
        and customer.password_hash
    )


async def authenticate(
    session: AsyncSession, organizer_id: int, email: str, password: str
) -> Customer | None:
    """The organizer's customer with this e-mail address and password (its last login set
    to now), or None, in the same time either way."""
    found = None
    address = (email or "").strip().lower()
    if address and len(address) <= 190:
        found = await session.scalar(
            select(Customer).where(
                Customer.organizer_id == organizer_id, func.lower(Customer.email) == address
            )
        )
    if not may_log_in(found):
        await asyncio.to_thread(verify_password, dummy_hash(), password)
        return None
    assert found is not None
    if not await asyncio.to_thread(verify_password, found.password_hash, password):
        return None
    found.last_login = utcnow()
    return found


def token_for(secret_key: str, customer: Customer) -> str:
    """The login token of ``customer`` (see the module's docstring)."""
    payload = {
        "c": customer.id,
        "o": customer.organizer_id,
        "p": hash_fingerprint(customer.password_hash),
    }
    return _serializer(secret_key).dumps(payload)


async def customer_for_token(
    session: AsyncSession, secret_key: str, organizer_id: int, token: str
) -> Customer | None:
    """The customer the token was made for, while it is fresh, for this organizer, the
    account may log in and the password is the one it was made with."""
    if not token or len(token) > 512:
        return None
    try:
        data = _serializer(secret_key).loads(token, max_age=TOKEN_DAYS * 86400)
    except (BadSignature, UnicodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("o") != organizer_id:
        return None
    customer_id = data.get("c")
    if not isinstance(customer_id, int) or isinstance(customer_id, bool):
        return None
    customer = await session.get(Customer, customer_id)
    if (
        customer is None
        or customer.organizer_id != organizer_id
        or not may_log_in(customer)
        or data.get("p") != hash_fingerprint(customer.password_hash)
    ):
        return None
    return customer
