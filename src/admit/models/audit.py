"""The audit log of configuration changes (``audit/``: one row per object a flush added, changed
or deleted, written by a flush listener in the change's transaction). Field names only: values
(a webhook's secret, a device's token hash) are never kept. No foreign keys: a row outlives the
object it is about, and a row written in the flush that deletes its event or organizer must not
fail; the listener writes no row about an event or organizer that flush deletes."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import TABLE_OPTIONS, Base, JSONType, UTCDateTime, utcnow


class AuditEntry(Base):
    __tablename__ = "audit_log"
    __table_args__ = (
        Index("ix_audit_log_object", "object_type", "object_id", "created"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(Integer)
    event_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    object_type: Mapped[str] = mapped_column(String(32))
    object_id: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(String(16))  # added, changed, deleted
    fields: Mapped[list[str]] = mapped_column(JSONType, default=list)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # As ``notifications.actor_kind`` / ``actor_id``: whoever the request acted for.
    actor_kind: Mapped[str | None] = mapped_column(String(16), nullable=True)
    actor_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
