"""Checking the positions of a new order against the catalog, before anything is locked.

The checks (:func:`check_positions`) read only what :class:`Refs` holds: the products, dates,
questions and seats the request names and the secrets already taken. The general path loads
those per request (:func:`load_refs`); the fast lane hands in the same kind of objects from its
catalog snapshot (``orders/catalog.py``). So whatever path an order takes, one function decides
whether its positions are valid and what each one is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.catalog.questions.answers import (
    CheckedAnswer,
    QuestionInfo,
    check_answers,
    invalid_pk,
    load_questions,
    valid_ids,
)
from admit.kit.http.errors import FieldErrors
from admit.models import Event, Item, Seat, SubEvent
from admit.orders import codes
from admit.orders.pricing import Line
from admit.orders.schemas import PositionIn
from admit.seating import claim as seating

ProductKey = tuple[int, int | None, int | None]

SECRET_TAKEN = "You cannot assign a position secret that already exists."
ADDON_TO = (
    "addon_to must refer to the positionid of an earlier position that is not an add-on itself."
)


@dataclass
class Refs:
    """The catalog objects a request names (items with their variations loaded, dates with
    their price overrides), its seats and the requested secrets that are taken already."""

    items: dict[int, Item] = field(default_factory=dict)
    subevents: dict[int, SubEvent] = field(default_factory=dict)
    questions: dict[int, QuestionInfo] = field(default_factory=dict)
    seats: seating.SeatingRefs = field(default_factory=seating.SeatingRefs)
    taken_secrets: set[str] = field(default_factory=set)


class Draft:
    """What the validation found for one position."""

    def __init__(self, data: PositionIn, positionid: int) -> None:
        self.data = data
        self.positionid = positionid
        self.line: Line | None = None
        self.answers: list[CheckedAnswer] = []
        self.seat: Seat | None = None


_ITEMS = (
    select(Item)
    .where(Item.event_id == bindparam("event_id"), Item.id.in_(bindparam("ids", expanding=True)))
    .options(selectinload(Item.variations))
)
_SUBEVENTS = (
    select(SubEvent)
    .where(
        SubEvent.event_id == bindparam("event_id"),
        SubEvent.id.in_(bindparam("ids", expanding=True)),
    )
    .options(selectinload(SubEvent.item_overrides), selectinload(SubEvent.variation_overrides))
)


async def load_subevents(
    session: AsyncSession, event_id: int, ids: list[int]
) -> dict[int, SubEvent]:
    """The event's dates among ``ids``, with their price overrides."""
    if not ids:
        return {}
    rows = await session.scalars(_SUBEVENTS, {"event_id": event_id, "ids": ids})
    return {s.id: s for s in rows}


async def load_refs(
    session: AsyncSession,
    event: Event,
    positions: list[PositionIn],
    also_secrets: Sequence[str] = (),
) -> Refs:
    """What :func:`check_positions` needs, read for this request (queries only for what it
    names: no subevent, answer, seat or secret costs no query). ``also_secrets``: secrets
    generated for the other positions, checked in the same query (``taken_secrets`` then
    holds those found taken, too)."""
    refs = Refs()
    params: dict[str, Any] = {"event_id": event.id}
    item_ids = valid_ids(p.item for p in positions)
    if item_ids:
        rows = await session.scalars(_ITEMS, {**params, "ids": sorted(item_ids)})
        refs.items = {i.id: i for i in rows}
    sub_ids = valid_ids(p.subevent for p in positions if p.subevent is not None)
    refs.subevents = await load_subevents(session, event.id, sorted(sub_ids))
    refs.questions = await load_questions(
        session, event.id, {a.question for p in positions for a in p.answers}
    )
    refs.seats = await seating.load(session, event, [(p.subevent, p.seat) for p in positions])
    refs.taken_secrets = await codes.taken_secrets(
        session, event.id, [*(p.secret for p in positions if p.secret), *also_secrets]
    )
    return refs


def check_positions(event: Event, positions: list[PositionIn], refs: Refs) -> list[Draft]:
    """One draft per position, or FieldErrors with the problems of every position."""
    errors: list[dict[str, Any]] = []
    drafts: list[Draft] = []
    seen_secrets: set[str] = set()
    main_ids: set[int] = set()
    items, subevents = refs.items, refs.subevents
    for index, data in enumerate(positions):
        err: dict[str, Any] = {}
        draft = Draft(data, data.positionid or index + 1)
        if data.positionid is not None and data.positionid != index + 1:
            err["positionid"] = ["Position IDs need to be consecutive, starting at 1."]
        item = items.get(data.item)
        variation = None
        if item is None:
            err["item"] = [invalid_pk(data.item)]
        elif item.variations and data.variation is None:
            err["variation"] = ["You should specify a variation for this item."]
        elif data.variation is not None:
            variation = next((v for v in item.variations if v.id == data.variation), None)
            if not item.variations:
                err["variation"] = ["You cannot specify a variation for this item."]
            elif variation is None:
                err["variation"] = [invalid_pk(data.variation)]
        subevent = subevents.get(data.subevent) if data.subevent is not None else None
        if event.has_subevents and data.subevent is None:
            err["subevent"] = ["You need to set a subevent."]
        elif not event.has_subevents and data.subevent is not None:
            err["subevent"] = ["You cannot set a subevent for this event."]
        elif data.subevent is not None and subevent is None:
            err["subevent"] = [invalid_pk(data.subevent)]
        if data.addon_to is not None:
            if data.addon_to not in main_ids:
                err["addon_to"] = [ADDON_TO]
        else:
            main_ids.add(draft.positionid)
        if item is not None:
            draft.seat, seat_problem = seating.check(refs.seats, item, data.subevent, data.seat)
            if seat_problem:
                err["seat"] = [seat_problem]
        if data.secret is not None:
            if data.secret in refs.taken_secrets or data.secret in seen_secrets:
                err["secret"] = [SECRET_TAKEN]
            seen_secrets.add(data.secret)
        if item is not None and data.answers:
            draft.answers, answer_errors = check_answers(data.answers, item.id, refs.questions)
            if answer_errors:
                err["answers"] = answer_errors
        if item is not None and not err:
            draft.line = Line(item, variation, subevent, data.price, data.addon_to is not None)
        errors.append(err)
        drafts.append(draft)
    if any(errors):
        raise FieldErrors({"positions": errors})
    return drafts


async def checked_positions(
    session: AsyncSession, event: Event, positions: list[PositionIn]
) -> list[Draft]:
    """:func:`load_refs` and :func:`check_positions` in one step (order changes use it)."""
    return check_positions(event, positions, await load_refs(session, event, positions))


def key_of(line: Line) -> ProductKey:
    return (
        line.item.id,
        line.variation.id if line.variation else None,
        line.subevent.id if line.subevent else None,
    )
