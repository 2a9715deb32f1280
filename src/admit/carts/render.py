"""Cart positions as the API shows them, with their add-ons, bundled positions and answers.

A freshly created position is rendered from what was just written (no reload while the quota
lock is held); stored positions are loaded in a fixed number of queries whatever their number.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.carts.schemas import CartPositionOut
from admit.catalog.questions.answers import CheckedAnswer
from admit.models import Answer, CartPosition, Question
from admit.seating.expand import register_holder_renderer
from admit.seating.render import position_seats

# Name parts in reading order; others follow alphabetically, internal keys ("_scheme") never.
_NAME_ORDER = ("_legacy", "full_name", "title", "given_name", "middle_name", "family_name")


def attendee_name(parts: dict[str, str] | None) -> str | None:
    """The parts joined into one name, like the reference's cached name."""
    if not parts:
        return None
    keys = [k for k in _NAME_ORDER if k in parts]
    keys += sorted(k for k in parts if k not in _NAME_ORDER and not k.startswith("_"))
    name = " ".join(str(parts[k]).strip() for k in keys if str(parts[k]).strip())
    return name or None


def answer_dict(
    question_id: int, answer: str, identifier: str, options: Sequence[Any]
) -> dict[str, Any]:
    return {
        "question": question_id,
        "answer": answer,
        "question_identifier": identifier,
        "options": [o.id for o in options],
        "option_identifiers": [o.identifier for o in options],
    }


def checked_answer_dicts(answers: Sequence[CheckedAnswer]) -> list[dict[str, Any]]:
    return [answer_dict(a.question.id, a.answer, a.question.identifier, a.options) for a in answers]


def _raw(
    pos: CartPosition,
    answers: list[dict[str, Any]],
    children: Sequence[CartPosition] = (),
    child_answers: dict[int, list[dict[str, Any]]] | None = None,
    seats: dict[int, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    seats = seats or {}
    nested = [_raw(c, (child_answers or {}).get(c.id, []), seats=seats) for c in children]
    return {
        "id": pos.id,
        "cart_id": pos.cart_id,
        "datetime": pos.datetime,
        "expires": pos.expires,
        "item": pos.item_id,
        "variation": pos.variation_id,
        "price": pos.price,
        "attendee_name": attendee_name(pos.attendee_name_parts),
        "attendee_name_parts": pos.attendee_name_parts or {},
        "attendee_email": pos.attendee_email,
        "voucher": pos.voucher_id,
        "addon_to": pos.addon_to_id,
        "is_bundled": pos.is_bundled,
        "subevent": pos.subevent_id,
        "includes_tax": pos.includes_tax,
        "answers": answers,
        "seat": seats.get(pos.seat_id) if pos.seat_id is not None else None,
        "addons": [n for n, c in zip(nested, children, strict=True) if not c.is_bundled],
        "bundled": [n for n, c in zip(nested, children, strict=True) if c.is_bundled],
    }


def render(
    pos: CartPosition,
    answers: list[dict[str, Any]],
    children: Sequence[CartPosition] = (),
    child_answers: dict[int, list[dict[str, Any]]] | None = None,
    seats: dict[int, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``seats``: seat objects by id (``seating.render``) for the positions that have one."""
    raw = _raw(pos, answers, children, child_answers, seats)
    return CartPositionOut.model_validate(raw).model_dump(mode="json")


async def render_many(session: AsyncSession, positions: Sequence[CartPosition]) -> list[dict]:
    """Stored positions with their nested positions, answers and seats: five queries at most."""
    if not positions:
        return []
    ids = [p.id for p in positions]
    children_of: dict[int, list[CartPosition]] = defaultdict(list)
    rows = await session.execute(
        select(CartPosition).where(CartPosition.addon_to_id.in_(ids)).order_by(CartPosition.id)
    )
    children = list(rows.scalars())
    for child in children:
        children_of[child.addon_to_id].append(child)  # type: ignore[index]
    all_ids = ids + [c.id for c in children]
    answers = list(
        (
            await session.execute(
                select(Answer)
                .where(Answer.cartposition_id.in_(all_ids))
                .options(selectinload(Answer.options))
                .order_by(Answer.id)
            )
        ).scalars()
    )
    identifiers: dict[int, str] = {}
    if answers:
        question_ids = {a.question_id for a in answers}
        identifiers = dict(
            (
                await session.execute(
                    select(Question.id, Question.identifier).where(Question.id.in_(question_ids))
                )
            ).all()
        )
    by_position: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for a in answers:
        by_position[a.cartposition_id].append(  # type: ignore[index]
            answer_dict(a.question_id, a.answer, identifiers.get(a.question_id, ""), a.options)
        )
    seats = await position_seats(session, [p.seat_id for p in [*positions, *children]])
    return [
        render(p, by_position.get(p.id, []), children_of.get(p.id, []), by_position, seats)
        for p in positions
    ]


async def seat_holders(
    session: AsyncSession, ids: Sequence[int], event_slug: str
) -> dict[int, dict[str, Any]]:
    """Cart positions holding seats, for ``?expand=cartposition`` on the seats."""
    rows = list(
        await session.scalars(
            select(CartPosition).where(CartPosition.id.in_(ids)).order_by(CartPosition.id)
        )
    )
    rendered = await render_many(session, rows)
    return {p.id: data for p, data in zip(rows, rendered, strict=True)}


register_holder_renderer("cartposition", seat_holders)
