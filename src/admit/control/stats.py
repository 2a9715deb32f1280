"""The dashboard's numbers, each an aggregate in SQL (no order is loaded as an object): a
handful of grouped statements whatever the number of orders, plus the quota counts of the
sales ledger (``quotas.availability``) and the check-in list counts on the API's own
conditions (``checkin.lists``), counted in the same scan as the tickets.

Orders of the other mode are left out: an event in test mode shows its test orders, a live
event its real ones, as the reference's dashboard does.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.sql.util import ClauseAdapter

from admit.checkin.lists import entered_joined, load_counts, on_list_joined
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
LISTS_AT_ONCE = 8  # check-in lists counted in the tickets' scan; more are counted apart
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
    """Tickets by order status and per product (a canceled order's tickets count as
    canceled; canceled tickets of live orders not at all), and each check-in list's tickets
    and checked-in tickets, in one scan of the event's positions and orders: a list's
    columns are the API's own conditions (``checkin.lists``) on an alias of that list."""
    lists = list(
        await ctx.session.execute(
            select(CheckinList.id, CheckinList.name)
            .where(CheckinList.event_id == ctx.event.id)
            .order_by(CheckinList.id)
        )
    )
    joined = [(list_id, CheckinList.__table__.alias(f"list_{n}"))
              for n, (list_id, _) in enumerate(lists[:LISTS_AT_ONCE])]  # fmt: skip
    ticket = and_(
        Order.testmode.is_(bool(ctx.event.testmode)),
        or_(OrderPosition.canceled.is_(False), Order.status == "c"),
    )
    columns: list[Any] = [OrderPosition.item_id, Order.status, func.count().filter(ticket)]
    query = select().select_from(OrderPosition).join(Order, Order.id == OrderPosition.order_id)
    for list_id, table in joined:
        adapt = ClauseAdapter(table).traverse
        on_list = adapt(on_list_joined())
        entered = and_(on_list, adapt(entered_joined([list_id])))
        columns += [func.count().filter(on_list), func.count().filter(entered)]
        query = query.join(table, table.c.id == list_id)
    query = query.add_columns(*columns).where(
        OrderPosition.event_id == ctx.event.id, Order.event_id == ctx.event.id
    )
    per_item: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(STATUSES, 0))
    per_list: dict[int, list[int]] = {list_id: [0, 0] for list_id, _ in joined}
    board.tickets = dict.fromkeys(STATUSES, 0)
    for item_id, status, n, *on_lists in await ctx.session.execute(
        query.group_by(OrderPosition.item_id, Order.status)
    ):
        per_item[item_id][status] += n
        board.tickets[status] += n
        for (list_id, _), tickets, entered in zip(joined, on_lists[::2], on_lists[1::2],
                                                  strict=True):  # fmt: skip
            per_list[list_id][0] += tickets
            per_list[list_id][1] += entered
    items = await ctx.session.execute(
        select(Item.id, Item.name)
        .where(Item.event_id == ctx.event.id)
        .order_by(Item.position, Item.id)
    )
    board.products = [
        {"id": item_id, "name": text_of(name), **per_item.get(item_id, dict.fromkeys(STATUSES, 0))}
        for item_id, name in items
    ]
    rest = [list_id for list_id, _ in lists[LISTS_AT_ONCE:]]
    counts = await load_counts(ctx, rest, {"position_count", "checkin_count"})
    for list_id in rest:
        per_list[list_id] = [counts.get("position_count", {}).get(list_id, 0),
                             counts.get("checkin_count", {}).get(list_id, 0)]  # fmt: skip
    board.lists = [
        {"id": list_id, "name": name, "tickets": per_list[list_id][0],
         "checked_in": per_list[list_id][1]}
        for list_id, name in lists
    ]  # fmt: skip


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
        await _entries(ctx, board)
        kept.keep(ctx, bound, board)
    board = replace(board, quotas=[])
    await quota_rows(ctx, board)
    return board
