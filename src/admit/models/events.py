from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Boolean, Float, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import TABLE_OPTIONS, Base, JSONType, UTCDateTime, utcnow


class Event(Base):
    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("organizer_id", "slug"), TABLE_OPTIONS)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(ForeignKey("organizers.id"), index=True)
    slug: Mapped[str] = mapped_column(String(50))
    name: Mapped[dict[str, str]] = mapped_column(JSONType)
    live: Mapped[bool] = mapped_column(Boolean, default=False)
    testmode: Mapped[bool] = mapped_column(Boolean, default=False)
    currency: Mapped[str] = mapped_column(String(10), default="EUR")
    date_from: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    date_to: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    date_admission: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    is_public: Mapped[bool] = mapped_column(Boolean, default=True)
    presale_start: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    presale_end: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    location: Mapped[dict[str, str] | None] = mapped_column(JSONType, nullable=True)
    geo_lat: Mapped[float | None] = mapped_column(Float, nullable=True)
    geo_lon: Mapped[float | None] = mapped_column(Float, nullable=True)
    has_subevents: Mapped[bool] = mapped_column(Boolean, default=False)
    meta_data: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    plugins: Mapped[list[str]] = mapped_column(JSONType, default=list)
    seating_plan: Mapped[int | None] = mapped_column(Integer, nullable=True)
    seat_category_mapping: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    item_meta_properties: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    all_sales_channels: Mapped[bool] = mapped_column(Boolean, default=True)
    limit_sales_channels: Mapped[list[str]] = mapped_column(JSONType, default=list)
    # The event's settings that were set (key -> JSON value); unset keys show the default of
    # their definition (``events/settings.py``). Writing them moves the catalog stamp.
    settings: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    # How new ticket secrets are made (``random`` or the signed ``pretix_sig1``), and the
    # public keys scanners verify signed secrets with (scheme -> list of keys, published as
    # the event's ``valid_keys``; the private halves live in ``event_ticket_keys``).
    ticket_secret_generator: Mapped[str] = mapped_column(
        String(32), default="random", server_default="random"
    )
    valid_keys: Mapped[dict[str, list[str]]] = mapped_column(JSONType, default=dict)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_modified: Mapped[dt.datetime] = mapped_column(
        UTCDateTime(), default=utcnow, onupdate=utcnow
    )
    # Bumped by every write of the event's categories, items, questions, quotas, subevents
    # and tax rules: the stamp their lists answer ``If-Modified-Since`` from.
    catalog_modified: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Moved by triggers whenever one of the event's orders, check-ins or vouchers is deleted
    # (``models/deletion_stamp.py``).
    rows_deleted: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
