"""Date rules: only for event series, validation against the event, override syncing,
filters (incl. meta data inherited from the event), deletion guards."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from sqlalchemy import ColumnElement, and_, func, not_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.events.service import attr_params, meta_data_errors, meta_value_matches
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.filtering import PK_MAX
from admit.kit.resources.i18n_search import i18n_contains
from admit.models import (
    Event,
    EventMetaProperty,
    Item,
    ItemVariation,
    SubEvent,
    SubEventItem,
    SubEventItemVariation,
)
from admit.seating import sync as seating_sync
from admit.subevents.schemas import SubEventIn

# Checks that refuse deleting a date (e.g. "it is used in orders"); packages owning such data
# register one here, so this package need not import them.
DeletionGuard = Callable[[AsyncSession, SubEvent], Awaitable[str | None]]
deletion_guards: list[DeletionGuard] = []

NOT_A_SERIES = (
    "This event is not an event series: dates can only be added to events with has_subevents set."
)

_SCALARS = (
    "name active is_public date_from date_to date_admission presale_start presale_end "
    "frontpage_text location geo_lat geo_lon seating_plan"
).split()
_OVERRIDE_FIELDS = ("price", "disabled", "available_from", "available_until")


def subevent_to_read(sub: SubEvent, event_slug: str) -> dict[str, Any]:
    data = {c: getattr(sub, c) for c in (*_SCALARS, "id", "last_modified")}
    data["event"] = event_slug
    data["meta_data"] = dict(sub.meta_data or {})
    data["seat_category_mapping"] = dict(sub.seat_category_mapping or {})
    data["item_price_overrides"] = [
        {"item": o.item_id, **{f: getattr(o, f) for f in _OVERRIDE_FIELDS}}
        for o in sub.item_overrides
    ]
    data["variation_price_overrides"] = [
        {"variation": o.variation_id, **{f: getattr(o, f) for f in _OVERRIDE_FIELDS}}
        for o in sub.variation_overrides
    ]
    return data


# -- validation ---------------------------------------------------------------------------------


def _invalid_pk(value: int) -> str:
    return f'Invalid pk "{value}" - object does not exist.'


def _valid_ids(ids: Iterable[int]) -> set[int]:
    """Ids that can exist at all (INTEGER columns): others must not reach PostgreSQL."""
    return {i for i in ids if 1 <= i <= PK_MAX}


async def _reference_errors(
    session: AsyncSession, event_id: int, data: SubEventIn
) -> dict[str, list[dict[str, list[str]]]]:
    """Overrides must name items / variations of this event, each at most once."""
    errors: dict[str, list[dict[str, list[str]]]] = {}
    item_ids = _valid_ids(o.item for o in data.item_price_overrides)
    known_items: set[int] = set()
    if item_ids:
        known_items = set(
            await session.scalars(
                select(Item.id).where(Item.event_id == event_id, Item.id.in_(item_ids))
            )
        )
    var_ids = _valid_ids(o.variation for o in data.variation_price_overrides)
    known_vars: set[int] = set()
    if var_ids:
        known_vars = set(
            await session.scalars(
                select(ItemVariation.id)
                .join(Item, Item.id == ItemVariation.item_id)
                .where(Item.event_id == event_id, ItemVariation.id.in_(var_ids))
            )
        )
    for field, key, refs, known, what in (
        ("item_price_overrides", "item", data.item_price_overrides, known_items, "item"),
        (
            "variation_price_overrides",
            "variation",
            data.variation_price_overrides,
            known_vars,
            "variation",
        ),
    ):
        seen: set[int] = set()
        entries: list[dict[str, list[str]]] = []
        for override in refs:
            pk = getattr(override, key)
            if pk not in known:
                entries.append({key: [_invalid_pk(pk)]})
            elif pk in seen:
                entries.append({key: [f"There is already an override for this {what}."]})
            else:
                entries.append({})
            seen.add(pk)
        if any(entries):
            errors[field] = entries
    return errors


async def validate_subevent(
    session: AsyncSession,
    event: Event,
    data: SubEventIn,
    properties: Mapping[str, EventMetaProperty],
    *,
    check_meta: bool,
    current: SubEvent | None = None,
) -> None:
    """Rules on the full (merged) state; ``check_meta`` when ``meta_data`` is being written;
    ``current``: the date as stored (None when creating one)."""
    errors: dict[str, Any] = {}
    if data.date_to is not None and data.date_to < data.date_from:
        errors["date_to"] = ["The end of the date has to be later than its start."]
    if data.presale_start and data.presale_end and data.presale_end < data.presale_start:
        errors["presale_end"] = ["The end of the presale period has to be later than its start."]
    errors.update(
        await seating_sync.assignment_errors(
            session,
            event.organizer_id,
            event.id,
            data.seating_plan,
            data.seat_category_mapping,
            (current.seating_plan, current.seat_category_mapping) if current else None,
        )
    )
    if check_meta:
        meta_errors = meta_data_errors(data.meta_data, properties, event.meta_data or {})
        if meta_errors:
            errors["meta_data"] = meta_errors
    errors.update(await _reference_errors(session, event.id, data))
    if errors:
        raise FieldErrors(errors)


# -- writing ------------------------------------------------------------------------------------


def apply_subevent(sub: SubEvent, data: SubEventIn, *, new: bool) -> None:
    """Sets every field; overrides are synced by item / variation so unchanged rows stay."""
    for key in _SCALARS:
        setattr(sub, key, getattr(data, key))
    sub.meta_data = dict(data.meta_data)
    sub.seat_category_mapping = dict(data.seat_category_mapping)
    sub.last_modified = utcnow()  # also when only overrides change: modified_since sees it
    current_items = {} if new else {o.item_id: o for o in sub.item_overrides}
    items = []
    for o in data.item_price_overrides:
        row = current_items.pop(o.item, None) or SubEventItem(item_id=o.item)
        for f in _OVERRIDE_FIELDS:
            setattr(row, f, getattr(o, f))
        items.append(row)
    sub.item_overrides = items
    current_vars = {} if new else {o.variation_id: o for o in sub.variation_overrides}
    variations = []
    for o in data.variation_price_overrides:
        row = current_vars.pop(o.variation, None) or SubEventItemVariation(variation_id=o.variation)
        for f in _OVERRIDE_FIELDS:
            setattr(row, f, getattr(o, f))
        variations.append(row)
    sub.variation_overrides = variations


async def deletion_refusal(session: AsyncSession, sub: SubEvent) -> str | None:
    for guard in deletion_guards:
        reason = await guard(session, sub)
        if reason:
            return reason
    return None


# -- filters ------------------------------------------------------------------------------------


# Each branch states whether date_to is set, so the clause is never SQL NULL and its negation
# keeps dates without an end.
def _in_future(now: dt.datetime) -> ColumnElement[bool]:
    return or_(
        and_(SubEvent.date_to.is_not(None), SubEvent.date_to >= now),
        and_(SubEvent.date_to.is_(None), SubEvent.date_from >= now),
    )


def _in_past(now: dt.datetime) -> ColumnElement[bool]:
    return or_(
        and_(SubEvent.date_to.is_not(None), SubEvent.date_to < now),
        and_(SubEvent.date_to.is_(None), SubEvent.date_from < now),
    )


def is_future(value: bool) -> ColumnElement[bool]:
    clause = _in_future(utcnow())
    return clause if value else not_(clause)


def is_past(value: bool) -> ColumnElement[bool]:
    clause = _in_past(utcnow())
    return clause if value else not_(clause)


def ends_after(value: dt.datetime) -> ColumnElement[bool]:
    return or_(
        and_(SubEvent.date_to.is_not(None), SubEvent.date_to >= value),
        and_(SubEvent.date_to.is_(None), SubEvent.date_from >= value),
    )


def search(term: str) -> ColumnElement[bool]:
    low = term.lower()
    return or_(i18n_contains(SubEvent.name, low), i18n_contains(SubEvent.location, low))


def search_with_event(term: str) -> ColumnElement[bool]:
    """The organizer-wide list also matches the parent event's slug (needs Event joined)."""
    low = term.lower()
    return or_(search(term), func.lower(Event.slug).contains(low, autoescape=True))


def meta_clauses(
    params: Mapping[str, str],
    properties: Mapping[str, EventMetaProperty],
    event: Event | None,
) -> list[ColumnElement[bool]]:
    """``attr[key]=value`` on dates: a date without its own value has its event's value, else
    the property's default. With ``event`` given (one event's list) its values are constants;
    without, Event must be joined to the query."""
    clauses = []
    for key, value in attr_params(params):
        prop = properties.get(key)
        default = prop.default if prop is not None else ""
        own = SubEvent.meta_data[key].as_string()
        if event is not None:
            inherited = (event.meta_data or {}).get(key) or default
            clauses.append(meta_value_matches([own], inherited, value))
        else:
            layers = [own, Event.meta_data[key].as_string()]
            clauses.append(meta_value_matches(layers, default, value))
    return clauses
