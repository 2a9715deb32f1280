"""Questions asked per ticket (and at check-in), with options for the choice types."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import (
    Boolean,
    Column,
    Date,
    ForeignKey,
    Integer,
    Numeric,
    String,
    Table,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from admit.db import TABLE_OPTIONS, Base, JSONType, UTCDateTime
from admit.models.catalog import Item

question_items = Table(
    "question_items",
    Base.metadata,
    Column("question_id", ForeignKey("questions.id", ondelete="CASCADE"), primary_key=True),
    Column("item_id", ForeignKey("items.id", ondelete="CASCADE"), primary_key=True, index=True),
)


class Question(Base):
    __tablename__ = "questions"
    __table_args__ = (UniqueConstraint("event_id", "identifier"), TABLE_OPTIONS)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    question: Mapped[dict[str, str]] = mapped_column(JSONType)
    help_text: Mapped[dict[str, str] | None] = mapped_column(JSONType, nullable=True)
    type: Mapped[str] = mapped_column(String(5))
    required: Mapped[bool] = mapped_column(Boolean, default=False)
    position: Mapped[int] = mapped_column(Integer, default=0)
    identifier: Mapped[str] = mapped_column(String(190))
    ask_during_checkin: Mapped[bool] = mapped_column(Boolean, default=False)
    show_during_checkin: Mapped[bool] = mapped_column(Boolean, default=False)
    hidden: Mapped[bool] = mapped_column(Boolean, default=False)
    print_on_invoice: Mapped[bool] = mapped_column(Boolean, default=False)
    dependency_question_id: Mapped[int | None] = mapped_column(
        ForeignKey("questions.id", ondelete="SET NULL"), nullable=True
    )
    dependency_values: Mapped[list[str]] = mapped_column(JSONType, default=list)
    valid_number_min: Mapped[Decimal | None] = mapped_column(Numeric(20, 6), nullable=True)
    valid_number_max: Mapped[Decimal | None] = mapped_column(Numeric(20, 6), nullable=True)
    valid_date_min: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    valid_date_max: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    valid_datetime_min: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    valid_datetime_max: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    valid_string_length_min: Mapped[int | None] = mapped_column(Integer, nullable=True)
    valid_string_length_max: Mapped[int | None] = mapped_column(Integer, nullable=True)
    valid_file_portrait: Mapped[bool] = mapped_column(Boolean, default=False)

    items: Mapped[list[Item]] = relationship(
        secondary=question_items, lazy="raise", passive_deletes=True, order_by=Item.id
    )
    options: Mapped[list[QuestionOption]] = relationship(
        lazy="raise",
        order_by="(QuestionOption.position, QuestionOption.id)",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )


class QuestionOption(Base):
    __tablename__ = "question_options"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    question_id: Mapped[int] = mapped_column(
        ForeignKey("questions.id", ondelete="CASCADE"), index=True
    )
    identifier: Mapped[str] = mapped_column(String(190))
    answer: Mapped[dict[str, str]] = mapped_column(JSONType)
    position: Mapped[int] = mapped_column(Integer, default=0)
