"""What the shop's fast lanes (``cart_lane.py``, ``checkout_lane.py``) share: the request's
session and event, and the worker's kept copy of the catalog with what the shop reads of it
beyond the order lane's copy (``orders/catalog.py``).

A lane handler declines (None) whatever is not its plain case before anything is written:
the request then takes the shop's route, with every rule and message (``fastlane.py``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from starlette.requests import Request
from starlette.responses import Response

from admit.db import utcnow
from admit.kit.lanes.fastlane import LaneRequest
from admit.models import Event, Item
from admit.orders.catalog import Catalog, cache
from admit.shop import addons, catalog, dependencies
from admit.shop.cart_rows import cart_items
from admit.shop.checkout import required_questions
from admit.shop.limits import per_address


@dataclass
class Extras:
    """The catalog as the shop reads it, for one stamp of the copy: the products with their
    add-on categories and bundles (``cart_rows.cart_items``), those a cart cannot hold alone
    (bundles, add-on categories with a minimum: ``addons.count_problems`` without add-ons),
    and those with a question a buyer who answers nothing must answer (a required one shown
    without answers, ``dependencies.shown``)."""

    items: dict[int, Item]
    parts: frozenset[int]
    must_answer: frozenset[int]

    def plain(self, item_id: int) -> Item | None:
        """The product when a cart of it alone, without answers, is the lanes' case."""
        if item_id in self.parts or item_id in self.must_answer:
            return None
        return self.items.get(item_id)


_extras: dict[tuple[int, dt.datetime], Extras] = {}
MAX_KEPT = 256


async def extras_of(session: Any, event: Event, copy: Catalog) -> Extras | None:
    """The extras of ``copy``'s stamp (None when the catalog moved while they were read)."""
    key = (event.id, copy.stamp)
    found = _extras.get(key)
    if found is None:
        items = await cart_items(session, event, set(copy.items))
        asked = await required_questions(session, event, set(copy.items))
        stamp = await session.scalar(select(Event.catalog_modified).where(Event.id == event.id))
        if stamp != copy.stamp:
            return None
        found = Extras(
            items,
            frozenset(i.id for i in items.values() if i.bundles or addons.count_problems(i, [])),
            frozenset(i for i, questions in asked.items() if _must_answer(questions)),
        )
        if len(_extras) >= MAX_KEPT:
            _extras.clear()
        _extras[key] = found
    return found


def _must_answer(questions: list[Any]) -> bool:
    visible = dependencies.shown(questions, [])
    return any(q.required and q.id in visible for q in questions)


@dataclass
class Shop:
    """One lane request's shop: its request, read session, event (open now, a single event
    without a seating plan), the catalog copy and its extras."""

    http: Request
    session: Any
    event: Any  # ShopEvent: an Event to every rule that reads one
    copy: Catalog
    extras: Extras
    now: dt.datetime
    # The rows of the cart ``serve`` was asked to read with the event (``CART_COLUMNS``).
    cart: list[dict[str, Any]] | None = None

    async def pool(self) -> Any:
        return await self.session.info["fast"].pool()


Handle = Callable[[Shop], Awaitable[Response | None]]

# The event a shop URL names, with what says whether the kept copy is current: the event row
# is part of the stamped catalog (``kit/stamps/catalog.py``), so the copy's event stands for
# it as ``catalog.load_event`` would read it (``live`` and the organizer read here, each time).
_EVENT = (
    "SELECT e.id, e.catalog_modified, e.live, o.name AS organizer_name, "
    "o.slug AS organizer_slug FROM events e JOIN organizers o ON o.id = e.organizer_id "
    "WHERE o.slug = $1 AND e.slug = $2"
)


