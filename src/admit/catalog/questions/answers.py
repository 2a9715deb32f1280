"""Answers to questions sent with a position: checked against the question's type and options.

Kept apart from the cart code so order creation can validate its answers the same way. Errors
are keyed by the answer's fields (``question``, ``answer``, ``options``) so a client can tell
which part of which answer was wrong.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import BeforeValidator
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.catalog.taxes.countries import COUNTRIES
from admit.kit.resources.filtering import PK_MAX
from admit.kit.resources.schema import (
    PHONE_RE,
    LongText,
    Pk,
    WriteModel,
    check_date_range,
    check_datetime_range,
)
from admit.models import Answer, Question, QuestionOption, question_items


def _text_answer(value: Any) -> Any:
    """Answers arrive as text, but clients send numbers and booleans too."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int | float):
        return str(value)
    return value


class AnswerIn(WriteModel):
    question: Pk
    # Choice answers are rendered from their options, so the text may be left out there.
    answer: Annotated[LongText | None, BeforeValidator(_text_answer)] = None
    options: list[Pk] = []


CHOICE_TYPES = frozenset({"C", "M"})
TEXT_TYPES = frozenset({"S", "T"})


def invalid_pk(pk: object) -> str:
    return f'Invalid pk "{pk}" - object does not exist.'


def valid_ids(ids: Iterable[int]) -> set[int]:
    """Ids that can exist at all: out-of-range ones must not reach an INTEGER column."""
    return {i for i in ids if 1 <= i <= PK_MAX}


@dataclass
class QuestionInfo:
    question: Question
    item_ids: set[int] = field(default_factory=set)

    @property
    def options(self) -> dict[int, QuestionOption]:
        return {o.id: o for o in self.question.options}


@dataclass
class CheckedAnswer:
    question: Question
    answer: str
    options: list[QuestionOption]


async def load_questions(
    session: AsyncSession, event_id: int, ids: Iterable[int]
) -> dict[int, QuestionInfo]:
    """The event's questions among ``ids``, with their options and the items they are asked for."""
    wanted = valid_ids(ids)
    if not wanted:
        return {}
    rows = await session.execute(
        select(Question)
        .where(Question.event_id == event_id, Question.id.in_(wanted))
        .options(selectinload(Question.options))
    )
    found = {q.id: QuestionInfo(q) for q in rows.scalars()}
    if found:
        links = await session.execute(
            select(question_items.c.question_id, question_items.c.item_id).where(
                question_items.c.question_id.in_(found)
            )
        )
        for question_id, item_id in links:
            found[question_id].item_ids.add(item_id)
    return found


def _option_text(option: QuestionOption) -> str:
    answer = option.answer or {}
    return answer.get("en") or next(iter(answer.values()), option.identifier)


def _check_choice(
    info: QuestionInfo, data: AnswerIn, errors: dict[str, list[str]]
) -> list[QuestionOption]:
    question = info.question
    if not data.options:
        errors["options"] = ["You need to specify options if the question is of a choice type."]
        return []
    if question.type == "C" and len(data.options) > 1:
        errors["options"] = ["You can specify at most one option for this question."]
        return []
    if len(set(data.options)) != len(data.options):
        errors["options"] = ["An option may only be chosen once."]
        return []
    own = info.options
    chosen = []
    for pk in data.options:
        if pk not in own:
            errors["options"] = ["The specified option does not belong to this question."]
            return []
        chosen.append(own[pk])
    return chosen


