"""Quota rules: references into the event, the pretix cross-field rules, availability views.

Validation reads the referenced items, variations and the subevent in a few queries whatever
the list lengths. Availability numbers always come from :mod:`admit.quotas.availability`
(never counted here); this module only turns them into the states the API reports.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.db import utcnow
from admit.events.availability import AvailabilitySource, provide_availability
from admit.kit.http.errors import NON_FIELD, FieldErrors
from admit.models import (
    Event,
    Item,
    ItemCategory,
    ItemVariation,
    Quota,
    SubEvent,
    SubEventItem,
    SubEventItemVariation,
)
from admit.quotas.availability import Availability, count
from admit.quotas.schemas import QuotaIn

_COPIED = (
    "id name size close_when_sold_out closed release_after_exit ignore_for_event_availability "
    "position"
).split()

VARIATION_OUTSIDE_ITEMS = "All variations must belong to an item contained in the items list."
ITEM_WITHOUT_VARIATIONS = (
    "One or more items has variations but none of these are in the variations list."
)
SUBEVENT_REQUIRED = "Subevent cannot be null for event series."
SUBEVENT_FOREIGN = "The subevent does not belong to this event."


def invalid_pk(pk: object) -> str:
    return f'Invalid pk "{pk}" - object does not exist.'


def quota_to_read(quota: Quota) -> dict[str, Any]:
    data = {name: getattr(quota, name) for name in _COPIED}
    data.update(
        items=[item.id for item in quota.items],
        variations=[variation.id for variation in quota.variations],
        subevent=quota.subevent_id,
    )
    return data


@dataclass
class Resolved:
    """The objects a valid write links to, handed to :func:`apply_quota`."""

    items: list[Item]
    variations: list[ItemVariation]


async def validate_quota(session: AsyncSession, event: Event, data: QuotaIn) -> Resolved:
    """References must lie in this event; then pretix's rules on the combination."""
    errors: dict[str, list[str]] = {}
    items: dict[int, Item] = {}
    if data.items:
        found = await session.execute(
            select(Item).where(Item.event_id == event.id, Item.id.in_(data.items))
        )
        items = {item.id: item for item in found.scalars()}
        missing = [pk for pk in data.items if pk not in items]
        if missing:
            errors["items"] = [invalid_pk(pk) for pk in missing]
    variations: dict[int, ItemVariation] = {}
    if data.variations:
        found = await session.execute(
            select(ItemVariation)
            .join(Item, Item.id == ItemVariation.item_id)
            .where(Item.event_id == event.id, ItemVariation.id.in_(data.variations))
        )
        variations = {v.id: v for v in found.scalars()}
        missing = [pk for pk in data.variations if pk not in variations]
        if missing:
            errors["variations"] = [invalid_pk(pk) for pk in missing]
    if data.subevent is not None:
        subevent_id = await session.scalar(
            select(SubEvent.id).where(SubEvent.id == data.subevent, SubEvent.event_id == event.id)
        )
        if subevent_id is None:
            errors["subevent"] = [invalid_pk(data.subevent)]
    if errors:
        raise FieldErrors(errors)

    general: list[str] = []
    if any(v.item_id not in items for v in variations.values()):
        general.append(VARIATION_OUTSIDE_ITEMS)
    with_variations = await _items_with_variations(session, list(items))
    chosen_items = {v.item_id for v in variations.values()}
    if any(item_id not in chosen_items for item_id in with_variations):
        general.append(ITEM_WITHOUT_VARIATIONS)
    if event.has_subevents and data.subevent is None:
        general.append(SUBEVENT_REQUIRED)
    elif not event.has_subevents and data.subevent is not None:
        general.append(SUBEVENT_FOREIGN)
    if general:
        raise FieldErrors({NON_FIELD: general})
    return Resolved(
        items=[items[pk] for pk in data.items],
        variations=[variations[pk] for pk in data.variations],
    )


