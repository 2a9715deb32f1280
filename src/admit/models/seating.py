"""Seating plans (per organizer) and the seats generated from them per event or date.

A plan is a layout document (zones, rows, seats with a category); an event or a date that uses
a plan gets one :class:`Seat` row per seat of the layout, with the product its category maps
to. Who holds a seat is never stored on the seat: it is derived from the order positions,
cart positions (and vouchers) that point at it, so it cannot drift from them.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import TABLE_OPTIONS, Base, JSONType, UTCDateTime, utcnow

SEAT_TEXT_LENGTH = 190


class SeatingPlan(Base):
    __tablename__ = "seating_plans"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(
        ForeignKey("organizers.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(190))
    layout: Mapped[dict[str, Any]] = mapped_column(JSONType)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_modified: Mapped[dt.datetime] = mapped_column(
        UTCDateTime(), default=utcnow, onupdate=utcnow
    )


class Seat(Base):
    """One seat of the plan of an event (``subevent_id`` null) or of one date of a series."""

    __tablename__ = "seats"
    __table_args__ = (
        # Enforced by the database for dates; for single events (subevent_id NULL) seat
        # generation holds the event row lock, so a guid is never written twice either.
        UniqueConstraint("event_id", "subevent_id", "seat_guid"),
        Index("ix_seats_event_subevent_rank", "event_id", "subevent_id", "sorting_rank"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    subevent_id: Mapped[int | None] = mapped_column(
        ForeignKey("subevents.id", ondelete="CASCADE"), nullable=True, index=True
    )
    zone_name: Mapped[str] = mapped_column(String(SEAT_TEXT_LENGTH), default="")
    row_name: Mapped[str] = mapped_column(String(SEAT_TEXT_LENGTH), default="")
    row_label: Mapped[str | None] = mapped_column(String(SEAT_TEXT_LENGTH), nullable=True)
    seat_number: Mapped[str] = mapped_column(String(SEAT_TEXT_LENGTH), default="")
    seat_label: Mapped[str | None] = mapped_column(String(SEAT_TEXT_LENGTH), nullable=True)
    seat_guid: Mapped[str] = mapped_column(String(SEAT_TEXT_LENGTH))
    # The item the seat's category maps to; null when the category is not mapped (not sold).
    product_id: Mapped[int | None] = mapped_column(
        ForeignKey("items.id", ondelete="SET NULL"), nullable=True, index=True
    )
    blocked: Mapped[bool] = mapped_column(Boolean, default=False)
    # Position of the seat in the layout (zone, row, seat order), for stable listing.
    sorting_rank: Mapped[int] = mapped_column(Integer, default=0)
