"""Scheduled exports: an exporter run on a recurrence rule, its file mailed to the owner.

Event-level exports have ``event_id``; organizer-level ones have none and a ``timezone``.
``schedule_next_run`` is when the scheduler runs it next; ``error_counter`` counts consecutive
failures (5 stop it; a change resets it). ``job_id`` is the run in progress, so a scheduler
never starts a second run of the same export while one is under way.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Integer, String, Text, Time
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import Base, JSONType, UTCDateTime, utcnow


class ScheduledExport(Base):
    __tablename__ = "scheduled_exports"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(
        ForeignKey("organizers.id", ondelete="CASCADE"), index=True
    )
    event_id: Mapped[int | None] = mapped_column(
        ForeignKey("events.id", ondelete="CASCADE"), nullable=True, index=True
    )
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    export_identifier: Mapped[str] = mapped_column(String(190))
    export_form_data: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    locale: Mapped[str] = mapped_column(String(32), default="en")
    mail_additional_recipients: Mapped[str] = mapped_column(Text, default="")
    mail_additional_recipients_cc: Mapped[str] = mapped_column(Text, default="")
    mail_additional_recipients_bcc: Mapped[str] = mapped_column(Text, default="")
    mail_subject: Mapped[str] = mapped_column(String(255), default="")
    mail_template: Mapped[str] = mapped_column(Text, default="")
    schedule_rrule: Mapped[str] = mapped_column(Text, default="")
    schedule_rrule_time: Mapped[dt.time] = mapped_column(Time())
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    schedule_next_run: Mapped[dt.datetime | None] = mapped_column(
        UTCDateTime(), nullable=True, index=True
    )
    error_counter: Mapped[int] = mapped_column(Integer, default=0)
    job_id: Mapped[int | None] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("jobs.id", ondelete="SET NULL"),
        nullable=True,
    )
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
