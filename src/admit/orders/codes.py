"""Order codes and ticket secrets: random (CSPRNG), without look-alike characters, unique per
event. Uniqueness is checked before inserting; the unique constraints catch the rare race.

Strings are drawn in bulk: one call to the CSPRNG for all the characters a request needs,
mapped onto the alphabet by a byte table (bytes that would bias the mapping are dropped), which
costs a fraction of one ``secrets.choice`` call per character.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Iterable, Iterator

from sqlalchemy import bindparam, select
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

_TABLES: dict[str, tuple[bytes, bytes]] = {}


def _table(alphabet: str) -> tuple[bytes, bytes]:
    """A ``bytes.translate`` table onto ``alphabet`` and the bytes to drop: only the largest
    multiple of the alphabet's size below 256 is kept, so every character is equally likely."""
    found = _TABLES.get(alphabet)
    if found is None:
        size = len(alphabet)
        limit = 256 - 256 % size
        table = bytes(ord(alphabet[b % size]) if b < limit else 0 for b in range(256))
        found = _TABLES[alphabet] = (table, bytes(range(limit, 256)))
    return found


def random_strings(alphabet: str, length: int, count: int) -> list[str]:
    """``count`` random strings of ``length`` characters of ``alphabet``."""
    table, drop = _table(alphabet)
    need = length * count
    drawn = b""
    while len(drawn) < need:
        missing = need - len(drawn)
        drawn += secrets.token_bytes(missing + missing // 8 + 8).translate(table, drop)
    text = drawn[:need].decode("ascii")
    return [text[i : i + length] for i in range(0, need, length)]


def random_string(alphabet: str, length: int) -> str:
    return random_strings(alphabet, length, 1)[0]


def ticket_secret() -> str:
    return random_string(SECRET_ALPHABET, SECRET_LENGTH)


def ticket_secrets(n: int) -> list[str]:
    return random_strings(SECRET_ALPHABET, SECRET_LENGTH, n)


def web_secret() -> str:
    return random_string(WEB_ALPHABET, 32)


def web_secrets(n: int) -> list[str]:
    return random_strings(WEB_ALPHABET, 32, n)


def order_secret() -> str:
    return random_string(WEB_ALPHABET, 16)


def pseudonymization_id() -> str:
    return random_string(PSEUDO_ALPHABET, 10)


def pseudonymization_ids(n: int) -> list[str]:
    return random_strings(PSEUDO_ALPHABET, 10, n)


def order_code_candidates() -> Iterator[str]:
    """Codes to try one after another: ``TRIES_PER_LENGTH`` of each length, from
    ``CODE_LENGTH`` on (the space grows by one character when it gets crowded)."""
    length = CODE_LENGTH
    while True:
        yield from random_strings(CODE_ALPHABET, length, TRIES_PER_LENGTH)
        length += 1


_CODE_TAKEN = select(Order.id).where(
    Order.event_id == bindparam("event_id"), Order.code == bindparam("code")
)


async def new_order_code(session: AsyncSession, event_id: int) -> str:
    """A code not yet used in the event; grows by one character when the space gets crowded."""
    for code in order_code_candidates():
        taken = await session.scalar(_CODE_TAKEN, {"event_id": event_id, "code": code})
        if taken is None:
            return code
    raise AssertionError("unreachable")  # the candidates never run out


_SECRETS_TAKEN = select(OrderPosition.secret).where(
    OrderPosition.event_id == bindparam("event_id"),
    OrderPosition.secret.in_(bindparam("secrets", expanding=True)),
)


async def taken_secrets(session: AsyncSession, event_id: int, wanted: Iterable[str]) -> set[str]:
    """Which of ``wanted`` are already ticket secrets in the event."""
    values = sorted(set(wanted))
    if not values:
        return set()
    rows = await session.scalars(_SECRETS_TAKEN, {"event_id": event_id, "secrets": values})
    return set(rows)


async def new_ticket_secrets(
    session: AsyncSession, event_id: int, n: int, also_taken: Iterable[str] = ()
) -> list[str]:
    """``n`` fresh secrets, distinct from each other, from ``also_taken`` (the secrets the same
    request assigns itself) and from every secret in the event."""
    result: list[str] = []
    avoid = set(also_taken)
    while len(result) < n:
        batch = set(ticket_secrets(n - len(result))) - set(result) - avoid
        batch -= await taken_secrets(session, event_id, batch)
        result.extend(batch)
    return result
