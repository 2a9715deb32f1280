"""Devices (scanners, box-office terminals) and the gates they stand at.

A device is created by an organizer's staff, receives a one-time initialization token, and
trades it for an API token of its own at ``POST /api/v1/device/initialize``. The API token is
stored only as its SHA-256 hash, like team tokens.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Boolean, Column, ForeignKey, Integer, String, Table, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from admit.db import TABLE_OPTIONS, Base, JSONType, UTCDateTime, utcnow
from admit.models.events import Event

device_limit_events = Table(
    "device_limit_events",
    Base.metadata,
    Column("device_id", ForeignKey("devices.id", ondelete="CASCADE"), primary_key=True),
    Column("event_id", ForeignKey("events.id", ondelete="CASCADE"), primary_key=True, index=True),
)


class Gate(Base):
    """An entrance of an organizer's venues; check-ins made by a device record its gate."""

    __tablename__ = "gates"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(
        ForeignKey("organizers.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(190))
    identifier: Mapped[str] = mapped_column(String(190), default="")


class Device(Base):
    __tablename__ = "devices"
    __table_args__ = (UniqueConstraint("organizer_id", "device_id"), TABLE_OPTIONS)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(ForeignKey("organizers.id", ondelete="CASCADE"))
    # The number shown to (and used in URLs by) the organizer: 1, 2, 3, ... per organizer.
    device_id: Mapped[int] = mapped_column(Integer)
    unique_serial: Mapped[str] = mapped_column(String(32), unique=True)
    name: Mapped[str] = mapped_column(String(190))
    all_events: Mapped[bool] = mapped_column(Boolean, default=False)
    security_profile: Mapped[str] = mapped_column(String(64), default="full")
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Usable once: ``initialized`` is set in the same conditional UPDATE that hands out the
    # API token. Kept afterwards so a second attempt is told the token was used.
    initialization_token: Mapped[str] = mapped_column(String(64), unique=True)
    initialized: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    api_token_hash: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    hardware_brand: Mapped[str | None] = mapped_column(String(190), nullable=True)
    hardware_model: Mapped[str | None] = mapped_column(String(190), nullable=True)
    os_name: Mapped[str | None] = mapped_column(String(190), nullable=True)
    os_version: Mapped[str | None] = mapped_column(String(190), nullable=True)
    software_brand: Mapped[str | None] = mapped_column(String(190), nullable=True)
    software_version: Mapped[str | None] = mapped_column(String(190), nullable=True)
    rsa_pubkey: Mapped[str | None] = mapped_column(Text, nullable=True)
    info: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    gate_id: Mapped[int | None] = mapped_column(
        ForeignKey("gates.id", ondelete="SET NULL"), nullable=True, index=True
    )

    limit_events: Mapped[list[Event]] = relationship(
        secondary=device_limit_events, lazy="raise", order_by=Event.slug, passive_deletes=True
    )
    gate: Mapped[Gate | None] = relationship(lazy="raise")
