from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import Base, JSONType, UTCDateTime, utcnow


class OutgoingMail(Base):
    """The mail outbox: every message is stored first, then delivered by the mail sender."""

    __tablename__ = "outgoing_mails"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int | None] = mapped_column(
        ForeignKey("organizers.id", ondelete="CASCADE"), nullable=True, index=True
    )
    event_id: Mapped[int | None] = mapped_column(
        ForeignKey("events.id", ondelete="CASCADE"), nullable=True, index=True
    )
    to: Mapped[list[str]] = mapped_column(JSONType)
    subject: Mapped[str] = mapped_column(String(998))
    body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default="queued", index=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    sent: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