def _parse_datetime(text: str) -> dt.datetime:
    if len(text) < 16 or text[10] not in "Tt ":
        raise ValueError
    value = dt.datetime.fromisoformat(text.replace("z", "Z"))
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def _check_text(question: Question, text: str) -> str:
    """The stored form of a non-choice answer; raises ValueError with the message."""
    kind = question.type
    if kind == "N":
        try:
            number = Decimal(text)
        except InvalidOperation:
            raise ValueError("A valid number is required.") from None
        if not number.is_finite():
            raise ValueError("A valid number is required.")
        low, high = question.valid_number_min, question.valid_number_max
        if low is not None and number < low:
            raise ValueError(f"Ensure this value is greater than or equal to {low.normalize():f}.")
        if high is not None and number > high:
            raise ValueError(f"Ensure this value is less than or equal to {high.normalize():f}.")
        return text
    if kind == "B":
        if text in ("true", "True", "1", "TRUE"):
            return "True"
        if text in ("false", "False", "0", "FALSE"):
            return "False"
        raise ValueError('Please specify "true" or "false" for boolean questions.')
    if kind == "D":
        try:
            if len(text) != 10:
                raise ValueError
            day = dt.date.fromisoformat(text)
        except ValueError:
            raise ValueError(
                "Date has wrong format. Use one of these formats instead: YYYY-MM-DD."
            ) from None
        check_date_range(day)
        if question.valid_date_min and day < question.valid_date_min:
            raise ValueError(f"Please enter a date no earlier than {question.valid_date_min}.")
        if question.valid_date_max and day > question.valid_date_max:
            raise ValueError(f"Please enter a date no later than {question.valid_date_max}.")
        return day.isoformat()
    if kind == "H":
        try:
            if len(text) < 5:
                raise ValueError
            return dt.time.fromisoformat(text).isoformat()
        except ValueError:
            raise ValueError(
                "Time has wrong format. Use one of these formats instead: hh:mm[:ss[.uuuuuu]]."
            ) from None
    if kind == "W":
        try:
            moment = _parse_datetime(text)
        except ValueError:
            raise ValueError(
                "Datetime has wrong format. Use one of these formats instead: "
                "YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."
            ) from None
        check_datetime_range(moment)
        low, high = question.valid_datetime_min, question.valid_datetime_max
        if low is not None and moment < low:
            raise ValueError(f"Please enter a date and time no earlier than {low.isoformat()}.")
        if high is not None and moment > high:
            raise ValueError(f"Please enter a date and time no later than {high.isoformat()}.")
        return moment.isoformat()
    if kind == "CC":
        if text.upper() not in COUNTRIES:
            raise ValueError(f'"{text}" is not a valid choice.')
        return text.upper()
    if kind == "TEL" and not PHONE_RE.match(text):
        raise ValueError("Enter a valid phone number.")
    if kind in TEXT_TYPES:
        _check_length(question, text)
    return text


def _check_length(question: Question, text: str) -> None:
    low, high = question.valid_string_length_min, question.valid_string_length_max
    if low is not None and len(text) < low:
        raise ValueError(f"Ensure this field has at least {low} characters.")
    if high is not None and len(text) > high:
        raise ValueError(f"Ensure this field has no more than {high} characters.")


def check_answer(
    data: AnswerIn, item_id: int, questions: dict[int, QuestionInfo]
) -> tuple[CheckedAnswer | None, dict[str, list[str]]]:
    """One answer: the value to store, or the errors keyed by the answer's fields."""
    errors: dict[str, list[str]] = {}
    info = questions.get(data.question)
    if info is None:
        return None, {"question": [invalid_pk(data.question)]}
    question = info.question
    if item_id not in info.item_ids:
        return None, {"question": ["This question is not asked for the specified product."]}
    if question.type == "F":
        return None, {"question": ["File upload questions are not supported by this API."]}
    if question.type in CHOICE_TYPES:
        options = _check_choice(info, data, errors)
        if errors:
            return None, errors
        return CheckedAnswer(question, ", ".join(_option_text(o) for o in options), options), {}
    if data.options:
        return None, {
            "options": ["You should not specify options if the question is not of a choice type."]
        }
    text = (data.answer or "").strip()
    if not text:
        return None, {"answer": ["This field may not be blank."]}
    try:
        return CheckedAnswer(question, _check_text(question, text), []), {}
    except ValueError as exc:
        return None, {"answer": [str(exc)]}


def check_answers(
    answers: Sequence[AnswerIn], item_id: int, questions: dict[int, QuestionInfo]
) -> tuple[list[CheckedAnswer], list[dict[str, Any]] | None]:
    """All answers of one position; the error list (one entry per answer) when any is wrong."""
    checked: list[CheckedAnswer] = []
    errors: list[dict[str, Any]] = []
    seen: dict[int, int] = defaultdict(int)
    for data in answers:
        seen[data.question] += 1
        if seen[data.question] > 1:
            errors.append({"question": ["This question has already been answered."]})
            continue
        answer, problems = check_answer(data, item_id, questions)
        errors.append(problems)
        if answer is not None:
            checked.append(answer)
    return checked, (errors if any(errors) else None)


def to_models(checked: Iterable[CheckedAnswer]) -> list[Answer]:
    """Answer rows (without their position) for checked answers."""
    return [
        Answer(question_id=c.question.id, answer=c.answer, options=list(c.options)) for c in checked
    ]
