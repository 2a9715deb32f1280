"""The dashboard's numbers, each an aggregate in SQL (no order is loaded as an object): a
handful of grouped statements whatever the number of orders, plus the quota counts of the
sales ledger (``quotas.availability``) and the check-in list counts of the API's list
endpoint (``checkin.lists.load_counts``).

Orders of the other mode are left out: an event in test mode shows its test orders, a live
event its real ones, as the reference's dashboard does.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select

from admit.checkin.lists import load_counts
from admit.control import kept
from admit.control.chart import Point, filled
from admit.control.render import text_of
from admit.kit.http.context import EventContext
from admit.models import (
    Checkin,
    CheckinList,
    Item,
    Order,
    OrderPosition,
    OrderRefund,
    Quota,
)
from admit.quotas import availability

STATUSES = ("n", "p", "e", "c")
DAY, HOUR = dt.timedelta(days=1), dt.timedelta(hours=1)


@dataclass
class Dashboard:
    orders: dict[str, int] = field(default_factory=dict)
    tickets: dict[str, int] = field(default_factory=dict)
    revenue: dict[str, Decimal] = field(default_factory=dict)
    products: list[dict[str, Any]] = field(default_factory=list)
    quotas: list[dict[str, Any]] = field(default_factory=list)
    lists: list[dict[str, Any]] = field(default_factory=list)
    sales: list[Point] = field(default_factory=list)
    checkins: list[Point] = field(default_factory=list)


def _bucket(ctx: EventContext, column: Any, hourly: bool) -> ColumnElement[Any]:
    """The UTC day (or hour) of ``column``: text on SQLite, the truncated moment on
    PostgreSQL (``date_trunc`` costs a fraction of formatting every row with ``to_char``)."""
    if ctx.request.app.state.db.is_sqlite:
        return func.strftime("%Y-%m-%d %H" if hourly else "%Y-%m-%d", column)
    return func.date_trunc("hour" if hourly else "day", func.timezone("UTC", column))


def _parse(value: str | dt.datetime, hourly: bool) -> dt.datetime:
    if isinstance(value, dt.datetime):  # PostgreSQL: the UTC moment, without its zone
        return value.replace(tzinfo=dt.UTC)
    return dt.datetime.strptime(value, "%Y-%m-%d %H" if hourly else "%Y-%m-%d").replace(
        tzinfo=dt.UTC
    )


def _ours(ctx: EventContext) -> list[ColumnElement[bool]]:
    return [Order.event_id == ctx.event.id, Order.testmode.is_(bool(ctx.event.testmode))]


async def _orders(ctx: EventContext, board: Dashboard) -> None:
    """Orders and their totals by status, and orders placed per day, in one scan."""
    day = _bucket(ctx, Order.datetime, hourly=False)
    query = select(Order.status, day, func.count(), func.coalesce(func.sum(Order.total), 0))
    board.orders = dict.fromkeys(STATUSES, 0)
    money: dict[str, Decimal] = defaultdict(Decimal)
    per_day: dict[dt.datetime, int] = defaultdict(int)
    for status, bucket, n, total in await ctx.session.execute(
        query.where(*_ours(ctx)).group_by(Order.status, day)
    ):
        board.orders[status] = board.orders.get(status, 0) + n
        money[status] += Decimal(total or 0)
        if status in ("n", "p"):
            per_day[_parse(bucket, False)] += n
    board.sales = filled(per_day, DAY, "%Y-%m-%d")
    refunded = await ctx.session.scalar(
        select(func.coalesce(func.sum(OrderRefund.amount), 0))
        .join(Order, Order.id == OrderRefund.order_id)
        .where(*_ours(ctx), OrderRefund.state == "done")
    )
    board.revenue = {
        "paid": money.get("p", Decimal(0)),
        "pending": money.get("n", Decimal(0)),
        "refunded": Decimal(refunded or 0),
    }


async def _tickets(ctx: EventContext, board: Dashboard) -> None:
    """Tickets by order status and per product, in one grouped statement (a canceled
    order's tickets count as canceled; canceled tickets of live orders not at all)."""
    query = (
        select(OrderPosition.item_id, Order.status, func.count())
        .join(Order, Order.id == OrderPosition.order_id)
        .where(*_ours(ctx), or_(OrderPosition.canceled.is_(False), Order.status == "c"))
        .group_by(OrderPosition.item_id, Order.status)
    )
    per_item: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(STATUSES, 0))
    board.tickets = dict.fromkeys(STATUSES, 0)
    for item_id, status, n in await ctx.session.execute(query):
        per_item[item_id][status] += n
        board.tickets[status] += n
    items = await ctx.session.execute(
        select(Item.id, Item.name)
        .where(Item.event_id == ctx.event.id)
        .order_by(Item.position, Item.id)
    )
    board.products = [
        {"id": item_id, "name": text_of(name), **per_item.get(item_id, dict.fromkeys(STATUSES, 0))}
        for item_id, name in items
    ]


async def quota_rows(ctx: EventContext, board: Dashboard) -> None:
    """Each quota with its ledger counts (also the quotas page)."""
    quotas = list(
        await ctx.session.scalars(
            select(Quota).where(Quota.event_id == ctx.event.id).order_by(Quota.id)
        )
    )
    numbers = await availability.count(ctx.session, quotas)
    for quota in quotas:
        n = numbers[quota.id]
        used = n.paid_orders + n.pending_orders
        board.quotas.append(
            {
                "id": quota.id,
                "name": quota.name,
                "size": quota.size,
                "paid": n.paid_orders,
                "pending": n.pending_orders,
                "carts": n.cart_positions,
                "used": used,
                "available": n.available_number,
                "closed": quota.closed,
            }
        )


async def _lists(ctx: EventContext, board: Dashboard) -> None:
    rows = list(
        await ctx.session.execute(
            select(CheckinList.id, CheckinList.name)
            .where(CheckinList.event_id == ctx.event.id)
            .order_by(CheckinList.id)
        )
    )
    counts = await load_counts(ctx, [r[0] for r in rows], {"position_count", "checkin_count"})
    board.lists = [
        {
            "id": list_id,
            "name": name,
            "tickets": counts["position_count"].get(list_id, 0) if counts else 0,
            "checked_in": counts["checkin_count"].get(list_id, 0) if counts else 0,
        }
        for list_id, name in rows
    ]


async def _entries(ctx: EventContext, board: Dashboard) -> None:
    """Entries per hour."""
    hour = _bucket(ctx, Checkin.datetime, hourly=True)
    entries = await ctx.session.execute(
        select(hour, func.count())
        .where(
            Checkin.event_id == ctx.event.id,
            Checkin.successful.is_(True),
            Checkin.type == "entry",
        )
        .group_by(hour)
    )
    board.checkins = filled({_parse(h, True): n for h, n in entries}, HOUR, "%m-%d %H:00")


async def dashboard(ctx: EventContext) -> Dashboard:
    """The numbers; those counted from orders and check-ins come from this process's kept
    copy while one indexed statement proves nothing they count changed (``kept.py``), the
    quotas always from the sales ledger (carts expire without any row changing)."""
    board = await kept.valid(ctx)
    if board is None:
        board = Dashboard()
        bound = await kept.bound(ctx)
        await _orders(ctx, board)
        await _tickets(ctx, board)
        await _lists(ctx, board)
        await _entries(ctx, board)
        kept.keep(ctx, bound, board)
    board = replace(board, quotas=[])
    await quota_rows(ctx, board)
    return board
