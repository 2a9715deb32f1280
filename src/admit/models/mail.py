from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import Base, JSONType, UTCDateTime, utcnow


class OutgoingMail(Base):
    """The mail outbox: every message is stored first, then delivered by a ``mail.send`` job.

    ``status``: ``queued`` (waiting, or kept because no SMTP server is configured), ``sent``,
    ``failed`` (``error`` holds the server's answer)."""

    __tablename__ = "outgoing_mails"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int | None] = mapped_column(
        ForeignKey("organizers.id", ondelete="CASCADE"), nullable=True, index=True
    )
    event_id: Mapped[int | None] = mapped_column(
        ForeignKey("events.id", ondelete="CASCADE"), nullable=True, index=True
    )
    # The order (and ticket) a mail is about, so the order's page lists the mails it was sent;
    # kept (as NULL) when a test mode order is deleted, the mail may still be on its way.
    order_id: Mapped[int | None] = mapped_column(
        ForeignKey("orders.id", ondelete="SET NULL"), nullable=True, index=True
    )
    position_id: Mapped[int | None] = mapped_column(
        ForeignKey("order_positions.id", ondelete="SET NULL"), nullable=True
    )
    to: Mapped[list[str]] = mapped_column(JSONType)
    cc: Mapped[list[str]] = mapped_column(JSONType, default=list)
    bcc: Mapped[list[str]] = mapped_column(JSONType, default=list)
    subject: Mapped[str] = mapped_column(String(998))
    body: Mapped[str] = mapped_column(Text)
    html: Mapped[str | None] = mapped_column(Text, nullable=True)
    # File store keys: [{"key", "filename", "content_type"}].
    attachments: Mapped[list[dict]] = mapped_column(JSONType, default=list)
    status: Mapped[str] = mapped_column(String(16), default="queued", index=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # Stable across retries, so a receiver can tell a repeated delivery from a new mail.
    message_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    # The newest job that delivers it.
    job_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    sent: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
