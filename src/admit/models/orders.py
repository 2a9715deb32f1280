"""Orders, their positions (tickets), fees, payments and answers; API-created cart positions."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Date,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from admit.db import TABLE_OPTIONS, Base, JSONType, Money, Percent, UTCDateTime, utcnow
from admit.models.questions import QuestionOption

answer_options = Table(
    "answer_options",
    Base.metadata,
    Column("answer_id", ForeignKey("answers.id", ondelete="CASCADE"), primary_key=True),
    Column("option_id", ForeignKey("question_options.id", ondelete="CASCADE"), primary_key=True),
)


class Order(Base):
    __tablename__ = "orders"
    __table_args__ = (
        UniqueConstraint("event_id", "code"),
        # Status filters; with the id, counts of an event's orders and a check-in list's
        # count (its positions joined with their orders' status) read the index alone.
        Index("ix_orders_event_status_valid", "event_id", "status", "valid_if_pending", "id"),
        # Lists page in the reference's default order (datetime): the page is found by
        # walking the index, not by sorting every order of the event.
        Index("ix_orders_event_datetime", "event_id", "datetime", "id"),
        # ``modified_since`` polling, and the kept pages' probe for orders changed since.
        Index("ix_orders_event_last_modified", "event_id", "last_modified"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    code: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(3), default="n")
    testmode: Mapped[bool] = mapped_column(Boolean, default=False)
    secret: Mapped[str] = mapped_column(String(32))
    email: Mapped[str | None] = mapped_column(String(254), nullable=True)
    phone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    locale: Mapped[str] = mapped_column(String(32), default="en")
    datetime: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    total: Mapped[Decimal] = mapped_column(Money, default=Decimal("0.00"))
    sales_channel: Mapped[str] = mapped_column(String(32), default="web")
    comment: Mapped[str] = mapped_column(Text, default="")
    checkin_attention: Mapped[bool] = mapped_column(Boolean, default=False)
    checkin_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    require_approval: Mapped[bool] = mapped_column(Boolean, default=False)
    valid_if_pending: Mapped[bool] = mapped_column(Boolean, default=False)
    invoice_address: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    meta_info: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    cancellation_date: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    customer_id: Mapped[int | None] = mapped_column(
        ForeignKey("customers.id", ondelete="SET NULL"), nullable=True, index=True
    )
    # Free data of API clients (written on create and PATCH) and of plugins (read-only).
    api_meta: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    plugin_data: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    custom_followup_at: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    tax_rounding_mode: Mapped[str] = mapped_column(String(100), default="line")
    last_modified: Mapped[dt.datetime] = mapped_column(
        UTCDateTime(), default=utcnow, onupdate=utcnow
    )

    positions: Mapped[list[OrderPosition]] = relationship(
        lazy="raise", order_by="OrderPosition.positionid", passive_deletes=True
    )
    fees: Mapped[list[OrderFee]] = relationship(
        lazy="raise", order_by="OrderFee.id", passive_deletes=True
    )
    payments: Mapped[list[OrderPayment]] = relationship(
        lazy="raise", order_by="OrderPayment.local_id", passive_deletes=True
    )
    refunds: Mapped[list[OrderRefund]] = relationship(
        lazy="raise", order_by="OrderRefund.local_id", passive_deletes=True
    )


class OrderPosition(Base):
    __tablename__ = "order_positions"
    __table_args__ = (
        UniqueConstraint("event_id", "secret"),
        Index("ix_order_positions_item_variation", "item_id", "variation_id"),
        # Check-in list pages (default order: attendee name) walk it.
        Index(
            "ix_order_positions_event_name",
            "event_id",
            "attendee_name_cached",
            "positionid",
            "id",
            postgresql_where=text("canceled IS false"),
            sqlite_where=text("canceled IS 0"),
        ),
        # The count of an event's live positions reads this narrow index alone (the wide one
        # above costs the planner more than the table: 6.7 ms against 2.1 ms for 45,000
        # positions), and a check-in list's count joins it with the orders by its order ids.
        Index(
            "ix_order_positions_event_live",
            "event_id",
            "order_id",
            postgresql_where=text("canceled IS false"),
            sqlite_where=text("canceled IS 0"),
        ),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    order_id: Mapped[int] = mapped_column(ForeignKey("orders.id", ondelete="CASCADE"), index=True)
    # Denormalised from the order: secrets are unique per event and looked up per event.
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    positionid: Mapped[int] = mapped_column(Integer)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id"))
    variation_id: Mapped[int | None] = mapped_column(
        ForeignKey("item_variations.id"), nullable=True
    )
    subevent_id: Mapped[int | None] = mapped_column(
        ForeignKey("subevents.id"), nullable=True, index=True
    )
    price: Mapped[Decimal] = mapped_column(Money)
    tax_rate: Mapped[Decimal] = mapped_column(Percent, default=Decimal("0.00"))
    tax_value: Mapped[Decimal] = mapped_column(Money, default=Decimal("0.00"))
    tax_rule_id: Mapped[int | None] = mapped_column(ForeignKey("tax_rules.id"), nullable=True)
    tax_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    attendee_name_parts: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    attendee_name_cached: Mapped[str | None] = mapped_column(String(255), nullable=True)
    attendee_email: Mapped[str | None] = mapped_column(String(254), nullable=True)
    company: Mapped[str | None] = mapped_column(String(255), nullable=True)
    street: Mapped[str | None] = mapped_column(Text, nullable=True)
    zipcode: Mapped[str | None] = mapped_column(String(30), nullable=True)
    city: Mapped[str | None] = mapped_column(String(255), nullable=True)
    country: Mapped[str | None] = mapped_column(String(2), nullable=True)
    state: Mapped[str | None] = mapped_column(String(255), nullable=True)
    secret: Mapped[str] = mapped_column(String(255))
    web_secret: Mapped[str] = mapped_column(String(32))
    pseudonymization_id: Mapped[str] = mapped_column(String(16))
    addon_to_id: Mapped[int | None] = mapped_column(
        ForeignKey("order_positions.id", ondelete="CASCADE"), nullable=True, index=True
    )
    is_bundled: Mapped[bool] = mapped_column(Boolean, default=False)
    voucher_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    voucher_budget_use: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    seat_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    canceled: Mapped[bool] = mapped_column(Boolean, default=False)
    valid_from: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    valid_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    blocked: Mapped[list[str] | None] = mapped_column(JSONType, nullable=True)
    discount_id: Mapped[int | None] = mapped_column(
        ForeignKey("discounts.id", ondelete="SET NULL"), nullable=True
    )
    plugin_data: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    # Set by the first print log: renderers look print logs up only for positions that have any.
    has_print_logs: Mapped[bool] = mapped_column(Boolean, default=False)
    # The customer's membership this ticket was sold against (items with require_membership).
    used_membership_id: Mapped[int | None] = mapped_column(
        ForeignKey("memberships.id", ondelete="SET NULL"), nullable=True, index=True
    )

    answers: Mapped[list[Answer]] = relationship(
        lazy="raise",
        order_by="Answer.id",
        foreign_keys="Answer.orderposition_id",
        passive_deletes=True,
    )


class OrderFee(Base):
    __tablename__ = "order_fees"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    order_id: Mapped[int] = mapped_column(ForeignKey("orders.id", ondelete="CASCADE"), index=True)
    fee_type: Mapped[str] = mapped_column(String(32))
    value: Mapped[Decimal] = mapped_column(Money)
    description: Mapped[str] = mapped_column(String(190), default="")
    internal_type: Mapped[str] = mapped_column(String(190), default="")
    tax_rate: Mapped[Decimal] = mapped_column(Percent, default=Decimal("0.00"))
    tax_value: Mapped[Decimal] = mapped_column(Money, default=Decimal("0.00"))
    tax_rule_id: Mapped[int | None] = mapped_column(ForeignKey("tax_rules.id"), nullable=True)
    tax_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    canceled: Mapped[bool] = mapped_column(Boolean, default=False)


class OrderPayment(Base):
    __tablename__ = "order_payments"
    __table_args__ = (UniqueConstraint("order_id", "local_id"), TABLE_OPTIONS)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    order_id: Mapped[int] = mapped_column(ForeignKey("orders.id", ondelete="CASCADE"), index=True)
    local_id: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16), default="created")
    amount: Mapped[Decimal] = mapped_column(Money)
    provider: Mapped[str] = mapped_column(String(64))
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    payment_date: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    info: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)


class OrderRefund(Base):
    """Money going back to the buyer: ``state`` created|transit|done|failed|canceled,
    ``source`` admin|buyer|external; ``payment_id`` the payment it returns, if any."""

    __tablename__ = "order_refunds"
    __table_args__ = (UniqueConstraint("order_id", "local_id"), TABLE_OPTIONS)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    order_id: Mapped[int] = mapped_column(ForeignKey("orders.id", ondelete="CASCADE"), index=True)
    local_id: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16), default="created")
    source: Mapped[str] = mapped_column(String(16), default="admin")
    amount: Mapped[Decimal] = mapped_column(Money)
    payment_id: Mapped[int | None] = mapped_column(
        ForeignKey("order_payments.id", ondelete="SET NULL"), nullable=True
    )
    provider: Mapped[str] = mapped_column(String(64), default="manual")
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    execution_date: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    info: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)


class CartPosition(Base):
    __tablename__ = "cart_positions"
    __table_args__ = (
        Index("ix_cart_positions_event_cart", "event_id", "cart_id"),
        Index("ix_cart_positions_item_expires", "item_id", "expires"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    cart_id: Mapped[str] = mapped_column(String(255))
    datetime: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires: Mapped[dt.datetime] = mapped_column(UTCDateTime(), index=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    variation_id: Mapped[int | None] = mapped_column(
        ForeignKey("item_variations.id", ondelete="CASCADE"), nullable=True
    )
    subevent_id: Mapped[int | None] = mapped_column(
        ForeignKey("subevents.id", ondelete="CASCADE"), nullable=True, index=True
    )
    price: Mapped[Decimal] = mapped_column(Money)
    attendee_name_parts: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    attendee_email: Mapped[str | None] = mapped_column(String(254), nullable=True)
    voucher_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    addon_to_id: Mapped[int | None] = mapped_column(
        ForeignKey("cart_positions.id", ondelete="CASCADE"), nullable=True, index=True
    )
    is_bundled: Mapped[bool] = mapped_column(Boolean, default=False)
    seat_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    sales_channel: Mapped[str] = mapped_column(String(32), default="web")
    includes_tax: Mapped[bool] = mapped_column(Boolean, default=True)

    answers: Mapped[list[Answer]] = relationship(
        lazy="raise",
        order_by="Answer.id",
        foreign_keys="Answer.cartposition_id",
        passive_deletes=True,
    )


class Answer(Base):
    """An answer to a question, for an order position or a cart position."""

    __tablename__ = "answers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    orderposition_id: Mapped[int | None] = mapped_column(
        ForeignKey("order_positions.id", ondelete="CASCADE"), nullable=True, index=True
    )
    cartposition_id: Mapped[int | None] = mapped_column(
        ForeignKey("cart_positions.id", ondelete="CASCADE"), nullable=True, index=True
    )
    question_id: Mapped[int] = mapped_column(
        ForeignKey("questions.id", ondelete="CASCADE"), index=True
    )
    answer: Mapped[str] = mapped_column(Text)
    file: Mapped[str | None] = mapped_column(String(255), nullable=True)

    options: Mapped[list[QuestionOption]] = relationship(
        secondary=answer_options, lazy="raise", passive_deletes=True, order_by=QuestionOption.id
    )


class PrintLog(Base):
    """One printout of a ticket, badge or certificate, as reported by a client."""

    __tablename__ = "print_logs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    position_id: Mapped[int] = mapped_column(
        ForeignKey("order_positions.id", ondelete="CASCADE"), index=True
    )
    datetime: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    source: Mapped[str] = mapped_column(String(255))
    type: Mapped[str] = mapped_column(String(255))
    info: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    device_id: Mapped[int | None] = mapped_column(
        ForeignKey("devices.id", ondelete="SET NULL"), nullable=True
    )
