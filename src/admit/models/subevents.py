"""Dates of an event series, with per-date price overrides; organizer meta properties."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import Boolean, Float, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from admit.db import TABLE_OPTIONS, Base, JSONType, Money, UTCDateTime, utcnow


class SubEvent(Base):
    __tablename__ = "subevents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    name: Mapped[dict[str, str]] = mapped_column(JSONType)
    active: Mapped[bool] = mapped_column(Boolean, default=False)
    is_public: Mapped[bool] = mapped_column(Boolean, default=True)
    date_from: Mapped[dt.datetime] = mapped_column(UTCDateTime(), index=True)
    date_to: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    date_admission: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    presale_start: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    presale_end: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    location: Mapped[dict[str, str] | None] = mapped_column(JSONType, nullable=True)
    geo_lat: Mapped[float | None] = mapped_column(Float, nullable=True)
    geo_lon: Mapped[float | None] = mapped_column(Float, nullable=True)
    frontpage_text: Mapped[dict[str, str] | None] = mapped_column(JSONType, nullable=True)
    meta_data: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    seating_plan: Mapped[int | None] = mapped_column(Integer, nullable=True)
    seat_category_mapping: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_modified: Mapped[dt.datetime] = mapped_column(
        UTCDateTime(), default=utcnow, onupdate=utcnow
    )

    item_overrides: Mapped[list[SubEventItem]] = relationship(
        lazy="raise", cascade="all, delete-orphan", passive_deletes=True, order_by="SubEventItem.id"
    )
    variation_overrides: Mapped[list[SubEventItemVariation]] = relationship(
        lazy="raise",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="SubEventItemVariation.id",
    )


class SubEventItem(Base):
    __tablename__ = "subevent_items"
    __table_args__ = (UniqueConstraint("subevent_id", "item_id"), TABLE_OPTIONS)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    subevent_id: Mapped[int] = mapped_column(
        ForeignKey("subevents.id", ondelete="CASCADE"), index=True
    )
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    price: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    available_from: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    available_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class SubEventItemVariation(Base):
    __tablename__ = "subevent_item_variations"
    __table_args__ = (UniqueConstraint("subevent_id", "variation_id"), TABLE_OPTIONS)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    subevent_id: Mapped[int] = mapped_column(
        ForeignKey("subevents.id", ondelete="CASCADE"), index=True
    )
    variation_id: Mapped[int] = mapped_column(
        ForeignKey("item_variations.id", ondelete="CASCADE"), index=True
    )
    price: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    available_from: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    available_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class EventMetaProperty(Base):
    """An organizer-defined key for event ``meta_data``, with a default and allowed values."""

    __tablename__ = "event_meta_properties"
    __table_args__ = (UniqueConstraint("organizer_id", "name"), TABLE_OPTIONS)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(
        ForeignKey("organizers.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(50))
    default: Mapped[str] = mapped_column(String(2000), default="")
    required: Mapped[bool] = mapped_column(Boolean, default=False)
    allowed_values: Mapped[list[str] | None] = mapped_column(JSONType, nullable=True)
