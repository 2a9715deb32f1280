"""Check-in questions: the questions of a product asked at the door (``ask_during_checkin``).

A redeem whose ticket lacks an answer to one of them answers ``incomplete`` with those
questions; the scanner asks and redeems again with ``answers`` (question id -> text; choice
answers as comma-separated option ids). Given answers are checked like answers at purchase
(``catalog/questions/answers.py``) and stored on the position whatever the scan's outcome; an
invalid one is left out, so the question stays open. A question counts as answered when the
position has an answer or the request sent one (an empty answer skips an optional question).
A question that depends on another is only asked when that one's answer selects it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.catalog.questions.answers import (
    CHOICE_TYPES,
    AnswerIn,
    QuestionInfo,
    check_answer,
    to_models,
)
from admit.models import Answer, Question, question_items


async def checkin_questions(session: AsyncSession, item_id: int) -> list[Question]:
    rows = await session.scalars(
        select(Question)
        .join(question_items, question_items.c.question_id == Question.id)
        .where(question_items.c.item_id == item_id, Question.ask_during_checkin.is_(True))
        .options(selectinload(Question.options))
        .order_by(Question.position, Question.id)
    )
    return list(rows)


def question_out(q: Question, item_ids: list[int]) -> dict[str, Any]:
    """A check-in question as the redeem answer lists it."""
    return {
        "id": q.id,
        "question": q.question,
        "type": q.type,
        "required": q.required,
        "items": item_ids,
        "position": q.position,
        "identifier": q.identifier,
        "ask_during_checkin": q.ask_during_checkin,
        "show_during_checkin": q.show_during_checkin,
        "dependency_question": q.dependency_question_id,
        "dependency_values": list(q.dependency_values or []),
        "options": [
            {"id": o.id, "identifier": o.identifier, "position": o.position, "answer": o.answer}
            for o in q.options
        ],
    }


def _parse(question: Question, text: str) -> AnswerIn | None:
    if question.type in CHOICE_TYPES:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if not parts or not all(p.isdigit() for p in parts):
            return None
        return AnswerIn(question=question.id, options=[int(p) for p in parts])
    return AnswerIn(question=question.id, answer=text)


async def save_given(
    session: AsyncSession,
    position_id: int,
    item_id: int,
    questions: list[Question],
    given: Mapping[str, str | None],
) -> set[int]:
    """Stores the valid given answers; returns the questions the request answered (including
    optional ones it skipped with an empty answer)."""
    infos = {q.id: QuestionInfo(q, {item_id}) for q in questions}
    answered: set[int] = set()
    for question in questions:
        if str(question.id) not in given:
            continue
        text = (given[str(question.id)] or "").strip()
        if not text:
            if not question.required:
                answered.add(question.id)
            continue
        parsed = _parse(question, text)
        if parsed is None:
            continue
        checked, errors = check_answer(parsed, item_id, infos)
        if checked is None or errors:
            continue
        await session.execute(
            delete(Answer).where(
                Answer.orderposition_id == position_id, Answer.question_id == question.id
            )
        )
        for answer in to_models([checked]):
            answer.orderposition_id = position_id
            session.add(answer)
        answered.add(question.id)
    await session.flush()
    return answered


def _selected(values: list[str], answer: Mapping[str, Any] | None) -> bool:
    if answer is None:
        return False
    identifiers = {o.get("identifier") for o in answer.get("options") or []}
    return bool(identifiers & set(values)) or str(answer.get("answer")) in values


def unanswered(
    questions: list[Question], stored: list[dict[str, Any]], answered_now: set[int]
) -> list[Question]:
    """The questions still to ask, given the stored answers (``lookup`` rows)."""
    by_question = {a["question"]: a for a in stored}
    missing = []
    for question in questions:
        if question.id in by_question or question.id in answered_now:
            continue
        parent = question.dependency_question_id
        if parent is not None and not _selected(
            list(question.dependency_values or []), by_question.get(parent)
        ):
            continue
        missing.append(question)
    return missing
