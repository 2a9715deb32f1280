"""Order codes and ticket secrets: random (CSPRNG), without look-alike characters, unique per
event. Uniqueness is checked before inserting; the unique constraints catch the rare race."""

from __future__ import annotations

import secrets
import string
from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Order, OrderPosition

# Order codes: upper case and digits without O and 1 (read aloud, typed from paper).
CODE_ALPHABET = "".join(c for c in string.ascii_uppercase + string.digits if c not in "O1")
# Ticket secrets: lower case and digits without o, 0, 1, i, l.
SECRET_ALPHABET = "".join(c for c in string.ascii_lowercase + string.digits if c not in "o01il")
WEB_ALPHABET = string.ascii_lowercase + string.digits
PSEUDO_ALPHABET = string.ascii_uppercase + string.digits

CODE_LENGTH = 5
SECRET_LENGTH = 32
TRIES_PER_LENGTH = 10


def random_string(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def ticket_secret() -> str:
    return random_string(SECRET_ALPHABET, SECRET_LENGTH)


def web_secret() -> str:
    return random_string(WEB_ALPHABET, 32)


def order_secret() -> str:
    return random_string(WEB_ALPHABET, 16)


def pseudonymization_id() -> str:
    return random_string(PSEUDO_ALPHABET, 10)


async def new_order_code(session: AsyncSession, event_id: int) -> str:
    """A code not yet used in the event; grows by one character when the space gets crowded."""
    length = CODE_LENGTH
    while True:
        for _ in range(TRIES_PER_LENGTH):
            code = random_string(CODE_ALPHABET, length)
            taken = await session.scalar(
                select(Order.id).where(Order.event_id == event_id, Order.code == code)
            )
            if taken is None:
                return code
        length += 1


async def taken_secrets(session: AsyncSession, event_id: int, wanted: Iterable[str]) -> set[str]:
    """Which of ``wanted`` are already ticket secrets in the event."""
    values = list(set(wanted))
    if not values:
        return set()
    rows = await session.scalars(
        select(OrderPosition.secret).where(
            OrderPosition.event_id == event_id, OrderPosition.secret.in_(values)
        )
    )
    return set(rows)


async def new_ticket_secrets(session: AsyncSession, event_id: int, n: int) -> list[str]:
    """``n`` fresh secrets, distinct from each other and from every secret in the event."""
    result: list[str] = []
    while len(result) < n:
        batch = {ticket_secret() for _ in range(n - len(result))} - set(result)
        batch -= await taken_secrets(session, event_id, batch)
        result.extend(batch)
    return result
