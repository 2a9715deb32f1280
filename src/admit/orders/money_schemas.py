"""Input schemas of order payments and refunds (output is built in serialize.py).

Unknown fields are ignored, as everywhere; amounts are money strings with two places at most.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from admit.kit.resources.schema import DateTime, Money, Pk, WriteModel

PaymentState = Literal["created", "pending", "confirmed", "canceled", "failed", "refunded"]
RefundState = Literal["created", "transit", "external", "done", "failed", "canceled"]
Provider = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.\-]+$")]
PositiveMoney = Annotated[Money, Field(gt=Decimal("0"))]
# What ``info`` may hold: it is stored as JSON and read back by providers, so kept small.
INFO_MAX_KEYS = 50


def _small_info(value: dict[str, Any]) -> dict[str, Any]:
    if len(value) > INFO_MAX_KEYS:
        raise ValueError(f"Ensure this object has no more than {INFO_MAX_KEYS} keys.")
    return value


class PaymentIn(WriteModel):
    """``POST …/payments/``: money recorded by hand (or a gift card to debit)."""

    state: PaymentState = "created"
    amount: PositiveMoney
    provider: Provider = "manual"
    payment_date: DateTime | None = None
    info: dict[str, Any] = Field(default_factory=dict)
    send_email: bool = False
    force: bool = False

    _info = field_validator("info")(_small_info)


class ConfirmIn(WriteModel):
    send_email: bool = False
    force: bool = False


class PaymentRefundIn(WriteModel):
    """``POST …/payments/{id}/refund/``: ``amount`` defaults to all that is refundable."""

    amount: PositiveMoney | None = None
    mark_canceled: bool = False


class RefundIn(WriteModel):
    """``POST …/refunds/``: a refund recorded (or, for a gift card, carried out) by hand."""

    state: RefundState = "created"
    source: Literal["admin", "external"] = "admin"
    amount: PositiveMoney
    payment: Pk | None = None
    provider: Provider = "manual"
    execution_date: DateTime | None = None
    comment: Annotated[str, Field(max_length=10000)] | None = None
    info: dict[str, Any] = Field(default_factory=dict)
    mark_canceled: bool = False
    mark_pending: bool = False

    _info = field_validator("info")(_small_info)


class ProcessIn(WriteModel):
    mark_canceled: bool = False
