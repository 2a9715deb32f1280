"""The events' catalog change stamp, and ``If-Modified-Since`` on the catalog lists.

The lists of categories, items, questions, quotas, subevents and tax rules answer with
``Last-Modified`` and honour ``If-Modified-Since`` (as the reference does). Their stamp is
``events.catalog_modified``, moved forward in the same transaction as every write of those
resources: a listener on every ORM flush sees the written objects, so no write path can forget
it (Core statements that write those tables run next to an ORM write of the same event, which
bumps it). Sales do not move it: counts live in ``sales_counts``, not in the catalog rows.

HTTP dates have whole seconds, and two writes within one second, or transactions committing in
another order than they started, must never leave a client's copy looking current. So a bump
locks the event row (``FOR UPDATE``; SQLite writers are serialized anyway) and sets the stamp
to ``max(now, previous stamp's second + 1 s)``: every committed write moves the stamp to a later
second than any ``Last-Modified`` handed out before it. A burst of writes may push the stamp
ahead of the clock; ``Last-Modified`` then shows the clock, which only costs a 200.
"""

from __future__ import annotations

import datetime as dt
import functools
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any

from sqlalchemy import bindparam, event, func, or_, select, update
from sqlalchemy.orm import Session, UOWTransaction
from starlette.responses import Response

from admit.db import utcnow
from admit.kit.stamps.pagecache import Validator
from admit.models import (
    CheckinList,
    Event,
    EventMetaProperty,
    Item,
    ItemAddOn,
    ItemBundle,
    ItemCategory,
    ItemVariation,
    Question,
    QuestionOption,
    Quota,
    SubEvent,
    SubEventItem,
    SubEventItemVariation,
    TaxRule,
)

ONE_SECOND = dt.timedelta(seconds=1)

# Written model -> (attribute naming its owner, the owner's model; None: the attribute is the
# event id itself).
_OWNERS: dict[type[Any], tuple[str, type[Any] | None]] = {
    TaxRule: ("event_id", None),
    ItemCategory: ("event_id", None),
    Item: ("event_id", None),
    Question: ("event_id", None),
    SubEvent: ("event_id", None),
    Quota: ("event_id", None),
    # Not a catalog list of its own: its positions pages are kept under this stamp (a list's
    # products and settings decide which positions they show; ``orders/kept_pages.py``).
    CheckinList: ("event_id", None),
    ItemVariation: ("item_id", Item),
    ItemAddOn: ("base_item_id", Item),
    ItemBundle: ("base_item_id", Item),
    QuestionOption: ("question_id", Question),
    SubEventItem: ("subevent_id", SubEvent),
    SubEventItemVariation: ("subevent_id", SubEvent),
}

_events = Event.__table__
_LOCK_STAMPS = (
    select(_events.c.id, _events.c.catalog_modified)
    .where(_events.c.id.in_(bindparam("ids", expanding=True)))
    .order_by(_events.c.id)
    .with_for_update()
)
# ``last_modified`` is kept as it is: the event itself did not change.
_SET_STAMP = (
    update(_events)
    .where(_events.c.id == bindparam("event_id"))
    .values(catalog_modified=bindparam("stamp"), last_modified=_events.c.last_modified)
)
# The validator of the catalog lists' kept pages: the stamp itself.
CATALOG_PAGES = Validator(
    select(_events.c.catalog_modified).where(_events.c.id == bindparam("event_id"))
)


def event_pages(stamp: Any) -> Validator:
    """The validator of kept pages of an event's rows that carry a change stamp per row
    (``stamp``, e.g. ``Order.last_modified``, indexed with the event id first): the catalog
    stamp is unchanged (for what the rows show of the catalog), and neither a row was stamped
    nor one of the event's orders, check-ins or vouchers deleted (``events.rows_deleted``) at
    or after the page's bound. The newest stamp is read, not ``EXISTS (… >= :bound)``: a
    prepared statement's generic plan guesses that a third of the rows match a range on a
    parameter and scans them all (6 ms for 20,000 orders), where ``max`` reads one index
    entry."""
    bound = bindparam("bound")
    table = stamp.class_.__table__
    newest = select(func.max(stamp)).where(table.c.event_id == _events.c.id).scalar_subquery()
    return Validator(
        select(
            _events.c.catalog_modified,
            or_(_events.c.rows_deleted >= bound, newest >= bound),
        ).where(_events.c.id == bindparam("event_id")),
        probes=True,
    )


_ORGANIZER_EVENTS = select(_events.c.id).where(
    _events.c.organizer_id.in_(bindparam("ids", expanding=True))
)

_BUMPED = "admit.catalog_bumped"


def next_stamp(previous: dt.datetime | None, now: dt.datetime) -> dt.datetime:
    """The stamp after a write: later than ``now`` and in a later second than ``previous``."""
    if previous is None:
        return now
    return max(now, previous.replace(microsecond=0) + ONE_SECOND)


