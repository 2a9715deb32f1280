"""The waiting list: people waiting for a sold-out product, and per-event waiting list settings.

An entry is "waiting" while ``voucher_id`` is null; sending it a voucher (by hand or by the
periodic assignment) sets it, after which the entry is frozen.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import TABLE_OPTIONS, Base, JSONType, UTCDateTime, utcnow

DEFAULT_VOUCHER_HOURS = 48


class WaitingListEntry(Base):
    __tablename__ = "waiting_list_entries"
    __table_args__ = (
        # Filters and the per-quota waiting count go by event and product; covering for the
        # count (index-only: who waits for which product on which date, voucher or not).
        Index(
            "ix_waiting_list_entries_event_item",
            "event_id",
            "item_id",
            "variation_id",
            "subevent_id",
            "voucher_id",
        ),
        Index("ix_waiting_list_entries_event_created", "event_id", "created"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    subevent_id: Mapped[int | None] = mapped_column(
        ForeignKey("subevents.id", ondelete="CASCADE"), nullable=True, index=True
    )
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    name_parts: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    name_cached: Mapped[str | None] = mapped_column(String(255), nullable=True)
    email: Mapped[str] = mapped_column(String(254))
    phone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # Deleting a sent voucher puts nobody back in line, but keeps the entry (and its history).
    voucher_id: Mapped[int | None] = mapped_column(
        ForeignKey("vouchers.id", ondelete="SET NULL"), nullable=True, unique=True
    )
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    variation_id: Mapped[int | None] = mapped_column(
        ForeignKey("item_variations.id", ondelete="CASCADE"), nullable=True, index=True
    )
    locale: Mapped[str] = mapped_column(String(32), default="en")
    # Higher first when vouchers are handed out (the reference's ``priority``), then oldest.
    priority: Mapped[int] = mapped_column(Integer, default=0)


class WaitingListSettings(Base):
    """Per-event waiting list behaviour (Admit has no general event settings store).

    ``auto_assign`` (off by default) lets the periodic job send vouchers as quota frees up;
    ``voucher_hours`` is how long a sent voucher stays valid.
    """

    __tablename__ = "waiting_list_settings"

    event_id: Mapped[int] = mapped_column(
        ForeignKey("events.id", ondelete="CASCADE"), primary_key=True
    )
    auto_assign: Mapped[bool] = mapped_column(Boolean, default=False)
    voucher_hours: Mapped[int] = mapped_column(Integer, default=DEFAULT_VOUCHER_HOURS)
