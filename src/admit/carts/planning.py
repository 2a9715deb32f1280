"""Checking a cart position request before anything is reserved or written: the event's objects
it refers to, loaded once for all its positions (:func:`load_refs`), and each position checked
against them (:func:`plan`), every problem reported at once as field errors keyed like the
request. :mod:`admit.carts.service` reserves quota for the result and writes it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.carts.schemas import CartPositionIn, NestedPositionIn
from admit.catalog.questions import answers as answers_mod
from admit.catalog.questions.answers import CheckedAnswer, QuestionInfo, invalid_pk, valid_ids
from admit.events.plugins import SALES_CHANNELS
from admit.kit.http.errors import FieldErrors
from admit.models import Event, Item, ItemVariation, Seat, SubEvent
from admit.quotas.availability import ProductKey
from admit.seating import claim as seating
from admit.vouchers import sales as voucher_sales


@dataclass
class Refs:
    """The event's objects a request refers to, loaded once for all its positions."""

    items: dict[int, Item] = field(default_factory=dict)
    variations: dict[int, int] = field(default_factory=dict)  # variation id -> item id
    items_with_variations: set[int] = field(default_factory=set)
    subevents: set[int] = field(default_factory=set)
    questions: dict[int, QuestionInfo] = field(default_factory=dict)
    voucher_codes: set[str] = field(default_factory=set)  # lower-cased codes that exist
    seating: seating.SeatingRefs = field(default_factory=seating.SeatingRefs)


@dataclass
class Planned:
    """A checked position, ready to be written."""

    data: NestedPositionIn
    item: Item
    subevent_id: int | None
    name_parts: dict[str, str]
    answers: list[CheckedAnswer]
    is_bundled: bool = False
    where: tuple[str, int] | None = None  # ("addons", 2) for a nested position
    seat: Seat | None = None
    voucher_id: int | None = None  # set by admit.vouchers.sales.for_cart
    quota_exempt: bool = False  # its voucher ignores or blocks quota itself

    @property
    def key(self) -> ProductKey:
        return (self.item.id, self.data.variation, self.subevent_id)


def _positions(data: CartPositionIn) -> list[NestedPositionIn]:
    return [data, *data.addons, *data.bundled]


# Built once (building a statement costs more CPU than running it); lists bind expanding.
_ITEMS = select(Item).where(
    Item.event_id == bindparam("event_id"), Item.id.in_(bindparam("ids", expanding=True))
)


_VARIATIONS = (
    select(ItemVariation.id, ItemVariation.item_id)
    .join(Item, Item.id == ItemVariation.item_id)
    .where(
        Item.event_id == bindparam("event_id"),
        or_(
            ItemVariation.item_id.in_(bindparam("items", expanding=True)),
            ItemVariation.id.in_(bindparam("ids", expanding=True)),
        ),
    )
)


async def load_refs(session: AsyncSession, event: Event, entries: Iterable[CartPositionIn]) -> Refs:
    """Items, variations, subevents, questions and seats of every position in ``entries``."""
    entries = list(entries)
    positions = [p for e in entries for p in _positions(e)]
    refs = Refs()
    item_ids = valid_ids(p.item for p in positions)
    variation_ids = valid_ids(p.variation for p in positions if p.variation is not None)
    if item_ids:
        found = await session.execute(_ITEMS, {"event_id": event.id, "ids": sorted(item_ids)})
        refs.items = {i.id: i for i in found.scalars()}
    if refs.items or variation_ids:
        params = {"event_id": event.id, "items": list(refs.items), "ids": sorted(variation_ids)}
        rows = await session.execute(_VARIATIONS, params)
        for variation_id, item_id in rows:
            refs.variations[variation_id] = item_id
            refs.items_with_variations.add(item_id)
    subevent_ids = valid_ids(p.subevent for p in positions if p.subevent is not None)
    if subevent_ids:
        found_ids = await session.scalars(
            select(SubEvent.id).where(SubEvent.event_id == event.id, SubEvent.id.in_(subevent_ids))
        )
        refs.subevents = set(found_ids)
    question_ids = {a.question for p in positions for a in p.answers}
    refs.questions = await answers_mod.load_questions(session, event.id, question_ids)
    refs.voucher_codes = await voucher_sales.known_codes(session, event.id, positions)
    refs.seating = await seating.load(
        session, event, [(_date_of(e, p), p.seat) for e in entries for p in _positions(e)]
    )
    return refs