def _owners(session: Session) -> tuple[set[int], dict[type[Any], set[int]], set[int]]:
    """Event ids written, owner ids still to resolve (per owner model), organizer ids."""
    events: set[int] = set()
    owners: dict[type[Any], set[int]] = {}
    organizers: set[int] = set()
    for group, is_new in ((session.new, True), (session.dirty, False), (session.deleted, False)):
        for obj in group:
            kind = type(obj)
            scope = _OWNERS.get(kind)
            values = obj.__dict__
            if scope is None:
                if kind is Event and not is_new and values.get("id") is not None:
                    events.add(values["id"])  # its slug shows in the subevent lists
                elif kind is EventMetaProperty and values.get("organizer_id") is not None:
                    organizers.add(values["organizer_id"])  # defaults show in meta_data
                continue
            attribute, owner = scope
            value = values.get(attribute)
            if value is None:
                # Not loaded: found through the object's own row.
                if values.get("id") is not None:
                    owners.setdefault(kind, set()).add(values["id"])
            elif owner is None:
                events.add(value)
            else:
                owners.setdefault(owner, set()).add(value)
    return events, owners, organizers


def _resolve(conn: Any, owners: dict[type[Any], set[int]]) -> set[int]:
    found: set[int] = set()
    for model, ids in owners.items():
        attribute, owner = _OWNERS[model]
        if owner is None:  # an owner, or a written object holding the event id itself
            query = select(model.event_id).where(model.id.in_(ids))
        else:
            query = (
                select(owner.event_id)
                .join(model, getattr(model, attribute) == owner.id)
                .where(model.id.in_(ids))
            )
        found.update(conn.execute(query).scalars())
    return found


def bump(conn: Any, event_ids: set[int]) -> None:
    """Moves the stamps of ``event_ids`` forward, inside the caller's transaction."""
    if not event_ids:
        return
    rows = conn.execute(_LOCK_STAMPS, {"ids": sorted(event_ids)}).all()
    now = utcnow()
    params = [{"event_id": row[0], "stamp": next_stamp(_aware(row[1]), now)} for row in rows]
    if params:
        conn.execute(_SET_STAMP, params)


def _aware(value: dt.datetime | None) -> dt.datetime | None:
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=dt.UTC)  # SQLite hands back the stored UTC value naive


@event.listens_for(Session, "after_flush")
def _after_flush(session: Session, _flush: UOWTransaction) -> None:
    """Bumps the stamp of every event whose catalog this flush wrote (once a transaction)."""
    events, owners, organizers = _owners(session)
    if not (events or owners or organizers):
        return
    conn = session.connection()
    if owners:
        events |= _resolve(conn, owners)
    if organizers:
        events.update(conn.execute(_ORGANIZER_EVENTS, {"ids": sorted(organizers)}).scalars())
    transaction = session.get_transaction()
    seen = session.info.get(_BUMPED)
    if seen is None or seen[0] is not transaction:
        seen = (transaction, set())
        session.info[_BUMPED] = seen
    events -= seen[1]
    bump(conn, events)
    seen[1].update(events)


# -- HTTP ------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def http_date(value: dt.datetime) -> str:
    """``value`` as an HTTP date (kept per value: every catalog list answers its stamp's)."""
    return format_datetime(value.astimezone(dt.UTC).replace(microsecond=0), usegmt=True)


def parse_http_date(raw: str) -> dt.datetime | None:
    """An HTTP date, or None for anything else (such a header is to be ignored)."""
    try:
        parsed = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed


def last_modified(stamp: dt.datetime, now: dt.datetime | None = None) -> dt.datetime:
    """What ``Last-Modified`` shows: the stamp's second, never later than the clock."""
    now = now or utcnow()
    return min(stamp.replace(microsecond=0), now.replace(microsecond=0))


def not_modified(headers: Any, stamp: dt.datetime) -> bool:
    """Whether ``If-Modified-Since`` holds: no write after the client's copy. The header is
    ignored alongside ``If-None-Match`` (which lists do not carry), or when it is no date."""
    raw = headers.get("if-modified-since")
    if raw is None or "if-none-match" in headers:
        return False
    since = parse_http_date(raw)
    return since is not None and stamp.replace(microsecond=0) <= since


class ModifiedSinceList:
    """Mixin for a ``kit.resources.crud.Resource`` of an event's catalog: its list answers
    ``Last-Modified`` and ``If-Modified-Since`` from the event's stamp (no list query for a
    304). ``conditional_list`` opts out for representations that sales change."""

    def conditional_list(self, ctx: Any) -> bool:
        return True

    def page_validator(self, ctx: Any) -> tuple[Validator, dict[str, Any]] | None:
        """A page is kept while the catalog stamp stays (``kit/stamps/pagecache.py``)."""
        if not self.conditional_list(ctx):
            return None
        return CATALOG_PAGES, {"event_id": ctx.event.id}

    def snapshot_current(self, ctx: Any, stamps: tuple[Any, ...]) -> bool:
        # Every write of an event moves its catalog stamp: a snapshot with the stamp read
        # for the page is the event as it is.
        return stamps == (getattr(ctx.event, "catalog_modified", None),)

    async def handle_list(self, ctx: Any) -> Response:
        stamp = _aware(getattr(ctx.event, "catalog_modified", None))
        if stamp is None or not self.conditional_list(ctx):
            return await super().handle_list(ctx)  # type: ignore[misc]
        header = http_date(last_modified(stamp))
        if not_modified(ctx.request.headers, stamp):
            self.list_query(ctx)  # type: ignore[attr-defined]  # bad filters stay a 400
            return Response(status_code=304, headers={"Last-Modified": header})
        response: Response = await super().handle_list(ctx)  # type: ignore[misc]
        if response.status_code == 200:
            response.headers["Last-Modified"] = header
        return response
