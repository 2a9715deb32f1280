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