async def _items_with_variations(session: AsyncSession, item_ids: list[int]) -> set[int]:
    if not item_ids:
        return set()
    found = await session.execute(
        select(ItemVariation.item_id).where(ItemVariation.item_id.in_(item_ids)).distinct()
    )
    return set(found.scalars())


def apply_quota(quota: Quota, data: QuotaIn, resolved: Resolved) -> None:
    quota.name = data.name
    quota.size = data.size
    quota.subevent_id = data.subevent
    quota.close_when_sold_out = data.close_when_sold_out
    quota.closed = data.closed
    quota.release_after_exit = data.release_after_exit
    quota.ignore_for_event_availability = data.ignore_for_event_availability
    quota.position = data.position
    quota.items = resolved.items
    quota.variations = resolved.variations


async def availability(session: AsyncSession, quotas: list[Quota]) -> dict[int, Availability]:
    """Availability of each quota (a fixed number of queries per quota)."""
    if not quotas:
        return {}
    return await count(session, quotas)


# -- event availability ----------------------------------------------------------------------

# pretix's availability states; a best_availability_state is one of OK, RESERVED or GONE
# (a product whose remaining units sit in unpaid orders counts as gone there).
GONE = 0
ORDERED = 10
RESERVED = 20
OK = 100


def quota_state(quota: Quota, numbers: Availability) -> int:
    """Why a quota is (not) available, in pretix's order: paid, pending/vouchers, carts."""
    if numbers.available:
        return OK
    if quota.closed or quota.size is None:
        return GONE
    left = quota.size - (numbers.paid_orders - numbers.exited_orders)
    if left <= 0:
        return GONE
    left -= numbers.pending_orders + numbers.blocking_vouchers
    if left <= 0:
        return ORDERED
    return RESERVED


def _sellable(obj: Item | ItemVariation, now: dt.datetime) -> bool:
    if not obj.active or obj.hide_without_voucher:
        return False
    if obj.available_from is not None and obj.available_from > now:
        return False
    return obj.available_until is None or obj.available_until >= now


def _in_channel(item: Item, channel: str) -> bool:
    return item.all_sales_channels or channel in (item.limit_sales_channels or [])


@dataclass
class _Catalog:
    """The products (items without variations, variations) buyers can pick in a channel."""

    items: set[int]
    variations: dict[int, int]  # variation id -> item id


async def _sellable_products(
    session: AsyncSession, item_ids: set[int], channel: str, now: dt.datetime
) -> _Catalog:
    catalog = _Catalog(set(), {})
    if not item_ids:
        return catalog
    rows = await session.execute(
        select(Item, ItemCategory.is_addon)
        .outerjoin(ItemCategory, ItemCategory.id == Item.category_id)
        .where(Item.id.in_(item_ids))
    )
    usable = {
        item.id
        for item, is_addon in rows.all()
        if _sellable(item, now)
        and _in_channel(item, channel)
        and not item.require_bundling
        and not is_addon
    }
    variations = (
        (await session.execute(select(ItemVariation).where(ItemVariation.item_id.in_(item_ids))))
        .scalars()
        .all()
    )
    with_variations = {v.item_id for v in variations}
    catalog.items = usable - with_variations
    catalog.variations = {
        v.id: v.item_id for v in variations if v.item_id in usable and _sellable(v, now)
    }
    return catalog


def _best_state(
    quotas: list[Quota],
    states: dict[int, int],
    catalog: _Catalog,
    disabled: set[tuple[str, int]] = frozenset(),  # type: ignore[assignment]
) -> int | None:
    """100 when some product has every quota available, else 20 or 0; None when unknown."""
    product_states: dict[tuple[str, int], int] = {}
    for quota in quotas:
        item_ids = {item.id for item in quota.items}
        products = [("i", i) for i in item_ids if i in catalog.items]
        products += [
            ("v", v.id) for v in quota.variations if catalog.variations.get(v.id) in item_ids
        ]
        for product in products:
            if product in disabled:
                continue
            product_states[product] = min(product_states.get(product, OK), states[quota.id])
    if not product_states:
        return None
    best = max(product_states.values())
    return best if best in (OK, RESERVED) else GONE


