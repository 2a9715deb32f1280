"""Automatic discounts applied to carts and orders in position order."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import Boolean, Column, ForeignKey, Integer, String, Table
from sqlalchemy.orm import Mapped, mapped_column, relationship

from admit.db import Base, JSONType, Money, Percent, UTCDateTime
from admit.models.catalog import Item

discount_condition_items = Table(
    "discount_condition_items",
    Base.metadata,
    Column("discount_id", ForeignKey("discounts.id", ondelete="CASCADE"), primary_key=True),
    Column("item_id", ForeignKey("items.id", ondelete="CASCADE"), primary_key=True, index=True),
)
discount_benefit_items = Table(
    "discount_benefit_items",
    Base.metadata,
    Column("discount_id", ForeignKey("discounts.id", ondelete="CASCADE"), primary_key=True),
    Column("item_id", ForeignKey("items.id", ondelete="CASCADE"), primary_key=True, index=True),
)


class Discount(Base):
    __tablename__ = "discounts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    internal_name: Mapped[str] = mapped_column(String(190), default="")
    position: Mapped[int] = mapped_column(Integer, default=0)
    all_sales_channels: Mapped[bool] = mapped_column(Boolean, default=True)
    limit_sales_channels: Mapped[list[str]] = mapped_column(JSONType, default=list)
    available_from: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    available_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    subevent_mode: Mapped[str] = mapped_column(String(16), default="mixed")
    subevent_date_from: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    subevent_date_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    condition_all_products: Mapped[bool] = mapped_column(Boolean, default=True)
    condition_apply_to_addons: Mapped[bool] = mapped_column(Boolean, default=True)
    condition_ignore_voucher_discounted: Mapped[bool] = mapped_column(Boolean, default=False)
    condition_min_count: Mapped[int] = mapped_column(Integer, default=0)
    condition_min_value: Mapped[Decimal] = mapped_column(Money, default=Decimal("0.00"))
    benefit_discount_matching_percent: Mapped[Decimal] = mapped_column(
        Percent, default=Decimal("0.00")
    )
    benefit_only_apply_to_cheapest_n_matches: Mapped[int | None] = mapped_column(
        Integer, nullable=True
    )
    benefit_same_products: Mapped[bool] = mapped_column(Boolean, default=True)
    benefit_apply_to_addons: Mapped[bool] = mapped_column(Boolean, default=True)
    benefit_ignore_voucher_discounted: Mapped[bool] = mapped_column(Boolean, default=False)

    condition_limit_products: Mapped[list[Item]] = relationship(
        secondary=discount_condition_items, lazy="raise", passive_deletes=True, order_by=Item.id
    )
    benefit_limit_products: Mapped[list[Item]] = relationship(
        secondary=discount_benefit_items, lazy="raise", passive_deletes=True, order_by=Item.id
    )
