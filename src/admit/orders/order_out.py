"""Orders, positions, payments and refunds as the API documents them.

The routes answer with the dicts of ``orders/serialize.py`` (rendered straight to JSON, the
fast way); these models are their documented shape only, closed (``extra="forbid"``) so the
OpenAPI conformance test notices a field the renderer adds without documenting it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from admit.kit.openapi.types import Amount, Timestamp


class Closed(BaseModel):
    """A documented response object: every field it has, none it lacks."""

    model_config = ConfigDict(extra="forbid")


class SeatRef(Closed):
    id: int
    name: str
    zone_name: str | None
    row_name: str | None
    row_label: str | None
    seat_number: str | None
    seat_label: str | None
    seat_guid: str


class PositionCheckin(Closed):
    """A successful check-in as a position lists it."""

    id: int
    list: int
    datetime: Timestamp
    type: str
    gate: int | None
    device: int | None
    device_id: int | None
    auto_checked_in: bool


class PositionAnswer(Closed):
    question: int | dict[str, Any]
    question_identifier: str | None
    answer: str
    options: list[int]
    option_identifiers: list[str]


class Download(Closed):
    output: str
    url: str


class PrintLogOut(Closed):
    id: int
    datetime: Timestamp
    source: str
    type: str
    device_id: int | None
    info: dict[str, Any]


class OrderPositionOut(Closed):
    """``item``, ``variation`` and ``subevent`` are objects where ``expand`` asked for them."""

    id: int
    order: str
    positionid: int
    item: int | dict[str, Any]
    variation: int | dict[str, Any] | None
    price: Amount
    attendee_name: str | None
    attendee_name_parts: dict[str, Any]
    attendee_email: str | None
    company: str | None
    street: str | None
    zipcode: str | None
    city: str | None
    country: str | None
    state: str | None
    voucher: int | None
    voucher_budget_use: Amount | None
    tax_rate: Amount | None
    tax_value: Amount | None
    tax_rule: int | None
    tax_code: str | None
    secret: str
    addon_to: int | None
    subevent: int | dict[str, Any] | None
    discount: int | None
    is_bundled: bool
    seat: SeatRef | None
    pseudonymization_id: str | None
    canceled: bool
    valid_from: Timestamp | None
    valid_until: Timestamp | None
    blocked: list[str] | None
    checkins: list[PositionCheckin]
    downloads: list[Download]
    plugin_data: dict[str, Any]
    print_logs: list[PrintLogOut]
    answers: list[PositionAnswer]
    # With ``pdf_data=true`` (event-level lists and details): the values a ticket shows.
    pdf_data: dict[str, Any] | None = None


class OrderFeeOut(Closed):
    id: int
    fee_type: str
    value: Amount
    description: str | None
    internal_type: str | None
    tax_rate: Amount | None
    tax_value: Amount | None
    tax_rule: int | None
    tax_code: str | None
    canceled: bool


class GiftCardUsed(Closed):
    id: int | None
    secret: str | None
    organizer: str | None


class MoneyDetails(Closed):
    """Gift card payments and refunds name the card; other providers show nothing."""

    gift_card: GiftCardUsed | None = None


class PaymentOut(Closed):
    local_id: int
    state: str
    amount: Amount
    created: Timestamp | None
    payment_date: Timestamp | None
    payment_url: str | None
    details: MoneyDetails
    provider: str | None


class RefundOut(Closed):
    local_id: int
    state: str
    source: str
    amount: Amount
    payment: int | None
    created: Timestamp | None
    execution_date: Timestamp | None
    comment: str | None
    provider: str | None
    details: MoneyDetails


class OrderOut(Closed):
    code: str
    event: str
    status: str
    testmode: bool
    secret: str
    email: str | None
    phone: str | None
    locale: str | None
    sales_channel: str | None
    datetime: Timestamp | None
    expires: Timestamp | None
    payment_date: Timestamp | None
    payment_provider: str | None
    total: Amount
    comment: str | None
    checkin_attention: bool
    checkin_text: str | None
    invoice_address: dict[str, Any] | None
    require_approval: bool
    valid_if_pending: bool
    customer: str | None
    url: str
    positions: list[OrderPositionOut]
    fees: list[OrderFeeOut]
    payments: list[PaymentOut]
    refunds: list[RefundOut]
    downloads: list[Download]
    last_modified: Timestamp | None
    cancellation_date: Timestamp | None
    api_meta: dict[str, Any]
    plugin_data: dict[str, Any]
    custom_followup_at: str | None
    tax_rounding_mode: str
