"""Answers to the event's questions as columns of a position row.

One column per question, in the questions' order (questions of several events that share an
identifier share a column); a multiple-choice question gets one column per option unless
choices are grouped. Answers are typed cells: numbers, booleans, dates and datetimes as such,
choices as their option texts in the export's language. The answers of a chunk of positions
come in one query and go straight into their cells (no object per answer: an export of
100,000 positions reads several hundred thousand answers).
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.exports.reader import Reader, among_ids
from admit.kit.resources.i18n import localized
from admit.models import Answer, Question, QuestionOption, answer_options

CHOICE_TYPES = ("C", "M")


def _number(text: str) -> Any:
    try:
        return Decimal(text)
    except InvalidOperation:
        return text


def _date(text: str) -> Any:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return text


def _moment(tz: zoneinfo.ZoneInfo) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return dt.datetime.fromisoformat(text).astimezone(tz)
        except ValueError:
            return text

    return convert


def _boolean(text: str) -> Any:
    return text == "True"


@dataclass
class QuestionSlot:
    """Where a question's answers go in a position row, and how they read."""

    column: int | None  # the question's column (None: one column per option)
    choice: bool = False
    convert: Callable[[str], Any] | None = None  # None: the text as it is
    option_columns: dict[int, int] = field(default_factory=dict)  # option id -> column
    labels: dict[int, tuple[int, str]] = field(default_factory=dict)  # id -> (rank, text)


@dataclass
class AnswerColumns:
    headers: list[str]
    slots: dict[int, QuestionSlot]  # question id -> slot
    choice_columns: list[int]  # columns that collect option texts

    def __len__(self) -> int:
        return len(self.headers)


async def load_answer_columns(
    session: AsyncSession,
    zones: dict[int, zoneinfo.ZoneInfo],
    locale: str,
    *,
    group_choices: bool,
) -> AnswerColumns:
    """The columns for the questions of the events (``zones``: event id -> time zone)."""
    questions = (
        await session.execute(
            select(
                Question.id,
                Question.event_id,
                Question.identifier,
                Question.question,
                Question.type,
            )
            .where(Question.event_id.in_(list(zones)))
            .order_by(Question.event_id, Question.position, Question.id)
        )
    ).all()
    options: dict[int, list[Any]] = {}
    if questions:
        rows = await session.execute(
            select(
                QuestionOption.id,
                QuestionOption.question_id,
                QuestionOption.identifier,
                QuestionOption.answer,
            )
            .where(QuestionOption.question_id.in_([q.id for q in questions]))
            .order_by(QuestionOption.question_id, QuestionOption.position, QuestionOption.id)
        )
        for row in rows:
            options.setdefault(row.question_id, []).append(row)
    headers: list[str] = []
    columns: dict[Any, int] = {}  # identifier or (identifier, option identifier) -> column

    def column(key: Any, header: str) -> int:
        if key not in columns:
            columns[key] = len(headers)
            headers.append(header)
        return columns[key]

    slots: dict[int, QuestionSlot] = {}
    choice_columns: set[int] = set()
    for q in questions:
        text = localized(q.question, locale) or q.identifier
        mine = options.get(q.id, [])
        labels = {
            o.id: (rank, localized(o.answer, locale) or o.identifier) for rank, o in enumerate(mine)
        }
        if q.type == "M" and not group_choices and mine:
            slot = QuestionSlot(column=None, labels=labels)
            for o in mine:
                header = f"{text} – {labels[o.id][1]}"
                slot.option_columns[o.id] = column((q.identifier, o.identifier), header)
        else:
            slot = QuestionSlot(column=column(q.identifier, text), labels=labels)
            if q.type in CHOICE_TYPES:
                slot.choice = True
                choice_columns.add(slot.column)
            elif q.type == "N":
                slot.convert = _number
            elif q.type == "B":
                slot.convert = _boolean
            elif q.type == "D":
                slot.convert = _date
            elif q.type == "W":
                slot.convert = _moment(zones[q.event_id])
        slots[q.id] = slot
    return AnswerColumns(headers, slots, sorted(choice_columns))


def answers_statement(dialect: str) -> Any:
    """Answers of a chunk of positions, one row per selected option (or one without)."""
    return (
        select(
            Answer.orderposition_id,
            Answer.question_id,
            Answer.answer,
            answer_options.c.option_id,
        )
        .select_from(Answer)
        .outerjoin(answer_options, answer_options.c.answer_id == Answer.id)
        .where(among_ids(Answer.orderposition_id, dialect))
    )


async def answer_cells(
    reader: Reader,
    statement: Any,
    columns: AnswerColumns,
    position_ids: Sequence[int],
    yes: Any = True,
) -> dict[int, list[Any]]:
    """The answer cells of a chunk of positions (positions without answers are missing)."""
    found: dict[int, list[Any]] = {}
    if not position_ids or not columns.slots:
        return found
    width = len(columns.headers)
    slots = columns.slots
    result = await reader.fetch(statement, {"ids": list(position_ids)})
    for pos_id, question_id, text, option_id in result:
        slot = slots.get(question_id)
        if slot is None:
            continue
        cells = found.get(pos_id)
        if cells is None:
            cells = found[pos_id] = [None] * width
        col = slot.column
        if col is None:
            if option_id is not None:
                col = slot.option_columns.get(option_id)
                if col is not None:
                    cells[col] = yes
        elif slot.choice:
            label = slot.labels.get(option_id) if option_id is not None else None
            if label is None:
                if cells[col] is None:
                    cells[col] = text
            elif type(cells[col]) is list:
                cells[col].append(label)
            else:
                cells[col] = [label]
        else:
            convert = slot.convert
            cells[col] = text if convert is None else convert(text)
    if columns.choice_columns:
        for cells in found.values():
            for col in columns.choice_columns:
                value = cells[col]
                if type(value) is list:
                    value.sort()
                    cells[col] = ", ".join(label for _, label in value)
    return found
