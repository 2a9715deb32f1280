"""Check-in: lists that say which tickets a gate admits, the scans made against them (entries,
exits, failed scans), auto check-in rules, revoked ticket secrets and the notification outbox.

Devices and gates belong to the devices package; check-ins and lists refer to them by id only
(no foreign key), so the two schemas can be migrated independently.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import TABLE_OPTIONS, Base, JSONType, UTCDateTime, utcnow

checkin_list_items = Table(
    "checkin_list_items",
    Base.metadata,
    Column("list_id", ForeignKey("checkin_lists.id", ondelete="CASCADE"), primary_key=True),
    Column("item_id", ForeignKey("items.id", ondelete="CASCADE"), primary_key=True, index=True),
)
# Gates the list is meant for (informational: devices at these gates configure themselves).
checkin_list_gates = Table(
    "checkin_list_gates",
    Base.metadata,
    Column("list_id", ForeignKey("checkin_lists.id", ondelete="CASCADE"), primary_key=True),
    Column("gate_id", Integer, primary_key=True),
)


class CheckinList(Base):
    __tablename__ = "checkin_lists"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(190))
    all_products: Mapped[bool] = mapped_column(Boolean, default=True)
    subevent_id: Mapped[int | None] = mapped_column(
        ForeignKey("subevents.id", ondelete="CASCADE"), nullable=True, index=True
    )
    include_pending: Mapped[bool] = mapped_column(Boolean, default=False)
    allow_multiple_entries: Mapped[bool] = mapped_column(Boolean, default=False)
    allow_entry_after_exit: Mapped[bool] = mapped_column(Boolean, default=True)
    # Everyone inside is checked out at this moment, then it moves on by a day.
    exit_all_at: Mapped[dt.datetime | None] = mapped_column(
        UTCDateTime(), nullable=True, index=True
    )
    addon_match: Mapped[bool] = mapped_column(Boolean, default=False)
    ignore_in_statistics: Mapped[bool] = mapped_column(Boolean, default=False)
    consider_tickets_used: Mapped[bool] = mapped_column(Boolean, default=True)
    # JsonLogic; {} means no rule.
    rules: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Checkin(Base):
    """One scan: a successful entry or exit, or a failed scan with its reason.

    ``seq`` numbers the successful check-ins of a ticket on a list (1, 2, ...); the unique
    constraint on it makes two scanners that decided on the same state collide instead of
    both admitting the ticket (see ``checkin/store.py``). Failed scans have no ``seq``.
    """

    __tablename__ = "checkins"
    __table_args__ = (
        UniqueConstraint("position_id", "list_id", "seq"),
        Index("ix_checkins_event_datetime", "event_id", "datetime"),
        Index("ix_checkins_event_created", "event_id", "created"),
        # The kept check-in pages' probe for scans written since a bound.
        Index("ix_checkins_event_last_modified", "event_id", "last_modified"),
        # Exits only: entries (the redeem hot path) never touch it.
        Index(
            "ix_checkins_event_exits",
            "event_id",
            "position_id",
            postgresql_where=text("type = 'exit'"),
            sqlite_where=text("type = 'exit'"),
        ),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    list_id: Mapped[int] = mapped_column(ForeignKey("checkin_lists.id", ondelete="CASCADE"))
    position_id: Mapped[int | None] = mapped_column(
        ForeignKey("order_positions.id", ondelete="CASCADE"), nullable=True
    )
    seq: Mapped[int | None] = mapped_column(Integer, nullable=True)
    type: Mapped[str] = mapped_column(String(8), default="entry")
    datetime: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Moved by a trigger on every insert and update (annulment, shredding;
    # ``models/row_stamps.py``); NULL for rows older than it (and SQLite's raw inserts).
    last_modified: Mapped[dt.datetime | None] = mapped_column(
        UTCDateTime(), nullable=True, default=utcnow
    )
    successful: Mapped[bool] = mapped_column(Boolean, default=True)
    error_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    error_explanation: Mapped[str | None] = mapped_column(Text, nullable=True)
    auto_checked_in: Mapped[bool] = mapped_column(Boolean, default=False)
    forced: Mapped[bool] = mapped_column(Boolean, default=False)
    nonce: Mapped[str | None] = mapped_column(String(190), nullable=True, index=True)
    # devices.id and the organizer-internal device number; gates.id (no foreign keys, see top)
    device_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    device_number: Mapped[int | None] = mapped_column(Integer, nullable=True)
    gate_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    raw_barcode: Mapped[str | None] = mapped_column(Text, nullable=True)
    raw_source_type: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # What an offline scanner read from a signed secret it refused (``failed_checkins/``):
    # ids only, as the scanner reported them.
    raw_item_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    raw_variation_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    raw_subevent_id: Mapped[int | None] = mapped_column(Integer, nullable=True)


auto_checkin_rule_items = Table(
    "auto_checkin_rule_items",
    Base.metadata,
    Column("rule_id", ForeignKey("auto_checkin_rules.id", ondelete="CASCADE"), primary_key=True),
    Column("item_id", ForeignKey("items.id", ondelete="CASCADE"), primary_key=True, index=True),
)
auto_checkin_rule_variations = Table(
    "auto_checkin_rule_variations",
    Base.metadata,
    Column("rule_id", ForeignKey("auto_checkin_rules.id", ondelete="CASCADE"), primary_key=True),
    Column(
        "variation_id",
        ForeignKey("item_variations.id", ondelete="CASCADE"),
        primary_key=True,
        index=True,
    ),
)


class AutoCheckinRule(Base):
    """Checks tickets in by themselves when their order is placed or paid (plugin
    ``autocheckin``)."""

    __tablename__ = "auto_checkin_rules"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    list_id: Mapped[int | None] = mapped_column(
        ForeignKey("checkin_lists.id", ondelete="CASCADE"), nullable=True, index=True
    )
    mode: Mapped[str] = mapped_column(String(16), default="placed")
    all_sales_channels: Mapped[bool] = mapped_column(Boolean, default=True)
    limit_sales_channels: Mapped[list[str]] = mapped_column(JSONType, default=list)
    all_products: Mapped[bool] = mapped_column(Boolean, default=True)
    all_payment_methods: Mapped[bool] = mapped_column(Boolean, default=True)
    limit_payment_methods: Mapped[list[str]] = mapped_column(JSONType, default=list)


class RevokedSecret(Base):
    """A ticket secret that was replaced: scanning it answers ``revoked`` instead of
    ``invalid`` (and a forced upload still finds the ticket)."""

    __tablename__ = "revoked_ticket_secrets"
    __table_args__ = (
        Index("ix_revoked_ticket_secrets_event_secret", "event_id", "secret"),
        # the scanners' sync: ``E/revokedsecrets/?created_since=``
        Index("ix_revoked_ticket_secrets_event_created", "event_id", "created"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    position_id: Mapped[int] = mapped_column(
        ForeignKey("order_positions.id", ondelete="CASCADE"), index=True
    )
    secret: Mapped[str] = mapped_column(String(255))
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Notification(Base):
    """Outbox of things webhooks announce (``service.event.checkin``, ...): written in the
    transaction that did them, delivered later by whoever sends webhooks."""

    __tablename__ = "notifications"
    __table_args__ = (
        Index("ix_notifications_organizer_created", "organizer_id", "created"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(ForeignKey("organizers.id", ondelete="CASCADE"))
    event_id: Mapped[int | None] = mapped_column(
        ForeignKey("events.id", ondelete="CASCADE"), nullable=True, index=True
    )
    action: Mapped[str] = mapped_column(String(190))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Who did it (``user``, ``token``, ``device``, ``oauth``, with the principal's id); none
    # for the system's own changes and the rows the order lane's SQL function writes.
    actor_kind: Mapped[str | None] = mapped_column(String(16), nullable=True)
    actor_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
