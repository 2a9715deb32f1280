"""Scheduled e-mail rules (plugin ``sendmail``) and the record of what each rule has sent.

A ``SendMailRecord`` is written in the same transaction as the mail it stands for; its unique
key (rule, order, position, subevent) makes a second mail to the same recipient impossible,
whatever the number of schedulers. ``position_id`` is 0 for a mail to the order's address and
``subevent_id`` 0 outside an event series (0, not NULL: NULLs never collide in a unique key).
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    Boolean,
    Column,
    ForeignKey,
    Integer,
    String,
    Table,
    Time,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import TABLE_OPTIONS, Base, JSONType, UTCDateTime, utcnow

sendmail_rule_items = Table(
    "sendmail_rule_items",
    Base.metadata,
    Column("rule_id", ForeignKey("sendmail_rules.id", ondelete="CASCADE"), primary_key=True),
    Column("item_id", ForeignKey("items.id", ondelete="CASCADE"), primary_key=True, index=True),
)


class SendMailRule(Base):
    """Mails the orders (or attendees) of an event at a fixed time or relative to its dates."""

    __tablename__ = "sendmail_rules"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    subject: Mapped[dict[str, str]] = mapped_column(JSONType)
    template: Mapped[dict[str, str]] = mapped_column(JSONType)
    all_products: Mapped[bool] = mapped_column(Boolean, default=True)
    restrict_to_status: Mapped[list[str]] = mapped_column(JSONType, default=list)
    checked_in_status: Mapped[str | None] = mapped_column(String(16), nullable=True)
    date_is_absolute: Mapped[bool] = mapped_column(Boolean, default=True)
    send_date: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    send_offset_days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    send_offset_time: Mapped[dt.time | None] = mapped_column(Time(), nullable=True)
    offset_to_event_end: Mapped[bool] = mapped_column(Boolean, default=False)
    offset_is_after: Mapped[bool] = mapped_column(Boolean, default=False)
    send_to: Mapped[str] = mapped_column(String(16), default="orders")
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class SendMailRecord(Base):
    """One recipient a rule has mailed (see the module docstring for the key)."""

    __tablename__ = "sendmail_records"
    __table_args__ = (
        UniqueConstraint("rule_id", "order_id", "position_id", "subevent_id"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    rule_id: Mapped[int] = mapped_column(ForeignKey("sendmail_rules.id", ondelete="CASCADE"))
    order_id: Mapped[int] = mapped_column(ForeignKey("orders.id", ondelete="CASCADE"), index=True)
    position_id: Mapped[int] = mapped_column(Integer, default=0)
    subevent_id: Mapped[int] = mapped_column(Integer, default=0)
    # outgoing_mails.id (no foreign key: the outbox is cleaned up on its own schedule)
    mail_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
