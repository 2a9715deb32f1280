"""Input schemas of orders and order positions (output is built in serialize.py)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from admit.catalog.questions.answers import AnswerIn
from admit.catalog.taxes.countries import COUNTRIES
from admit.events.plugins import SALES_CHANNELS
from admit.kit.resources.schema import DateTime, LongText, Money, Pk, Price, WriteModel
from admit.orders.order_fields import ROUNDING_MODES, ApiMeta, Date

EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
FEE_TYPES = ("payment", "shipping", "service", "cancellation", "insurance", "late", "other")


def _check_email(value: str | None) -> str | None:
    if value is not None and value != "" and not EMAIL_RE.match(value):
        raise ValueError("Enter a valid email address.")
    return value or None


Email = Annotated[str | None, Field(max_length=254), AfterValidator(_check_email)]


def _check_country(value: str | None) -> str | None:
    if value and value not in COUNTRIES:
        raise ValueError(f'"{value}" is not a valid choice.')
    return value or None


Country = Annotated[str | None, AfterValidator(_check_country)]
Text255 = Annotated[str, Field(max_length=255)]


class InvoiceAddressIn(WriteModel):
    """The buyer's billing address; unknown keys are dropped, known ones checked."""

    is_business: bool = False
    company: Text255 = ""
    name: Text255 = ""
    name_parts: dict[str, Text255] = Field(default_factory=dict)
    street: Annotated[str, Field(max_length=1000)] = ""
    zipcode: Annotated[str, Field(max_length=30)] = ""
    city: Text255 = ""
    country: Country = None
    state: Text255 = ""
    vat_id: Annotated[str, Field(max_length=255)] = ""
    vat_id_validated: bool = False
    internal_reference: Annotated[str, Field(max_length=1000)] = ""
    custom_field: Text255 | None = None
    transmission_type: Annotated[str, Field(max_length=64)] = "email"
    transmission_info: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _business_needs_company(self) -> InvoiceAddressIn:
        if self.is_business and not self.company:
            raise ValueError("A company name is required for a business address.")
        return self


def _address_dict(value: InvoiceAddressIn | None) -> dict[str, Any] | None:
    return None if value is None else value.model_dump(mode="json")


InvoiceAddress = Annotated[InvoiceAddressIn | None, AfterValidator(_address_dict)]


class NameFields(WriteModel):
    attendee_name: str | None = Field(default=None, max_length=255)
    attendee_name_parts: dict[str, Annotated[str, Field(max_length=255)]] | None = None
    attendee_email: Email = None
    company: str | None = Field(default=None, max_length=255)
    street: LongText | None = None
    zipcode: str | None = Field(default=None, max_length=30)
    city: str | None = Field(default=None, max_length=255)
    country: Country = None
    state: str | None = Field(default=None, max_length=255)


class PositionIn(NameFields):
    positionid: int | None = Field(default=None, ge=1)
    item: int
    variation: int | None = None
    price: Price | None = None
    secret: str | None = Field(default=None, min_length=1, max_length=255)
    addon_to: int | None = None
    subevent: int | None = None
    answers: list[AnswerIn] = Field(default_factory=list)
    seat: Annotated[str, Field(max_length=190)] | None = None
    voucher: Annotated[str, Field(max_length=255)] | None = None
    valid_from: DateTime | None = None
    valid_until: DateTime | None = None
    requested_valid_from: DateTime | None = None  # start chosen for dynamic validity
    used_membership: Pk | None = None  # a membership of the order's customer

    @model_validator(mode="after")
    def _one_name(self) -> PositionIn:
        if self.attendee_name and self.attendee_name_parts:
            raise ValueError("Do not specify attendee_name if you specified attendee_name_parts.")
        return self


class FeeIn(WriteModel):
    fee_type: Literal[FEE_TYPES]  # type: ignore[valid-type]
    value: Money
    description: str = Field(default="", max_length=190)
    internal_type: str = Field(default="", max_length=190)
    tax_rule: int | None = None


class OrderIn(WriteModel):
    status: Literal["n", "p"] = "n"
    email: Email = None
    phone: str | None = Field(default=None, max_length=64)
    locale: str = Field(default="en", min_length=1, max_length=32)
    sales_channel: str = "web"
    testmode: bool | None = None
    comment: LongText = ""
    checkin_attention: bool = False
    checkin_text: LongText | None = None
    require_approval: bool = False
    valid_if_pending: bool = False
    payment_provider: str | None = Field(default=None, max_length=64)
    payment_date: DateTime | None = None
    expires: DateTime | None = None
    invoice_address: InvoiceAddress = None
    # the identifier of a customer of the same organizer
    customer: Annotated[str, Field(max_length=190)] | None = None
    api_meta: ApiMeta = Field(default_factory=dict)
    custom_followup_at: Date | None = None
    tax_rounding_mode: Literal[ROUNDING_MODES] | None = None  # type: ignore[valid-type]
    positions: list[PositionIn]
    fees: list[FeeIn] = Field(default_factory=list)
    force: bool = False
    send_email: bool = False
    simulate: bool = False

    @field_validator("sales_channel")
    @classmethod
    def _channel(cls, value: str) -> str:
        if value not in SALES_CHANNELS:
            raise ValueError(f'"{value}" is not a valid choice.')
        return value

    @field_validator("positions")
    @classmethod
    def _not_empty(cls, value: list[PositionIn]) -> list[PositionIn]:
        if not value:
            raise ValueError("An order cannot be empty.")
        return value


class OrderPatch(WriteModel):
    email: Email = None
    phone: str | None = Field(default=None, max_length=64)
    locale: str = Field(default="en", min_length=1, max_length=32)
    comment: LongText = ""
    checkin_attention: bool = False
    checkin_text: LongText | None = None
    invoice_address: InvoiceAddress = None
    valid_if_pending: bool = False
    expires: DateTime
    # the identifier of a customer of the same organizer
    customer: Annotated[str, Field(max_length=190)] | None = None
    api_meta: ApiMeta = Field(default_factory=dict)
    custom_followup_at: Date | None = None


class PositionPatch(NameFields):
    answers: list[AnswerIn] | None = None
    secret: str = Field(min_length=1, max_length=255)
    valid_from: DateTime | None = None
    valid_until: DateTime | None = None
    blocked: list[Annotated[str, Field(max_length=190)]] | None = None

    @model_validator(mode="after")
    def _validity(self) -> PositionPatch:
        if self.valid_from and self.valid_until and self.valid_until < self.valid_from:
            raise ValueError("valid_until must not be before valid_from.")
        return self


class CancelIn(WriteModel):
    cancellation_fee: Money | None = Field(default=None, ge=0)
    send_email: bool = False


class ExtendIn(WriteModel):
    expires: Annotated[str, Field(max_length=64)]
    force: bool = False


class MarkPaidIn(WriteModel):
    send_email: bool = False
    force: bool = False