# The checkout's cart, read in the event's statement (one round trip less per checkout).
CART_COLUMNS = (
    "id",
    "item_id",
    "variation_id",
    "subevent_id",
    "price",
    "voucher_id",
    "addon_to_id",
    "is_bundled",
    "seat_id",
    "expires",
)
_EVENT_CART = (
    "SELECT e.id, e.catalog_modified, e.live, o.name AS organizer_name, "
    "o.slug AS organizer_slug, "
    + ", ".join(f"c.{name} AS c_{name}" for name in CART_COLUMNS)
    + " FROM events e JOIN organizers o ON o.id = e.organizer_id "
    "LEFT JOIN cart_positions c ON c.event_id = e.id AND c.cart_id = $3 "
    "WHERE o.slug = $1 AND e.slug = $2 ORDER BY c.id"
)


async def _event_and_cart(pool: Any, params: Any, cart_id: str) -> tuple[Any, list[Any]]:
    rows = await pool.fetch(_EVENT_CART, params["organizer"], params["event"], cart_id)
    cart = [{n: r[f"c_{n}"] for n in CART_COLUMNS} for r in rows if r["c_id"] is not None]
    return (rows[0] if rows else None), cart


@dataclass
class _Seen:
    """What ``CatalogCache.get`` compares its copy with."""

    id: int
    catalog_modified: dt.datetime | None


class ShopEvent:
    """The copy's event with its organizer's name and slug (as ``catalog.load_event`` sets
    them), without writing them onto the shared copy."""

    def __init__(self, event: Event, organizer_name: str, organizer_slug: str) -> None:
        self._event = event
        self.organizer_name = organizer_name
        self.organizer_slug = organizer_slug

    def __getattr__(self, name: str) -> Any:
        # Kept on first read (the copy's event does not change under a request): the rules
        # read the same settings many times a request.
        found = self.__dict__[name] = getattr(self._event, name)
        return found


class _ReadSession:
    """The request's read session, opened on first use: with the worker's copy current (the
    rush's every request) nothing reads through it, and opening and closing one cost the
    lanes as much as a statement. The cart's batched call asks only for the native pool and
    whether the session holds changes (none before it opens)."""

    def __init__(self, db: Any) -> None:
        self._db = db
        self._session: Any = None
        self.info = {"fast": db.fast}

    def _open(self) -> Any:
        if self._session is None:
            self._session = self._db.read_sessionmaker()
            self._session.info["fast"] = self._db.fast
        return self._session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._open(), name)

    @property
    def new(self) -> Any:
        return () if self._session is None else self._session.new

    @property
    def dirty(self) -> Any:
        return () if self._session is None else self._session.dirty

    @property
    def deleted(self) -> Any:
        return () if self._session is None else self._session.deleted

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


async def serve(
    request: LaneRequest, handle: Handle, cart_id: str | None = None
) -> Response | None:
    """Runs ``handle`` for a request of an open shop; None (the route) otherwise. The
    address's budget is counted here, once (``limits.py``). With ``cart_id``, that cart's
    rows come with the event (``Shop.cart``)."""
    if request.header(b"idempotency-key") is not None:
        return None
    scope = request.scope
    scope["path_params"] = request.params
    http = Request(scope)
    db = http.app.state.db
    if not db.fast.native:
        return None
    await per_address(http)
    session = _ReadSession(db)
    try:
        pool = await db.fast.pool()
        rows = None
        if cart_id is None:
            seen = await pool.fetchrow(_EVENT, request.params["organizer"], request.params["event"])
        else:
            seen, rows = await _event_and_cart(pool, request.params, cart_id)
        if seen is None or not seen["live"]:
            return None  # (the route's 404)
        copy = await cache.get(session, _Seen(seen["id"], seen["catalog_modified"]))  # type: ignore[arg-type]
        if copy is None:
            return None
        event = ShopEvent(copy.event, seen["organizer_name"], seen["organizer_slug"])
        now = utcnow()
        if (
            catalog.closed_reason(event, now) is not None  # type: ignore[arg-type]
            or event.has_subevents
            or event.seating_plan is not None
        ):
            return None
        extras = await extras_of(session, event, copy)  # type: ignore[arg-type]
        if extras is None:
            return None
        return await handle(Shop(http, session, event, copy, extras, now, rows))
    finally:
        await session.close()
