"""Customer accounts of an organizer, membership types, and the memberships customers hold."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from admit.db import TABLE_OPTIONS, Base, JSONType, UTCDateTime, utcnow


class Customer(Base):
    __tablename__ = "customers"
    __table_args__ = (
        UniqueConstraint("organizer_id", "identifier"),
        # The newest first (the back office's list, the API's default order), read in order.
        Index("ix_customers_organizer_joined", "organizer_id", "date_joined", "id"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(ForeignKey("organizers.id", ondelete="CASCADE"))
    # Generated, unambiguous, shown to customers and used in URLs.
    identifier: Mapped[str] = mapped_column(String(32))
    external_identifier: Mapped[str | None] = mapped_column(String(255), nullable=True)
    email: Mapped[str | None] = mapped_column(String(190), nullable=True, index=True)
    phone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    name_cached: Mapped[str | None] = mapped_column(String(255), nullable=True)
    name_parts: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    password_hash: Mapped[str | None] = mapped_column(String(255), nullable=True)
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    is_verified: Mapped[bool] = mapped_column(Boolean, default=True)
    locale: Mapped[str] = mapped_column(String(32), default="en")
    notes: Mapped[str | None] = mapped_column(Text, nullable=True)
    date_joined: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_login: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_modified: Mapped[dt.datetime] = mapped_column(
        UTCDateTime(), default=utcnow, onupdate=utcnow
    )


class MembershipType(Base):
    __tablename__ = "membership_types"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(
        ForeignKey("organizers.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[dict[str, str]] = mapped_column(JSONType)
    transferable: Mapped[bool] = mapped_column(Boolean, default=False)
    allow_parallel_usage: Mapped[bool] = mapped_column(Boolean, default=False)
    max_usages: Mapped[int | None] = mapped_column(Integer, nullable=True)


class Membership(Base):
    __tablename__ = "memberships"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Carried on the row (not only through the customer) so every query starts from the tenant.
    organizer_id: Mapped[int] = mapped_column(
        ForeignKey("organizers.id", ondelete="CASCADE"), index=True
    )
    customer_id: Mapped[int] = mapped_column(
        ForeignKey("customers.id", ondelete="CASCADE"), index=True
    )
    # A type in use cannot be deleted (the API answers 403; the database refuses as well).
    membership_type_id: Mapped[int] = mapped_column(
        ForeignKey("membership_types.id", ondelete="RESTRICT"), index=True
    )
    date_start: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    date_end: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    attendee_name_parts: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    canceled: Mapped[bool] = mapped_column(Boolean, default=False)
    testmode: Mapped[bool] = mapped_column(Boolean, default=False)
    # The ticket whose payment granted it (items with grant_membership_type): one per ticket.
    # A plain id, not a foreign key: positions already point at memberships (used_membership).
    granted_in_id: Mapped[int | None] = mapped_column(Integer, nullable=True, unique=True)

    customer: Mapped[Customer] = relationship(lazy="raise")
