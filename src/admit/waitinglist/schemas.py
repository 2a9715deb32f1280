"""Waiting list schemas: entries (field rules only; references live in ``service.py``) and the
per-event waiting list settings (an Admit extension)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from admit.kit.resources.schema import Phone, Pk, ReadModel, WriteModel, email_address

MAX_VOUCHER_HOURS = 24 * 365


def _int_input(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("A valid integer is required.")
    return value


NamePart = Annotated[str, Field(max_length=255)]


class WaitingListEntryIn(WriteModel):
    name: Annotated[str, Field(max_length=255)] | None = None
    name_parts: dict[str, NamePart] | None = None
    email: Annotated[str, AfterValidator(email_address)]
    phone: Phone = None
    item: Pk
    variation: Pk | None = None
    locale: Annotated[str, Field(min_length=1, max_length=32)] = "en"
    subevent: Pk | None = None
    # Higher first when vouchers are handed out (the reference's field; a 32-bit integer).
    priority: Annotated[int, BeforeValidator(_int_input), Field(ge=-(2**31), le=2**31 - 1)] = 0

    @model_validator(mode="after")
    def _one_name(self) -> WaitingListEntryIn:
        if self.name and self.name_parts:
            raise ValueError("Do not specify name if you specified name_parts.")
        return self

    def parts(self) -> dict[str, str]:
        if self.name_parts:
            return dict(self.name_parts)
        if self.name:
            return {"_legacy": self.name}
        return {}


class WaitingListEntryOut(ReadModel):
    id: int
    created: dt.datetime
    name: str | None
    name_parts: dict[str, str] | None
    email: str
    phone: str | None
    voucher: int | None
    item: int
    variation: int | None
    locale: str
    subevent: int | None
    priority: int


class WaitingListSettingsIn(WriteModel):
    # Send vouchers automatically (periodic job) as soon as quota frees up.
    auto_assign: bool = False
    # How long a voucher sent from the waiting list stays valid.
    voucher_hours: Annotated[
        int, BeforeValidator(_int_input), Field(ge=1, le=MAX_VOUCHER_HOURS)
    ] = 48


class WaitingListSettingsOut(ReadModel):
    auto_assign: bool
    voucher_hours: int
