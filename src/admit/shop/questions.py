"""The questions a buyer is asked at checkout, per product (not the hidden ones nor those asked
at check-in): what the checkout form shows and what the headless API lists."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.kit.resources.i18n import localized
from admit.models import Event, Question, question_items


async def load(session: AsyncSession, event: Event) -> list[tuple[Question, set[int]]]:
    rows = (
        await session.scalars(
            select(Question)
            .where(
                Question.event_id == event.id,
                Question.hidden.is_(False),
                Question.ask_during_checkin.is_(False),
            )
            .options(selectinload(Question.options))
            .order_by(Question.position, Question.id)
        )
    ).all()
    if not rows:
        return []
    links = await session.execute(
        select(question_items.c.question_id, question_items.c.item_id).where(
            question_items.c.question_id.in_([q.id for q in rows])
        )
    )
    items: dict[int, set[int]] = {}
    for question_id, item_id in links.all():
        items.setdefault(question_id, set()).add(item_id)
    return [(q, items.get(q.id, set())) for q in rows]


def describe(question: Question, items: set[int], locale: str = "en") -> dict[str, Any]:
    return {
        "id": question.id,
        "question": localized(question.question, locale),
        "help_text": localized(question.help_text, locale),
        "type": question.type,
        "required": question.required,
        "items": sorted(items),
        "options": [{"id": o.id, "answer": localized(o.answer, locale)} for o in question.options],
        "dependency_question": question.dependency_question_id,
        "dependency_values": list(question.dependency_values or []),
    }


async def asked(session: AsyncSession, event: Event, locale: str = "en") -> list[dict[str, Any]]:
    return [describe(q, items, locale) for q, items in await load(session, event)]


def dependency_fields(asked: list[Question], prefix: str) -> dict[int, tuple[str, list[str]]]:
    """For the form's script: each dependent question's id mapped to the form field of the
    question it depends on and the field values that show it (a boolean's ``True`` /
    ``False``, a choice's option ids)."""
    by_id = {q.id: q for q in asked}
    found: dict[int, tuple[str, list[str]]] = {}
    for q in asked:
        parent = by_id.get(q.dependency_question_id or 0)
        if q.dependency_question_id is None:
            continue
        wanted = set(q.dependency_values or [])
        if parent is None:
            found[q.id] = ("", [])
        elif parent.type in ("C", "M"):
            values = [str(o.id) for o in parent.options if o.identifier in wanted]
            found[q.id] = (f"{prefix}{parent.id}", values)
        else:
            found[q.id] = (f"{prefix}{parent.id}", sorted(wanted))
    return found
