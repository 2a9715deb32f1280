"""Ticket layouts, which layout a product uses per sales channel, and rendered ticket files.

A layout is a list of dynamic elements drawn over an optional background PDF (an uploaded
file). ``ticket_layout_items`` says which layout a product's tickets use in a sales channel
(one per product and channel); products without an assignment use the event's default layout.
``ticket_files`` caches rendered tickets: a download renders once per content fingerprint
and serves the job's file until the position (or its layout) changes.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import Base, JSONType, UTCDateTime, utcnow


class TicketLayout(Base):
    __tablename__ = "ticket_layouts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(190))
    default: Mapped[bool] = mapped_column(Boolean, default=False)
    layout: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    # The background PDF; shared (not copied) by the layouts of a cloned event.
    background_id: Mapped[int | None] = mapped_column(
        ForeignKey("uploaded_files.id", ondelete="SET NULL"), nullable=True, index=True
    )


class TicketLayoutItem(Base):
    __tablename__ = "ticket_layout_items"
    __table_args__ = (UniqueConstraint("item_id", "sales_channel"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    layout_id: Mapped[int] = mapped_column(
        ForeignKey("ticket_layouts.id", ondelete="CASCADE"), index=True
    )
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    sales_channel: Mapped[str] = mapped_column(String(32), default="web")


class TicketFile(Base):
    """A rendered ticket PDF: the render job of one order or position for one fingerprint
    of everything printed on it. Deleted with its job when the job's result expires."""

    __tablename__ = "ticket_files"
    __table_args__ = (UniqueConstraint("target", "fingerprint"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    # "order:<id>" or "position:<id>".
    target: Mapped[str] = mapped_column(String(40))
    fingerprint: Mapped[str] = mapped_column(String(64))
    job_id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("jobs.id", ondelete="CASCADE"),
        index=True,
    )
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