async def _quota_states(
    session: AsyncSession, query: Any, channel: str
) -> tuple[list[Quota], dict[int, int], _Catalog]:
    query = query.where(Quota.ignore_for_event_availability.is_(False)).options(
        selectinload(Quota.items).load_only(Item.id),
        selectinload(Quota.variations).load_only(ItemVariation.id, ItemVariation.item_id),
    )
    quotas = list((await session.execute(query.order_by(Quota.id))).scalars().all())
    now = utcnow()
    item_ids = {item.id for quota in quotas for item in quota.items}
    catalog = await _sellable_products(session, item_ids, channel, now)
    numbers = await availability(session, quotas)
    states = {quota.id: quota_state(quota, numbers[quota.id]) for quota in quotas}
    return quotas, states, catalog


async def _disabled_products(
    session: AsyncSession, subevent_ids: list[int]
) -> dict[int, set[tuple[str, int]]]:
    """Products switched off for single dates (subevent overrides with ``disabled``)."""
    disabled: dict[int, set[tuple[str, int]]] = defaultdict(set)
    if not subevent_ids:
        return disabled
    rows = await session.execute(
        select(SubEventItem.subevent_id, SubEventItem.item_id).where(
            SubEventItem.subevent_id.in_(subevent_ids), SubEventItem.disabled.is_(True)
        )
    )
    for subevent_id, item_id in rows.all():
        disabled[subevent_id].add(("i", item_id))
    rows = await session.execute(
        select(SubEventItemVariation.subevent_id, SubEventItemVariation.variation_id).where(
            SubEventItemVariation.subevent_id.in_(subevent_ids),
            SubEventItemVariation.disabled.is_(True),
        )
    )
    for subevent_id, variation_id in rows.all():
        disabled[subevent_id].add(("v", variation_id))
    return disabled


async def subevent_availability_states(
    session: AsyncSession, subevents: list[SubEvent], channel: str
) -> dict[int, int | None]:
    """best_availability_state of each date, from the quotas of that date."""
    ids = [s.id for s in subevents]
    if not ids:
        return {}
    quotas, states, catalog = await _quota_states(
        session, select(Quota).where(Quota.subevent_id.in_(ids)), channel
    )
    disabled = await _disabled_products(session, ids)
    by_subevent: dict[int, list[Quota]] = defaultdict(list)
    for quota in quotas:
        by_subevent[quota.subevent_id].append(quota)  # type: ignore[index]
    return {
        i: _best_state(by_subevent.get(i, []), states, catalog, disabled.get(i, set())) for i in ids
    }


async def event_availability_states(
    session: AsyncSession, events: list[Event], channel: str
) -> dict[int, int | None]:
    """best_availability_state of each event; for a series the best of its active dates."""
    single = [e.id for e in events if not e.has_subevents]
    series = [e.id for e in events if e.has_subevents]
    result: dict[int, int | None] = dict.fromkeys(single + series)
    if single:
        quotas, states, catalog = await _quota_states(
            session,
            select(Quota).where(Quota.event_id.in_(single), Quota.subevent_id.is_(None)),
            channel,
        )
        by_event: dict[int, list[Quota]] = defaultdict(list)
        for quota in quotas:
            by_event[quota.event_id].append(quota)
        for event_id in single:
            result[event_id] = _best_state(by_event.get(event_id, []), states, catalog)
    if series:
        dates = (
            await session.execute(
                select(SubEvent).where(SubEvent.event_id.in_(series), SubEvent.active.is_(True))
            )
        ).scalars()
        dates = list(dates)
        per_date = await subevent_availability_states(session, dates, channel)
        for date in dates:
            state = per_date.get(date.id)
            current = result[date.event_id]
            if state is not None and (current is None or state > current):
                result[date.event_id] = state
    return result


# The event and date lists show these states; the catalog cannot import sales, so it is told.
provide_availability(
    AvailabilitySource(events=event_availability_states, subevents=subevent_availability_states)
)
