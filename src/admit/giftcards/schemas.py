"""Gift card, transaction and acceptance shapes; references are resolved in service.py."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints

from admit.kit.resources.schema import DateTime, LongText, Money, ReadModel, WriteModel

CURRENCY_RE = re.compile(r"^[A-Z]{3}$")


def _check_currency(value: str) -> str:
    if not CURRENCY_RE.match(value):
        raise ValueError("Enter a valid ISO 4217 currency code (three capital letters).")
    return value


def _ticket_reference(value: Any) -> Any:
    """An order position id (number) or its secret (string), as the reference accepts."""
    if isinstance(value, bool) or not isinstance(value, int | str | None):
        raise ValueError(f"Incorrect type. Expected pk value, received {type(value).__name__}.")
    return value


def _check_secret(value: str) -> str:
    if not value.isprintable():
        raise ValueError("The secret may only contain printable characters.")
    return value


Currency = Annotated[str, AfterValidator(_check_currency)]
Secret = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=190),
    AfterValidator(_check_secret),
]
NonNegativeMoney = Annotated[Money, Field(ge=Decimal("0.00"))]
TicketReference = Annotated[
    int | Annotated[str, Field(max_length=255)] | None, BeforeValidator(_ticket_reference)
]


class GiftCardUpdate(WriteModel):
    """PUT / PATCH: everything but ``secret``, ``currency`` and ``testmode``, which stay."""

    value: NonNegativeMoney
    expires: DateTime | None = None
    conditions: LongText | None = None
    owner_ticket: TicketReference = None


class GiftCardCreate(GiftCardUpdate):
    # Generated when omitted.
    secret: Secret | None = None
    currency: Currency
    testmode: bool = False


class TransactIn(WriteModel):
    # Positive adds credit, negative takes it.
    value: Money
    text: LongText | None = None
    info: dict[str, Any] | None = None


class GiftCardOut(ReadModel):
    id: int
    secret: str
    issuance: dt.datetime
    value: Money
    currency: str
    testmode: bool
    expires: dt.datetime | None
    conditions: str | None
    # The order position's id; an object with ``expand=owner_ticket``.
    owner_ticket: int | dict[str, Any] | None
    issuer: str


class TransactionOut(ReadModel):
    id: int
    datetime: dt.datetime
    value: Money
    event: str | None
    order: str | None
    text: str | None
    info: dict[str, Any] | None
    acceptor: str | None


class AcceptanceIn(WriteModel):
    """Written by the issuer: it offers ``acceptor`` (an organizer's slug) its cards."""

    acceptor: Annotated[str, StringConstraints(min_length=1, max_length=50)]
    active: bool = True


class AcceptancePatch(WriteModel):
    """The issuer's side: whether its offer stands."""

    active: bool


class AcceptanceConsent(WriteModel):
    """The acceptor's side: whether it accepts the issuer's cards."""

    accepted: bool


class AcceptanceOut(ReadModel):
    id: int
    issuer: str
    acceptor: str
    active: bool
    accepted: bool
    created: dt.datetime
