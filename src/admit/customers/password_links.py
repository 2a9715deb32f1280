"""The links a customer sets a password with: after signing up (the account is unverified
until the password is set) and after "forgotten password".

A link carries the customer's id, their organizer's id and a fingerprint of their current
password hash, signed with the installation's secret key and a salt of its own (a link is no
login, and no login token is a link). Setting a password changes the fingerprint, so the link
works once, and every older link is spent with it; it also expires. Nothing is stored.
"""

from __future__ import annotations

from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import hash_fingerprint, hash_password
from admit.db import utcnow
from admit.models import Customer

SETUP_HOURS = 24  # the link of the sign-up mail: people open it later than a reset mail
RESET_HOURS = 2
_SALT = "admit.customer-password"


def fingerprint(customer: Customer) -> str:
    """Changes whenever the password does (also from none to one)."""
    return hash_fingerprint(customer.password_hash)


def _serializer(secret_key: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(secret_key, salt=_SALT)


def make_token(secret_key: str, customer: Customer, purpose: str) -> str:
    """``purpose`` is ``setup`` (sign-up) or ``reset``: it sets how long the link works."""
    data = {"c": customer.id, "o": customer.organizer_id, "p": fingerprint(customer), "k": purpose}
    return _serializer(secret_key).dumps(data)


async def customer_for_token(
    session: AsyncSession, secret_key: str, organizer_id: int, token: str
) -> Customer | None:
    """The customer the link was made for, while it is fresh, the password unchanged since,
    the account active and the organizer the one in the URL; None otherwise."""
    if not token or len(token) > 1000:
        return None
    try:
        data = _serializer(secret_key).loads(token, max_age=SETUP_HOURS * 3600)
    except (BadSignature, UnicodeError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("c"), int):
        return None
    if data.get("o") != organizer_id:
        return None
    if data.get("k") == "reset":
        try:  # the shorter life of a reset link
            _serializer(secret_key).loads(token, max_age=RESET_HOURS * 3600)
        except BadSignature:
            return None
    elif data.get("k") != "setup":
        return None
    customer = await session.get(Customer, data["c"])
    if (
        customer is None
        or customer.organizer_id != organizer_id
        or not customer.is_active
        or data.get("p") != fingerprint(customer)
    ):
        return None
    return customer


def set_password(customer: Customer, password: str) -> None:
    """Sets the password and marks the address verified: the link that allowed this reached
    the customer's mailbox."""
    customer.password_hash = hash_password(password)
    customer.is_verified = True
    customer.last_modified = utcnow()
