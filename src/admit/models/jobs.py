"""Background work: job rows (the truth about every job) and the scheduler's period claims."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import Base, JSONType, UTCDateTime, utcnow

JOB_STATUSES = ("waiting", "running", "finished", "failed")


class Job(Base):
    """One unit of background work. The row is written in the transaction that asks for the
    work; the broker only carries its id. Workers claim it with a lease that heartbeats
    extend, so a job whose worker died is found by its expired lease and run again."""

    __tablename__ = "jobs"
    __table_args__ = (
        # The sweep's two questions: which waiting rows are due, which leases ran out.
        Index("ix_jobs_status_run_after", "status", "run_after"),
        Index("ix_jobs_status_lease_until", "status", "lease_until"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    # Public, unguessable handle (status endpoint, first half of a download URL).
    uuid: Mapped[str] = mapped_column(String(32), unique=True)
    # Second half of a download URL: knowing a job's uuid alone fetches nothing.
    secret: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(64), index=True)
    organizer_id: Mapped[int | None] = mapped_column(
        ForeignKey("organizers.id", ondelete="CASCADE"), nullable=True, index=True
    )
    event_id: Mapped[int | None] = mapped_column(
        ForeignKey("events.id", ondelete="CASCADE"), nullable=True, index=True
    )
    # Who asked (a team token, device, user or OAuth grant): results go to them only.
    owner_kind: Mapped[str | None] = mapped_column(String(16), nullable=True)
    owner_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    input: Mapped[dict] = mapped_column(JSONType, default=dict)
    status: Mapped[str] = mapped_column(String(16), default="waiting")
    percentage: Mapped[int | None] = mapped_column(Integer, nullable=True)
    message: Mapped[str | None] = mapped_column(Text, nullable=True)
    result_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    result_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    result_type: Mapped[str | None] = mapped_column(String(128), nullable=True)
    result_size: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer, default=3)
    worker: Mapped[str | None] = mapped_column(String(128), nullable=True)
    lease_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # Not before this time (retries back off); the sweep hands due rows to the broker.
    run_after: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # When the id was last handed to the broker; a row not picked up long after is re-sent.
    enqueued_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    finished: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # After this the row and its result file are deleted (download 404).
    expires: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True, index=True)


class PeriodicRun(Base):
    """The scheduler's claim on one periodic task: a process runs a task for a period only by
    moving ``period`` forward in a conditional update, so every period runs once whatever the
    number of schedulers; a claim whose lease ran out is taken over."""

    __tablename__ = "periodic_runs"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    period: Mapped[int] = mapped_column(BigInteger, default=0)
    running: Mapped[bool] = mapped_column(default=False)
    owner: Mapped[str | None] = mapped_column(String(128), nullable=True)
    lease_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_started: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_finished: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    runs: Mapped[int] = mapped_column(Integer, default=0)
