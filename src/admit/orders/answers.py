"""Answers to questions, checked per question type as the reference's API does.

The API does not enforce required questions (a client may collect answers later), but every
answer given must be to a question of the event that is asked for the position's product.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.catalog.taxes.countries import COUNTRIES
from admit.models import Answer, Question, QuestionOption
from admit.orders.schemas import AnswerIn

PHONE_RE = re.compile(r"^\+?[0-9 ()./-]{3,30}$")


@dataclass
class CleanAnswer:
    question: Question
    answer: str
    options: list[QuestionOption] = field(default_factory=list)


async def load_questions(session: AsyncSession, event_id: int) -> dict[int, Question]:
    """The event's questions with the products they are asked for and their options."""
    rows = await session.scalars(
        select(Question)
        .where(Question.event_id == event_id)
        .options(selectinload(Question.items), selectinload(Question.options))
    )
    return {q.id: q for q in rows}


def _invalid_pk(pk: int) -> str:
    return f'Invalid pk "{pk}" - object does not exist.'


def _clean_value(question: Question, data: AnswerIn) -> tuple[str, list[QuestionOption]]:
    """The stored text (and chosen options) for one answer; raises ValueError with a message."""
    kind, raw = question.type, data.answer.strip()
    if kind in ("C", "M"):
        by_id = {o.id: o for o in question.options}
        chosen = [by_id.get(pk) for pk in data.options]
        if any(o is None for o in chosen):
            bad = next(pk for pk in data.options if pk not in by_id)
            raise ValueError(_invalid_pk(bad))
        options = list(dict.fromkeys(chosen))  # type: ignore[arg-type]
        if not options:
            raise ValueError("You need to specify options if the question is of a choice type.")
        if kind == "C" and len(options) > 1:
            raise ValueError("You can specify at most one option for this question.")
        return ", ".join(
            o.answer.get("en") or next(iter(o.answer.values()), "") for o in options
        ), options  # type: ignore[union-attr]
    if data.options:
        raise ValueError("You should not specify options if the question is not of a choice type.")
    if kind == "F":
        raise ValueError("File uploads are not supported through this endpoint.")
    if kind == "N":
        try:
            number = Decimal(raw)
        except InvalidOperation:
            raise ValueError("A valid number is required.") from None
        if not number.is_finite():
            raise ValueError("A valid number is required.")
        if question.valid_number_min is not None and number < question.valid_number_min:
            raise ValueError(
                f"Ensure this value is greater than or equal to {question.valid_number_min}."
            )
        if question.valid_number_max is not None and number > question.valid_number_max:
            raise ValueError(
                f"Ensure this value is less than or equal to {question.valid_number_max}."
            )
        return str(number), []
    if kind == "B":
        if raw.lower() in ("true", "1", "yes"):
            return "True", []
        if raw.lower() in ("false", "0", "no"):
            return "False", []
        raise ValueError('Please specify "true" or "false" for boolean questions.')
    if kind == "D":
        try:
            date = dt.date.fromisoformat(raw)
        except ValueError:
            raise ValueError(
                "Date has wrong format. Use one of these formats instead: YYYY-MM-DD."
            ) from None
        if question.valid_date_min and date < question.valid_date_min:
            raise ValueError(f"Please choose a date on or after {question.valid_date_min}.")
        if question.valid_date_max and date > question.valid_date_max:
            raise ValueError(f"Please choose a date on or before {question.valid_date_max}.")
        return date.isoformat(), []
    if kind == "H":
        try:
            return dt.time.fromisoformat(raw).isoformat(), []
        except ValueError:
            raise ValueError(
                "Time has wrong format. Use one of these formats instead: hh:mm[:ss]."
            ) from None
    if kind == "W":
        try:
            moment = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(
                "Datetime has wrong format. Use one of these formats instead: "
                "YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        if question.valid_datetime_min and moment < question.valid_datetime_min:
            raise ValueError(
                "Please choose a date and time on or after "
                f"{question.valid_datetime_min.isoformat()}."
            )
        if question.valid_datetime_max and moment > question.valid_datetime_max:
            raise ValueError(
                "Please choose a date and time on or before "
                f"{question.valid_datetime_max.isoformat()}."
            )
        return moment.isoformat(), []
    if kind == "CC":
        if raw.upper() not in COUNTRIES:
            raise ValueError(f'"{raw}" is not a valid choice.')
        return raw.upper(), []
    if kind == "TEL":
        if not PHONE_RE.match(raw):
            raise ValueError("Enter a valid phone number.")
        return raw, []
    limit = question.valid_string_length_max
    if limit is not None and len(data.answer) > limit:
        raise ValueError(f"Ensure this field has no more than {limit} characters.")
    return data.answer, []


def clean_answers(
    answers: list[AnswerIn], item_id: int, questions: dict[int, Question]
) -> tuple[list[CleanAnswer], list[dict[str, Any]] | None]:
    """Checked answers, or per-answer errors (a list aligned with ``answers``)."""
    errors: list[dict[str, Any]] = []
    cleaned: list[CleanAnswer] = []
    seen: set[int] = set()
    for data in answers:
        question = questions.get(data.question)
        if question is None:
            errors.append({"question": [_invalid_pk(data.question)]})
            continue
        if item_id not in {i.id for i in question.items}:
            errors.append({"question": ["This question is not asked for this product."]})
            continue
        if question.id in seen:
            errors.append({"question": ["You can specify only one answer per question."]})
            continue
        seen.add(question.id)
        try:
            text, options = _clean_value(question, data)
        except ValueError as exc:
            key = "options" if question.type in ("C", "M") else "answer"
            errors.append({key: [str(exc)]})
            continue
        cleaned.append(CleanAnswer(question, text, options))
        errors.append({})
    return cleaned, (errors if any(errors) else None)


def build_answers(cleaned: list[CleanAnswer]) -> list[Answer]:
    return [
        Answer(question_id=c.question.id, answer=c.answer, options=list(c.options)) for c in cleaned
    ]
