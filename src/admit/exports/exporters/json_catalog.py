"""What an event sells and asks, for the JSON export (:mod:`json_export`): small, bounded
by the catalog, so read and written at once."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import (
    Item,
    ItemCategory,
    ItemVariation,
    Question,
    QuestionOption,
    Quota,
    SubEvent,
    TaxRule,
    question_items,
    quota_items,
    quota_variations,
)


async def catalog(session: AsyncSession, event_id: int, places: int) -> dict[str, Any]:
    """Everything the event sells and asks, as lists ordered like the API's."""
    categories = await session.scalars(
        select(ItemCategory)
        .where(ItemCategory.event_id == event_id)
        .order_by(ItemCategory.position, ItemCategory.id)
    )
    items = (
        await session.scalars(
            select(Item).where(Item.event_id == event_id).order_by(Item.position, Item.id)
        )
    ).all()
    variations: dict[int, list[ItemVariation]] = {}
    if items:
        found = await session.scalars(
            select(ItemVariation)
            .where(ItemVariation.item_id.in_([i.id for i in items]))
            .order_by(ItemVariation.position, ItemVariation.id)
        )
        for v in found:
            variations.setdefault(v.item_id, []).append(v)
    questions = (
        await session.scalars(
            select(Question)
            .where(Question.event_id == event_id)
            .order_by(Question.position, Question.id)
        )
    ).all()
    ids = [q.id for q in questions]
    options: dict[int, list[QuestionOption]] = {}
    asked: dict[int, list[int]] = {}
    if ids:
        for o in await session.scalars(
            select(QuestionOption)
            .where(QuestionOption.question_id.in_(ids))
            .order_by(QuestionOption.position, QuestionOption.id)
        ):
            options.setdefault(o.question_id, []).append(o)
        links = select(question_items).where(question_items.c.question_id.in_(ids))
        for question_id, item_id in await session.execute(links.order_by("item_id")):
            asked.setdefault(question_id, []).append(item_id)
    rules = await session.scalars(
        select(TaxRule).where(TaxRule.event_id == event_id).order_by(TaxRule.id)
    )
    quotas = (
        await session.scalars(select(Quota).where(Quota.event_id == event_id).order_by(Quota.id))
    ).all()
    quota_ids = [q.id for q in quotas]
    q_items: dict[int, list[int]] = {}
    q_vars: dict[int, list[int]] = {}
    if quota_ids:
        for quota_id, item_id in await session.execute(
            select(quota_items).where(quota_items.c.quota_id.in_(quota_ids)).order_by("item_id")
        ):
            q_items.setdefault(quota_id, []).append(item_id)
        for quota_id, var_id in await session.execute(
            select(quota_variations)
            .where(quota_variations.c.quota_id.in_(quota_ids))
            .order_by("variation_id")
        ):
            q_vars.setdefault(quota_id, []).append(var_id)
    dates = await session.scalars(
        select(SubEvent).where(SubEvent.event_id == event_id).order_by(SubEvent.date_from)
    )
    return {
        "categories": [
            {
                "id": c.id,
                "name": c.name,
                "internal_name": c.internal_name or None,  # as the API shows it
                "description": c.description,
                "position": c.position,
                "is_addon": c.is_addon,
            }
            for c in categories
        ],
        "items": [
            {
                "id": i.id,
                "name": i.name,
                "internal_name": i.internal_name or None,
                "category": i.category_id,
                "default_price": money_text(i.default_price, places),
                "tax_rule": i.tax_rule_id,
                "active": i.active,
                "admission": i.admission,
                "personalized": i.personalized,
                "free_price": i.free_price,
                "position": i.position,
                "variations": [
                    {
                        "id": v.id,
                        "value": v.value,
                        "default_price": money_text(v.default_price, places),
                        "active": v.active,
                        "position": v.position,
                    }
                    for v in variations.get(i.id, ())
                ],
            }
            for i in items
        ],
        "questions": [
            {
                "id": q.id,
                "identifier": q.identifier,
                "question": q.question,
                "type": q.type,
                "required": q.required,
                "position": q.position,
                "items": asked.get(q.id, []),
                "options": [
                    {"id": o.id, "identifier": o.identifier, "answer": o.answer}
                    for o in options.get(q.id, ())
                ],
            }
            for q in questions
        ],
        "tax_rules": [
            {
                "id": r.id,
                "name": r.name,
                "rate": str(r.rate),
                "price_includes_tax": r.price_includes_tax,
                "code": r.code,
            }
            for r in rules
        ],
        "quotas": [
            {
                "id": q.id,
                "name": q.name,
                "size": q.size,
                "subevent": q.subevent_id,
                "items": q_items.get(q.id, []),
                "variations": q_vars.get(q.id, []),
            }
            for q in quotas
        ],
        "subevents": [
            {
                "id": s.id,
                "name": s.name,
                "active": s.active,
                "date_from": datetime_text(s.date_from),
                "date_to": datetime_text(s.date_to),
            }
            for s in dates
        ],
    }


def money_text(value: Decimal | None, places: int) -> str | None:
    return f"{value:.{places}f}" if value is not None else None


def datetime_text(value: dt.datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None
