"""The dashboard's counted numbers kept per process while nothing they count changed.

Counting 20,000 orders, their tickets and check-ins scans the event's rows; a dashboard is
looked at again and again while little happens. Each worker keeps the last numbers per event
(and mode) with the bound they were counted at (``kit.stamps.page.page_generated``: on
PostgreSQL the start of the oldest running transaction, so a change committed later but
stamped earlier still lies after it). The copy is shown again only while one statement over
two indexes proves that no order of the event (its positions, payments and refunds move the
order's stamp by trigger) and no check-in changed at or after that bound, and the event's
deletion and catalog stamps (deleted orders or check-ins, changed check-in lists) are the
ones it was counted with; otherwise everything is counted again.
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import exists, or_, select

from admit.kit.http.context import EventContext
from admit.kit.stamps.page import page_generated
from admit.models import Checkin, Order

if TYPE_CHECKING:
    from admit.control.stats import Dashboard

LIMIT = 256  # events per process


@dataclass(frozen=True)
class _Entry:
    bound: dt.datetime
    stamps: tuple[Any, ...]
    board: Dashboard


_kept: OrderedDict[tuple[int, bool], _Entry] = OrderedDict()


def _key(ctx: EventContext) -> tuple[int, bool]:
    return (ctx.event.id, bool(ctx.event.testmode))


def _stamps(ctx: EventContext) -> tuple[Any, ...]:
    return (ctx.event.rows_deleted, ctx.event.catalog_modified)


async def bound(ctx: EventContext) -> dt.datetime:
    """Taken before counting: whatever commits from here on is stamped at or after it."""
    return await page_generated(ctx.session)


async def valid(ctx: EventContext) -> Dashboard | None:
    entry = _kept.get(_key(ctx))
    if entry is None or entry.stamps != _stamps(ctx):
        return None
    eid = ctx.event.id
    changed = await ctx.session.scalar(
        select(
            or_(
                exists().where(Order.event_id == eid, Order.last_modified >= entry.bound),
                exists().where(Checkin.event_id == eid, Checkin.last_modified >= entry.bound),
            )
        )
    )
    if changed:
        return None
    _kept.move_to_end(_key(ctx))
    return entry.board


def keep(ctx: EventContext, at: dt.datetime, board: Dashboard) -> None:
    _kept[_key(ctx)] = _Entry(at, _stamps(ctx), board)
    _kept.move_to_end(_key(ctx))
    while len(_kept) > LIMIT:
        _kept.popitem(last=False)


def forget() -> None:
    """Drops every kept copy (a benchmark measuring the counting itself)."""
    _kept.clear()
