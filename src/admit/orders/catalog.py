"""The fast lane's copy of an event's catalog: what order validation and pricing read, kept per
worker as of the event's catalog stamp.

Validating and pricing an order reads the event, its products with variations, tax rules,
questions, dates and discounts; read per request, that costs more than writing the order. The
lane keeps them per event, labelled with the event's ``catalog_modified`` stamp as read
*before* the rest (``kit/stamps/catalog.py``: every write of the event or its catalog moves the
stamp in the same transaction). Discounts move no stamp, so they carry a fingerprint of their
rows (:data:`DISCOUNT_PRINT`) instead. The database call that writes a lane order compares
both with the database's current values and declines on any difference (the request then takes
the general path, and the copy is read again), so an order is never validated against a
catalog older than the one the general path would have read.

The copy holds ORM objects loaded once and never changed (validation only reads them); dates
are added as requests name them (they are part of the stamped catalog too).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.catalog.discounts.engine import DiscountRule
from admit.catalog.questions.answers import QuestionInfo, load_questions, valid_ids
from admit.models import Event, Item, Question, SubEvent, TaxRule
from admit.orders.drafts import Refs, load_subevents
from admit.orders.pricing import load_discounts, load_tax_rules
from admit.orders.schemas import PositionIn

# md5 of the event's discounts and their product limits, as text; the lane's database call
# computes the same expression (``{event}`` is the event id's placeholder there).
DISCOUNT_PRINT = """md5(
    coalesce((SELECT string_agg(d::text, ';' ORDER BY d.id) FROM discounts d
              WHERE d.event_id = {event}), '')
    || '|' || coalesce((SELECT string_agg(c.discount_id || ':' || c.item_id, ';'
                        ORDER BY c.discount_id, c.item_id)
              FROM discount_condition_items c JOIN discounts d ON d.id = c.discount_id
              WHERE d.event_id = {event}), '')
    || '|' || coalesce((SELECT string_agg(b.discount_id || ':' || b.item_id, ';'
                        ORDER BY b.discount_id, b.item_id)
              FROM discount_benefit_items b JOIN discounts d ON d.id = b.discount_id
              WHERE d.event_id = {event}), ''))"""

_PRINT_SQL = f"SELECT {DISCOUNT_PRINT.format(event='$1')}"
# What :data:`DISCOUNT_PRINT` gives for an event without discounts.
NO_DISCOUNTS = hashlib.md5(b"||").hexdigest()
MAX_EVENTS = 256  # copies kept per worker (the least recently used goes first)

_EVENT = select(Event).where(Event.id == bindparam("event_id"))
_ITEMS = (
    select(Item)
    .where(Item.event_id == bindparam("event_id"))
    .options(selectinload(Item.variations))
)
_QUESTION_IDS = select(Question.id).where(Question.event_id == bindparam("event_id"))


@dataclass
class Catalog:
    stamp: dt.datetime
    event: Event
    items: dict[int, Item]
    rules: dict[int, TaxRule]
    questions: dict[int, QuestionInfo]
    discounts: list[DiscountRule]
    discount_print: str
    subevents: dict[int, SubEvent] = field(default_factory=dict)

    def refs(self) -> Refs:
        """What ``drafts.check_positions`` reads. No seats (the lane takes no seated sale)
        and no taken secrets: the lane's database call checks those itself."""
        return Refs(items=self.items, subevents=self.subevents, questions=self.questions)


async def _load(session: AsyncSession, event_id: int) -> Catalog | None:
    params = {"event_id": event_id}
    event = (await session.execute(_EVENT, params)).scalar_one_or_none()
    if event is None:
        return None
    items = {i.id: i for i in await session.scalars(_ITEMS, params)}
    rules = await load_tax_rules(session, event_id)
    question_ids = list(await session.scalars(_QUESTION_IDS, params))
    questions = await load_questions(session, event_id, question_ids)
    discounts = await load_discounts(session, event_id)
    # On a native connection, as the lane's database call computes it.
    pool = await session.info["fast"].pool()
    fingerprint = await pool.fetchval(_PRINT_SQL, event_id)
    return Catalog(
        stamp=event.catalog_modified,
        event=event,
        items=items,
        rules=rules,
        questions=questions,
        discounts=discounts,
        discount_print=fingerprint,
    )


class CatalogCache:
    """The copies of one worker, by event id."""

    def __init__(self) -> None:
        self._copies: OrderedDict[int, Catalog] = OrderedDict()
        self._loading: dict[int, asyncio.Future[Catalog | None]] = {}

    async def get(self, session: AsyncSession, event: Event) -> Catalog | None:
        """The copy for ``event`` (a snapshot naming at least the stamp it has seen): read
        again when the snapshot has seen a newer stamp than the copy."""
        copy = self._copies.get(event.id)
        if copy is not None and not _newer(event.catalog_modified, copy.stamp):
            self._copies.move_to_end(event.id)
            return copy
        pending = self._loading.get(event.id)
        if pending is not None:  # another request is reading it: share its result
            return await asyncio.shield(pending)
        future: asyncio.Future[Catalog | None] = asyncio.get_running_loop().create_future()
        self._loading[event.id] = future
        try:
            copy = await _load(session, event.id)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a waiter re-raises it, nobody else must
            raise
        finally:
            del self._loading[event.id]
        future.set_result(copy)
        if copy is not None:
            self._copies[event.id] = copy
            self._copies.move_to_end(event.id)
            while len(self._copies) > MAX_EVENTS:
                self._copies.popitem(last=False)
        return copy

    def forget(self, event_id: int, stamp: dt.datetime) -> None:
        """Drops the copy of that stamp (the database has moved on)."""
        copy = self._copies.get(event_id)
        if copy is not None and copy.stamp == stamp:
            del self._copies[event_id]

    async def subevents(
        self, session: AsyncSession, copy: Catalog, positions: list[PositionIn]
    ) -> None:
        """Adds the dates the positions name that the copy does not hold yet."""
        wanted = valid_ids(p.subevent for p in positions if p.subevent is not None)
        missing = sorted(wanted - copy.subevents.keys())
        if missing:
            copy.subevents.update(await load_subevents(session, copy.event.id, missing))


def _newer(seen: Any, held: dt.datetime) -> bool:
    return seen is not None and seen > held


cache = CatalogCache()
