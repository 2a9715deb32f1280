"""Each event's Ed25519 key pair for signed secrets: made on first use, kept server-side.

The pair is a row of ``event_ticket_keys`` (one per event and scheme, so two requests making it
at once end with one: the insert does nothing on a conflict, and both read the row that won).
Its public half goes into the event's ``valid_keys`` (``{"pretix_sig1": [<base64 of the PEM
SubjectPublicKeyInfo>]}``), which scanners download. The private half is read from that row
only, into a per-process cache keyed by the event **and** the published public key, so a
worker signs with no query once it has signed for the event, and a cache entry can never sign
for another event or another database that happens to use the same event id.

Nothing here renders, logs or exports the private key; ``tests/tickets/test_signed_secrets.py``
greps every response, export and log line of a signed sale for it.
"""

from __future__ import annotations

import base64
import logging
import re
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from admit.db import utcnow
from admit.models import Event, EventTicketKey
from admit.tickets.secrets.sig1 import SCHEME


class _RedactPrivateKeys(logging.Filter):
    """Keeps private keys out of the statement logs: SQLAlchemy's (``ADMIT_SQL_ECHO``) shows
    every statement's parameters and, at debug level, the rows read; aiosqlite's debug level
    every call's arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if _PEM_PRIVATE.search(message):
            record.msg, record.args = _PEM_PRIVATE.sub("[private key]", message), None
        return True


_PEM_PRIVATE = re.compile(r"-----BEGIN PRIVATE KEY-----.*?-----END PRIVATE KEY-----", re.S)
_REDACT = _RedactPrivateKeys()
# SQLAlchemy's echo, and aiosqlite's debug lines (each call with its arguments).
for _name in ("sqlalchemy.engine.Engine", "sqlalchemy.engine", "aiosqlite"):
    logging.getLogger(_name).addFilter(_REDACT)

_MAX_CACHED = 10_000
# (event id, published public key) -> the private key that matches it
_signers: dict[tuple[int, str], Ed25519PrivateKey] = {}


def new_pair() -> tuple[str, str]:
    """(public key as ``valid_keys`` publishes it, private key as PEM PKCS#8)."""
    private = Ed25519PrivateKey.generate()
    public_pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    private_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return base64.b64encode(public_pem).decode("ascii"), private_pem.decode("ascii")


def published(event: Event) -> str | None:
    """The public key the event signs with now (the last one published)."""
    keys = (event.valid_keys or {}).get(SCHEME) or []
    return keys[-1] if keys else None


def cached_signer(event: Event) -> Ed25519PrivateKey | None:
    """The event's private key when this process has it (no query)."""
    public = published(event)
    return _signers.get((event.id, public)) if public else None


_ROW = select(EventTicketKey.public_key, EventTicketKey.private_key)


def ensure(session: Session, event: Event) -> Ed25519PrivateKey:
    """The event's private key: cached, read, or made now (and published on the event).
    Synchronous, for flush hooks; async callers use :func:`ensure_async`."""
    signer = cached_signer(event)
    if signer is not None:
        return signer
    where = (EventTicketKey.event_id == event.id, EventTicketKey.scheme == SCHEME)
    row = session.execute(_ROW.where(*where)).first()
    if row is None:
        public, private = new_pair()
        values = {
            "event_id": event.id,
            "scheme": SCHEME,
            "public_key": public,
            "private_key": private,
            "created": utcnow(),
        }
        dialect = session.get_bind().dialect.name
        insert: Any = postgresql.insert if dialect == "postgresql" else sqlite.insert
        session.execute(
            insert(EventTicketKey)
            .values(**values)
            .on_conflict_do_nothing(index_elements=["event_id", "scheme"])
        )
        row = session.execute(_ROW.where(*where)).one()
    public_key, private_pem = row
    key = serialization.load_pem_private_key(private_pem.encode("ascii"), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    if (event.valid_keys or {}).get(SCHEME) != [public_key]:
        event.valid_keys = {**(event.valid_keys or {}), SCHEME: [public_key]}
    if len(_signers) >= _MAX_CACHED:
        _signers.clear()
    _signers[(event.id, public_key)] = key
    return key


async def ensure_async(session: Any, event: Event) -> Ed25519PrivateKey:
    """:func:`ensure` from an ``AsyncSession``."""
    return await session.run_sync(lambda sync: ensure(sync, event))  # type: ignore[no-any-return]
