"""Which secret a new or re-issued ticket gets: the event's ``ticket_secret_generator``.

``random`` events keep the random secrets of ``orders/codes.py``. ``pretix_sig1`` events get a
signed secret certifying the ticket's product, variation, date and validity window, with a
fresh 9-character seed (so two tickets of the same kind never share a secret). Signing needs
the event's key in this process: :func:`prepare` loads (or makes) it before rows are built;
the order lane, which must not query for it, declines a sale while :func:`ready` is false.
"""

from __future__ import annotations

import datetime as dt
import string
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from admit.models import Event
from admit.orders import codes
from admit.tickets.secrets import keys, sig1

RANDOM = "random"
SIGNED = sig1.SCHEME
GENERATORS = (RANDOM, SIGNED)
_SEED_ALPHABET = string.ascii_letters + string.digits


def is_signed(event: Event) -> bool:
    return getattr(event, "ticket_secret_generator", RANDOM) == SIGNED


def ready(event: Event) -> bool:
    """Whether secrets for ``event`` can be made without a query."""
    return not is_signed(event) or keys.cached_signer(event) is not None


async def prepare(session: Any, event: Event) -> None:
    """Loads (or makes) the event's signing key, for a signed event."""
    if is_signed(event):
        await keys.ensure_async(session, event)


class Issuer:
    """Makes the secrets of one event (one batch of seeds at a time)."""

    def __init__(self, signer: Ed25519PrivateKey) -> None:
        self.signer = signer

    def issue(
        self,
        *,
        item: int,
        variation: int | None,
        subevent: int | None,
        valid_from: dt.datetime | None,
        valid_until: dt.datetime | None,
    ) -> str:
        seed = codes.random_string(_SEED_ALPHABET, sig1.SEED_LENGTH)
        data = sig1.payload(seed, item, variation, subevent, valid_from, valid_until)
        return sig1.sign(self.signer, data)

    def for_line(self, line: Any, window: tuple[Any, Any]) -> str:
        """For a new ticket: ``line`` a priced line (item, variation, subevent objects),
        ``window`` its validity."""
        return self.issue(
            item=line.item.id,
            variation=line.variation.id if line.variation else None,
            subevent=line.subevent.id if line.subevent else None,
            valid_from=window[0],
            valid_until=window[1],
        )


def issuer(event: Event) -> Issuer | None:
    """The issuer of a signed event whose key was prepared; None for a ``random`` event."""
    if not is_signed(event):
        return None
    signer = keys.cached_signer(event)
    if signer is None:
        raise RuntimeError(f"the signing key of event {event.id} was not prepared")
    return Issuer(signer)


def issuer_sync(session: Any, event: Event) -> Issuer | None:
    """:func:`issuer` from a synchronous session (flush hooks): loads the key if needed."""
    if not is_signed(event):
        return None
    return Issuer(keys.ensure(session, event))


def for_position(issuer_: Issuer, position: Any) -> str:
    """A new signed secret for what ``position`` (a row or an ORM object) holds now."""
    return issuer_.issue(
        item=position.item_id,
        variation=position.variation_id,
        subevent=position.subevent_id,
        valid_from=position.valid_from,
        valid_until=position.valid_until,
    )
