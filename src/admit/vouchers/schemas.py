"""Voucher schemas: field-level input rules. References and cross-field rules that need the
event (items, quotas, code uniqueness, quota blocking) live in ``service.py``."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator

from admit.kit.resources.filtering import INT_MAX
from admit.kit.resources.schema import DateTime, LongText, Money, Pk, ReadModel, WriteModel

CODE_MIN_LENGTH = 5
CODE_MAX_LENGTH = 255
# Printable ASCII without spaces: codes are typed in by people, compared case-insensitively
# (``lower()`` folds ASCII the same way on every database) and put into URLs.
CODE_RE = re.compile(r"^[!-~]+$")
PriceMode = Literal["none", "set", "subtract", "percent"]

MIN_OVER_MAX = "The maximum number of usages may not be lower than the minimum number of usages."
PERCENT_OVER_100 = "A percentage reduction can not be larger than 100 %."


def _int_input(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("A valid integer is required.")
    return value


Usages = Annotated[int, BeforeValidator(_int_input), Field(ge=1, le=INT_MAX)]
NonNegativeMoney = Annotated[Money, Field(ge=0)]


def _null_value(value: Any) -> Any:
    # Older clients send ``"value": null`` for vouchers that do not touch the price.
    return Decimal("0.00") if value is None else value


class VoucherIn(WriteModel):
    # Omitted or null: a code is generated.
    code: str | None = None
    max_usages: Usages = 1
    min_usages: Usages = 1
    valid_until: DateTime | None = None
    block_quota: bool = False
    allow_ignore_quota: bool = False
    price_mode: PriceMode = "none"
    value: Annotated[NonNegativeMoney, BeforeValidator(_null_value)] = Decimal("0.00")
    item: Pk | None = None
    variation: Pk | None = None
    quota: Pk | None = None
    seat: Annotated[str, Field(min_length=1, max_length=190)] | None = None
    tag: Annotated[str, Field(max_length=255)] = ""
    comment: LongText = ""
    subevent: Pk | None = None
    show_hidden_items: bool = True
    all_addons_included: bool = False
    all_bundles_included: bool = False
    budget: NonNegativeMoney | None = None

    @field_validator("code")
    @classmethod
    def _code(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if not value:
            return None
        if len(value) < CODE_MIN_LENGTH:
            raise ValueError(f"Ensure this field has at least {CODE_MIN_LENGTH} characters.")
        if len(value) > CODE_MAX_LENGTH:
            raise ValueError(f"Ensure this field has no more than {CODE_MAX_LENGTH} characters.")
        if not CODE_RE.match(value):
            raise ValueError(
                "The voucher code may only contain letters, digits and ASCII punctuation, "
                "without spaces."
            )
        return value

    @field_validator("tag")
    @classmethod
    def _tag(cls, value: str) -> str:
        return value.strip()


class VoucherOut(ReadModel):
    id: int
    created: dt.datetime
    code: str
    max_usages: int
    redeemed: int
    min_usages: int
    valid_until: dt.datetime | None
    block_quota: bool
    allow_ignore_quota: bool
    price_mode: str
    value: Money
    item: int | None
    variation: int | None
    quota: int | None
    seat: str | None
    tag: str
    comment: str
    subevent: int | None
    show_hidden_items: bool
    all_addons_included: bool
    all_bundles_included: bool
    budget: Money | None
    budget_used: Money
