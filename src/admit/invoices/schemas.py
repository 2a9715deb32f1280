"""The invoice resource as the reference shows it (``E/invoices/``), plus Admit's additions:
``total``, ``currency``, ``reverse_charge``, ``due_date`` and the ``taxes`` per rate, which the
reference leaves to the PDF. Used for the OpenAPI document; the routes render rows straight
into these shapes (:mod:`admit.invoices.serialize`)."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel


class InvoiceLineOut(BaseModel):
    position: int
    description: str
    item: int | None
    variation: int | None
    subevent: int | None
    fee_type: str | None
    fee_internal_type: str | None
    event_date_from: dt.datetime | None
    event_date_to: dt.datetime | None
    event_location: str | None
    attendee_name: str | None
    gross_value: str
    tax_value: str
    tax_rate: str
    tax_name: str
    tax_code: str | None


class TaxTotalOut(BaseModel):
    """The lines of one tax rate (and name and code) summed: what the invoice shows below the
    lines."""

    tax_rate: str
    tax_name: str
    tax_code: str | None
    net_value: str
    tax_value: str
    gross_value: str


class InvoiceOut(BaseModel):
    number: str
    event: str
    order: str
    is_cancellation: bool
    invoice_from_name: str
    invoice_from: str
    invoice_from_zipcode: str
    invoice_from_city: str
    invoice_from_state: str
    invoice_from_country: str
    invoice_from_tax_id: str
    invoice_from_vat_id: str
    invoice_to: str
    invoice_to_is_business: bool | None
    invoice_to_company: str
    invoice_to_name: str
    invoice_to_street: str
    invoice_to_zipcode: str
    invoice_to_city: str
    invoice_to_state: str | None
    invoice_to_country: str | None
    invoice_to_vat_id: str
    invoice_to_beneficiary: str
    custom_field: str | None
    internal_reference: str
    date: dt.date
    refers: str | None
    locale: str
    introductory_text: str
    additional_text: str
    payment_provider_text: str
    payment_provider_stamp: str | None
    footer_text: str
    lines: list[InvoiceLineOut]
    foreign_currency_display: str | None
    foreign_currency_rate: str | None
    foreign_currency_rate_date: dt.date | None
    # Admit's additions
    currency: str
    total: str
    reverse_charge: bool
    due_date: dt.date | None
    taxes: list[TaxTotalOut]
