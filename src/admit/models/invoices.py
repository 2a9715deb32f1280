"""Invoices, their lines, and the counters their numbers come from.

An invoice is written once and never changed: what it says (addresses, lines, totals) is a copy
of the order as it was when the invoice was issued. A change to the order issues a
cancellation (an invoice with ``is_cancellation`` and negated lines, ``refers`` the one it
cancels) and, where wanted, a new invoice. Only the rendering bookkeeping (``file_key``,
``render_job_id``) changes later: the PDF is drawn from the stored copy, never from the order.

Numbers come from :class:`InvoiceCounter`, one row per organizer and prefix, incremented in the
transaction that writes the invoice: the row lock serialises concurrent issuers, and a rollback
gives the number back, so a sequence has neither gaps nor duplicates.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from admit.db import TABLE_OPTIONS, Base, Money, Percent, UTCDateTime, utcnow


class InvoiceCounter(Base):
    """The last number given out for one prefix of one organizer (events sharing a prefix
    share the sequence)."""

    __tablename__ = "invoice_counters"
    __table_args__ = (UniqueConstraint("organizer_id", "prefix"), TABLE_OPTIONS)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(ForeignKey("organizers.id", ondelete="CASCADE"))
    prefix: Mapped[str] = mapped_column(String(190))
    last: Mapped[int] = mapped_column(Integer, default=0)


class Invoice(Base):
    __tablename__ = "invoices"
    __table_args__ = (
        UniqueConstraint("organizer_id", "prefix", "invoice_no"),
        Index("ix_invoices_event_number", "event_id", "full_invoice_no"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(ForeignKey("organizers.id", ondelete="CASCADE"))
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    order_id: Mapped[int] = mapped_column(ForeignKey("orders.id", ondelete="CASCADE"), index=True)
    prefix: Mapped[str] = mapped_column(String(160))
    invoice_no: Mapped[str] = mapped_column(String(40))
    full_invoice_no: Mapped[str] = mapped_column(String(200))
    is_cancellation: Mapped[bool] = mapped_column(Boolean, default=False)
    refers_id: Mapped[int | None] = mapped_column(
        ForeignKey("invoices.id", ondelete="SET NULL"), nullable=True, index=True
    )
    date: Mapped[dt.date] = mapped_column(Date)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    locale: Mapped[str] = mapped_column(String(32), default="en")
    currency: Mapped[str] = mapped_column(String(10))
    invoice_from_name: Mapped[str] = mapped_column(String(255), default="")
    invoice_from: Mapped[str] = mapped_column(Text, default="")
    invoice_from_zipcode: Mapped[str] = mapped_column(String(30), default="")
    invoice_from_city: Mapped[str] = mapped_column(String(255), default="")
    invoice_from_state: Mapped[str] = mapped_column(String(255), default="")
    invoice_from_country: Mapped[str] = mapped_column(String(2), default="")
    invoice_from_tax_id: Mapped[str] = mapped_column(String(255), default="")
    invoice_from_vat_id: Mapped[str] = mapped_column(String(255), default="")
    invoice_to: Mapped[str] = mapped_column(Text, default="")
    invoice_to_is_business: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    invoice_to_company: Mapped[str] = mapped_column(String(255), default="")
    invoice_to_name: Mapped[str] = mapped_column(String(255), default="")
    invoice_to_street: Mapped[str] = mapped_column(Text, default="")
    invoice_to_zipcode: Mapped[str] = mapped_column(String(30), default="")
    invoice_to_city: Mapped[str] = mapped_column(String(255), default="")
    invoice_to_state: Mapped[str | None] = mapped_column(String(255), nullable=True)
    invoice_to_country: Mapped[str | None] = mapped_column(String(2), nullable=True)
    invoice_to_vat_id: Mapped[str] = mapped_column(String(255), default="")
    invoice_to_beneficiary: Mapped[str] = mapped_column(Text, default="")
    custom_field: Mapped[str | None] = mapped_column(String(255), nullable=True)
    internal_reference: Mapped[str] = mapped_column(Text, default="")
    introductory_text: Mapped[str] = mapped_column(Text, default="")
    additional_text: Mapped[str] = mapped_column(Text, default="")
    payment_provider_text: Mapped[str] = mapped_column(Text, default="")
    payment_provider_stamp: Mapped[str | None] = mapped_column(String(100), nullable=True)
    footer_text: Mapped[str] = mapped_column(Text, default="")
    # The sale is reverse charged (a line with tax code AE): the invoice says so.
    reverse_charge: Mapped[bool] = mapped_column(Boolean, default=False)
    # Payment terms: the date the amount is due (None: paid already or nothing due).
    due_date: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    # The order's expiry, printed when ``invoice_include_expire_date`` was on and the order
    # pending at issue (None otherwise).
    expire_date: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    total: Mapped[Decimal] = mapped_column(Money, default=Decimal("0.00"))
    # Rendering (not part of what the invoice says): the stored PDF and the job drawing it.
    file_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    render_job_id: Mapped[int | None] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("jobs.id", ondelete="SET NULL"),
        nullable=True,
    )

    lines: Mapped[list[InvoiceLine]] = relationship(
        lazy="raise", order_by="InvoiceLine.position", passive_deletes=True
    )


class InvoiceLine(Base):
    """One line: a position or a fee as it was sold (gross, the tax in it, rate and code)."""

    __tablename__ = "invoice_lines"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    invoice_id: Mapped[int] = mapped_column(
        ForeignKey("invoices.id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(Integer)
    description: Mapped[str] = mapped_column(Text, default="")
    # Plain ids, no foreign keys: a line keeps saying what was sold after the product is gone.
    item_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    variation_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    subevent_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    fee_type: Mapped[str | None] = mapped_column(String(32), nullable=True)
    fee_internal_type: Mapped[str | None] = mapped_column(String(190), nullable=True)
    event_date_from: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    event_date_to: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    event_location: Mapped[str | None] = mapped_column(Text, nullable=True)
    attendee_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    gross_value: Mapped[Decimal] = mapped_column(Money)
    tax_value: Mapped[Decimal] = mapped_column(Money, default=Decimal("0.00"))
    tax_rate: Mapped[Decimal] = mapped_column(Percent, default=Decimal("0.00"))
    tax_name: Mapped[str] = mapped_column(String(190), default="")
    tax_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
