"""Webhooks: where an organizer wants notifications sent, the log of every delivery, and the
fan-out's read position in each outbox.

A webhook's ``secret`` signs its deliveries and is stored as it is (the server must be able to
sign with it; it is shown to the API once, on create and rotation). After a rotation the
previous secret keeps signing alongside the new one until ``previous_secret_until``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Boolean, Column, ForeignKey, Index, Integer, String, Table, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from admit.db import TABLE_OPTIONS, Base, JSONType, UTCDateTime, utcnow
from admit.models.events import Event

webhook_limit_events = Table(
    "webhook_limit_events",
    Base.metadata,
    Column("webhook_id", ForeignKey("webhooks.id", ondelete="CASCADE"), primary_key=True),
    Column("event_id", ForeignKey("events.id", ondelete="CASCADE"), primary_key=True, index=True),
)


class Webhook(Base):
    __tablename__ = "webhooks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(
        ForeignKey("organizers.id", ondelete="CASCADE"), index=True
    )
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    target_url: Mapped[str] = mapped_column(String(1000))
    all_events: Mapped[bool] = mapped_column(Boolean, default=True)
    # Action types as the client sent them (``service.…`` or the reference's ``pretix.…``),
    # exact or ending in ``.*``; deliveries name the action in the family of the entry matched.
    action_types: Mapped[list[str]] = mapped_column(JSONType, default=list)
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    secret: Mapped[str] = mapped_column(String(64))
    previous_secret: Mapped[str | None] = mapped_column(String(64), nullable=True)
    previous_secret_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)

    # Delivery state (not part of the API). ``wake_at``: when a delivery run should start
    # (set when calls are pending, cleared when the fan-out hands the run to a job).
    wake_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True, index=True)
    # The receiver failed several times in a row: nothing is sent before this moment.
    blocked_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    failure_streak: Mapped[int] = mapped_column(Integer, default=0)
    # One delivery run per webhook at a time (calls go out in order): its holder and lease.
    lock_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lock_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    limit_events: Mapped[list[Event]] = relationship(
        secondary=webhook_limit_events, lazy="raise", order_by=Event.slug, passive_deletes=True
    )


class WebhookCall(Base):
    """One notification for one webhook: what is sent, and how the last attempt went.

    ``status``: ``pending`` (to be sent at ``next_retry``), ``delivered`` (a 2xx answer),
    ``failed`` (no 2xx within the retry window, a 410 answer, or the webhook refused it).
    ``source``/``source_id`` name the outbox row (``notification`` or ``checkin``); the
    payload's ``notification_id`` is ``source_id``."""

    __tablename__ = "webhook_calls"
    __table_args__ = (
        # The delivery run's question: the next pending calls of a webhook, in order.
        Index("ix_webhook_calls_webhook_status_id", "webhook_id", "status", "id"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    webhook_id: Mapped[int] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(String(16))
    source_id: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(String(190))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    response_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # The first KB of the receiver's answer (or why there was none).
    response_body: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    duration_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    next_retry: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_attempt: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # The delivery run sending this call (marked before it is sent, cleared when its answer is
    # recorded); a mark of a run that stopped means the call may have been sent already.
    claimed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # Set on a copy made by ``redeliver``: the call it repeats.
    redelivery_of: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)


class WebhookCursor(Base):
    """How far the fan-out has read one outbox (``notifications``, ``checkins``).

    ``position`` is the highest id handed on; ``gaps`` maps lower ids not seen yet (a
    transaction that took the id had not committed) to when they were first missed: they are
    looked for again until a grace period ends, so a late commit is not skipped."""

    __tablename__ = "webhook_cursors"

    source: Mapped[str] = mapped_column(String(32), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, default=0)
    gaps: Mapped[dict[str, float]] = mapped_column(JSONType, default=dict)
    updated: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
