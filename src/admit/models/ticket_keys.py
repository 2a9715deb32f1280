"""Signed ticket secrets: each event's signing keys and the secrets blocked for scanning.

An event whose ``ticket_secret_generator`` is ``pretix_sig1`` signs its tickets' secrets with an
Ed25519 key of its own (a row of ``event_ticket_keys``, made on first use). The private half
stays in this table: no serializer, export or log line reads it; the public half is published
in the event's ``valid_keys`` so that scanners verify tickets without the network.

``blocked_ticket_secrets`` is the list a scanner syncs to refuse blocked tickets offline: one row
per secret, kept with ``blocked`` false when the block is lifted, so a device that synced the
block (``updated_since``) also learns that it ended.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import TABLE_OPTIONS, Base, UTCDateTime, utcnow


class EventTicketKey(Base):
    """One signing key pair of an event for one scheme (``pretix_sig1``)."""

    __tablename__ = "event_ticket_keys"
    __table_args__ = (
        UniqueConstraint("event_id", "scheme", name="uq_event_ticket_keys_event_scheme"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    scheme: Mapped[str] = mapped_column(String(32))
    # base64 of the PEM SubjectPublicKeyInfo, exactly as ``valid_keys`` publishes it
    public_key: Mapped[str] = mapped_column(Text)
    # PEM PKCS#8 of the private key: never rendered anywhere
    private_key: Mapped[str] = mapped_column(Text)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class BlockedSecret(Base):
    """A ticket secret a scanner must refuse (``blocked``), or no longer (a tombstone)."""

    __tablename__ = "blocked_ticket_secrets"
    __table_args__ = (
        UniqueConstraint("event_id", "secret", name="uq_blocked_ticket_secrets_event_secret"),
        Index("ix_blocked_ticket_secrets_event_updated", "event_id", "updated"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    position_id: Mapped[int | None] = mapped_column(
        ForeignKey("order_positions.id", ondelete="SET NULL"), nullable=True, index=True
    )
    secret: Mapped[str] = mapped_column(String(255))
    blocked: Mapped[bool] = mapped_column(Boolean, default=True)
    updated: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