def _date_of(entry: CartPositionIn, position: NestedPositionIn) -> int | None:
    """A nested position is for the parent's date unless it names one itself."""
    own = position is entry or "subevent" in position.model_fields_set
    return position.subevent if own else entry.subevent


def name_parts(data: NestedPositionIn, errors: dict[str, Any]) -> dict[str, str]:
    if data.attendee_name and data.attendee_name_parts:
        errors["attendee_name"] = [
            "Do not specify attendee_name if you specified attendee_name_parts."
        ]
        return {}
    if data.attendee_name_parts:
        return dict(data.attendee_name_parts)
    if data.attendee_name:
        return {"_legacy": data.attendee_name}
    return {}


def _check_variation(data: NestedPositionIn, item: Item, refs: Refs, errors: dict) -> None:
    if data.variation is None:
        if item.id in refs.items_with_variations:
            errors["variation"] = ["You should specify a variation for this item."]
        return
    owner = refs.variations.get(data.variation)
    if owner is None:
        errors["variation"] = [invalid_pk(data.variation)]
    elif item.id not in refs.items_with_variations:
        errors["variation"] = ["You cannot specify a variation for this item."]
    elif owner != item.id:
        errors["variation"] = ["The specified variation does not belong to the specified item."]


def _check_subevent(event: Event, subevent: int | None, refs: Refs, errors: dict) -> None:
    if event.has_subevents:
        if subevent is None:
            errors["subevent"] = ["You need to set a subevent."]
        elif subevent not in refs.subevents:
            errors["subevent"] = [invalid_pk(subevent)]
    elif subevent is not None:
        errors["subevent"] = ["You cannot set a subevent for this event."]


def check_position(
    event: Event, data: NestedPositionIn, refs: Refs, subevent: int | None
) -> tuple[Planned | None, dict[str, Any]]:
    """One position's references, seat, voucher, name and answers; errors keyed by field."""
    errors: dict[str, Any] = {}
    item = refs.items.get(data.item)
    if item is None:
        errors["item"] = [invalid_pk(data.item)]
    else:
        _check_variation(data, item, refs, errors)
    _check_subevent(event, subevent, refs, errors)
    seat, seat_problem = (
        (None, None) if item is None else seating.check(refs.seating, item, subevent, data.seat)
    )
    if seat_problem:
        errors["seat"] = [seat_problem]
    if data.voucher and data.voucher.lower() not in refs.voucher_codes:
        errors["voucher"] = [voucher_sales.CART_UNKNOWN]  # the other rules: vouchers.sales
    parts = name_parts(data, errors)
    checked: list[CheckedAnswer] = []
    if data.answers and item is not None:
        checked, answer_errors = answers_mod.check_answers(data.answers, item.id, refs.questions)
        if answer_errors:
            errors["answers"] = answer_errors
    if errors or item is None:
        return None, errors
    return Planned(data, item, subevent, parts, checked, seat=seat), {}


def plan(event: Event, data: CartPositionIn, refs: Refs, now: dt.datetime) -> list[Planned]:
    """Every position of one create request, checked; raises FieldErrors with all problems."""
    parent, errors = check_position(event, data, refs, data.subevent)
    if data.expires is not None and data.expires <= now:
        errors["expires"] = ["The expiry date must be in the future."]
    if data.sales_channel not in SALES_CHANNELS:
        errors["sales_channel"] = [f"Object with identifier={data.sales_channel} does not exist."]
    planned = [parent] if parent is not None else []
    for name, nested, bundled in (("addons", data.addons, False), ("bundled", data.bundled, True)):
        nested_errors: list[dict[str, Any]] = []
        for index, sub in enumerate(nested):
            # A nested position is for the parent's date unless it names one itself.
            subevent = sub.subevent if "subevent" in sub.model_fields_set else data.subevent
            child, problems = check_position(event, sub, refs, subevent)
            nested_errors.append(problems)
            if child is not None:
                child.is_bundled = bundled
                child.where = (name, index)
                planned.append(child)
        if any(nested_errors):
            errors[name] = nested_errors
    if errors:
        raise FieldErrors(errors)
    return planned
