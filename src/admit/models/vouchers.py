"""Vouchers: codes that unlock products, change their price and may reserve quota.

``redeemed`` and ``budget_used`` are counters kept in step with the order positions that use
the voucher (live orders, positions not canceled): sales increment them under the voucher's row
lock and order state changes recount them, so reading a voucher, filtering by ``redeemed`` or
counting the quota that blocking vouchers hold never sums the order history.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, func
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import TABLE_OPTIONS, Base, Money, UTCDateTime, utcnow

PRICE_MODES = ("none", "set", "subtract", "percent")


class Voucher(Base):
    __tablename__ = "vouchers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    code: Mapped[str] = mapped_column(String(255))
    max_usages: Mapped[int] = mapped_column(Integer, default=1)
    redeemed: Mapped[int] = mapped_column(Integer, default=0)
    min_usages: Mapped[int] = mapped_column(Integer, default=1)
    valid_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    block_quota: Mapped[bool] = mapped_column(Boolean, default=False)
    allow_ignore_quota: Mapped[bool] = mapped_column(Boolean, default=False)
    price_mode: Mapped[str] = mapped_column(String(16), default="none")
    value: Mapped[Decimal] = mapped_column(Money, default=Decimal("0.00"))
    item_id: Mapped[int | None] = mapped_column(
        ForeignKey("items.id", ondelete="CASCADE"), nullable=True, index=True
    )
    variation_id: Mapped[int | None] = mapped_column(
        ForeignKey("item_variations.id", ondelete="CASCADE"), nullable=True, index=True
    )
    # A quota-restricted voucher must not outlive its quota as an unrestricted one: CASCADE.
    quota_id: Mapped[int | None] = mapped_column(
        ForeignKey("quotas.id", ondelete="CASCADE"), nullable=True, index=True
    )
    subevent_id: Mapped[int | None] = mapped_column(
        ForeignKey("subevents.id", ondelete="CASCADE"), nullable=True, index=True
    )
    # The seat (``seats.id``; the API names it by its guid). No foreign key: the seating
    # tables come from their own migration branch.
    seat_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    tag: Mapped[str] = mapped_column(String(255), default="")
    comment: Mapped[str] = mapped_column(Text, default="")
    show_hidden_items: Mapped[bool] = mapped_column(Boolean, default=True)
    all_addons_included: Mapped[bool] = mapped_column(Boolean, default=False)
    all_bundles_included: Mapped[bool] = mapped_column(Boolean, default=False)
    budget: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    budget_used: Mapped[Decimal] = mapped_column(Money, default=Decimal("0.00"))
    # Moved by a trigger on every insert and update, redemptions included
    # (``models/row_stamps.py``); NULL for rows older than it (and SQLite's raw inserts).
    last_modified: Mapped[dt.datetime | None] = mapped_column(
        UTCDateTime(), nullable=True, default=utcnow
    )

    __table_args__ = (
        # Codes are unique per event whatever their case (codes are ASCII, see the schema).
        Index("uq_vouchers_event_code_lower", "event_id", func.lower(code), unique=True),
        # The blocking-voucher count that every quota check runs starts here.
        Index("ix_vouchers_event_block_quota", "event_id", "block_quota"),
        Index("ix_vouchers_event_tag", "event_id", "tag"),
        # The kept voucher pages' probe for vouchers changed since a bound.
        Index("ix_vouchers_event_last_modified", "event_id", "last_modified"),
        TABLE_OPTIONS,
    )
