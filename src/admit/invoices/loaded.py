"""An invoice's lines from the order the request has loaded already, without a query.

Why: issuing runs in every payment's transaction (issue 33 allows it 10 % of a payment's
throughput), and the payment's own route has loaded the order with its positions and fees to
act on them. Reading them again costs a round trip and PostgreSQL's planning of a query with
a dozen joins, for rows that are in memory. What memory lacks are the catalog's names (the
product, its variation, the date, the tax rule), which the lines print: those are kept per
worker and per event, labelled with the event's ``catalog_modified`` stamp as read *before* the
names (``kit/stamps/catalog.py``: every write of the catalog moves it in the same transaction).
A request whose event row shows a newer stamp than the copy's reads the names again, so an
invoice never prints a name older than the one its transaction would have read.

Whether an invoice is in force already is asked by the write itself
(:func:`admit.invoices.writing.write_unless_invoiced`), and the issuer's name, when it is the
organizer's, is filled in by the same statement: issuing is then one statement.
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import bindparam, inspect, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.invoices import content
from admit.invoices.content import LineData
from admit.invoices.settings_keys import setting
from admit.models import Event, Item, ItemVariation, Order, SubEvent, TaxRule

MAX_EVENTS = 256  # copies kept per worker (the least recently used goes first)


@dataclass
class Names:
    """The names an event's invoice lines print, as of ``stamp`` (or later)."""

    stamp: dt.datetime
    items: dict[int, Any]
    variations: dict[int, Any]
    rules: dict[int, Any]
    # id -> (name, date_from, date_to, location); added as orders name them.
    subevents: dict[int, tuple[Any, Any, Any, Any]] = field(default_factory=dict)


_STAMP = select(Event.catalog_modified).where(Event.id == bindparam("event_id"))
_ITEMS = select(Item.id, Item.name).where(Item.event_id == bindparam("event_id"))
_VARIATIONS = (
    select(ItemVariation.id, ItemVariation.value)
    .join(Item, Item.id == ItemVariation.item_id)
    .where(Item.event_id == bindparam("event_id"))
)
_RULES = select(TaxRule.id, TaxRule.name).where(TaxRule.event_id == bindparam("event_id"))
_SUBEVENTS = select(
    SubEvent.id, SubEvent.name, SubEvent.date_from, SubEvent.date_to, SubEvent.location
).where(
    SubEvent.event_id == bindparam("event_id"),
    SubEvent.id.in_(bindparam("ids", expanding=True)),
)


class NamesCache:
    """The copies of one worker, by database (a process may serve several, as the tests'
    does: event ids repeat across them) and event."""

    def __init__(self) -> None:
        self._by_database: WeakKeyDictionary[Any, OrderedDict[tuple[int, Any], Names]] = (
            WeakKeyDictionary()
        )

    async def get(self, session: AsyncSession, event: Event, subevent_ids: set[int]) -> Names:
        copies = self._by_database.setdefault(session.get_bind(), OrderedDict())
        # With its creation time: SQLite may give a new event the id of a deleted one.
        key = (event.id, event.created)
        copy = copies.get(key)
        seen = event.catalog_modified
        if copy is None or (seen is not None and seen > copy.stamp):
            copy = await _load(session, event.id)
            copies[key] = copy
            while len(copies) > MAX_EVENTS:
                copies.popitem(last=False)
        copies.move_to_end(key)
        missing = sorted(subevent_ids - copy.subevents.keys())
        if missing:
            params = {"event_id": event.id, "ids": missing}
            for row in await session.execute(_SUBEVENTS, params):
                copy.subevents[row.id] = (row.name, row.date_from, row.date_to, row.location)
        return copy


async def _load(session: AsyncSession, event_id: int) -> Names:
    params = {"event_id": event_id}
    stamp = await session.scalar(_STAMP, params)  # first: the names are at least this new
    if stamp is None:
        raise LookupError(f"event {event_id} is gone")
    return Names(
        stamp=stamp,
        items=dict((await session.execute(_ITEMS, params)).all()),
        variations=dict((await session.execute(_VARIATIONS, params)).all()),
        rules=dict((await session.execute(_RULES, params)).all()),
    )


cache = NamesCache()


def is_loaded(order: Order) -> bool:
    """Whether the order's positions and fees are in memory (the payment's route loaded
    them); otherwise the lines are read by query (:func:`admit.invoices.service.read`)."""
    unloaded = inspect(order).unloaded
    return "positions" not in unloaded and "fees" not in unloaded


async def lines(session: AsyncSession, event: Event, order: Order) -> list[LineData]:
    """The order's live positions and fees as invoice lines, in the invoice's language, in
    the order :func:`admit.invoices.service.read` gives them (positions, then fees)."""
    positions = sorted((p for p in order.positions if not p.canceled), key=lambda p: p.positionid)
    subevent_ids = {p.subevent_id for p in positions if p.subevent_id is not None}
    names = await cache.get(session, event, subevent_ids)
    rows: list[dict[str, Any]] = []
    for position in positions:
        dated = names.subevents.get(position.subevent_id or 0, (None,) * 4)
        rows.append(
            {
                "kind": 0,
                **_money(position, position.price, names),
                "item_id": position.item_id,
                "item_name": names.items.get(position.item_id),
                "variation_id": position.variation_id,
                "variation_name": names.variations.get(position.variation_id or 0),
                "subevent_id": position.subevent_id,
                "subevent_name": dated[0],
                "date_from": dated[1],
                "date_to": dated[2],
                "location": dated[3],
                "attendee_name": position.attendee_name_cached,
            }
        )
    live_fees = (f for f in order.fees if not f.canceled)
    for fee in sorted(live_fees, key=lambda f: (f.id is None, f.id or 0)):
        rows.append(
            {
                "kind": 1,
                **_money(fee, fee.value, names),
                "fee_type": fee.fee_type,
                "fee_description": fee.description,
                "fee_internal_type": fee.internal_type,
            }
        )
    locale = content.invoice_locale(event, order.locale)
    names_shown = bool(setting(event, "invoice_attendee_name"))
    location_shown = bool(setting(event, "invoice_event_location"))
    found = (content.line_of(row, event, locale, names_shown, location_shown) for row in rows)
    return [line for line in found if content.keep_line(event, line)]


def _money(line: Any, gross: Any, names: Names) -> dict[str, Any]:
    """A position's or a fee's amounts and tax, as the order's lines query selects them."""
    rule = line.tax_rule_id
    return {
        "gross": gross,
        "tax_value": line.tax_value,
        "tax_rate": line.tax_rate,
        "tax_code": line.tax_code,
        "rule_name": names.rules.get(rule) if rule is not None else None,
    }
