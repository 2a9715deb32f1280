"""Which tickets a list contains and who is inside, as SQL clauses shared by the list counts,
the status endpoint, the positions endpoints and auto check-in.

A ticket is on a list when it is not canceled, its order is paid (or pending and the list
includes pending orders, or the order is ``valid_if_pending``), its product is on the list
(or the list has all products) and, for a list of one date, it is for that date. The last
successful check-in of a ticket on a list is the latest by ``(datetime, id)``: a ticket is
inside when that one is an entry.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, exists, func, or_, select, true
from sqlalchemy.orm import aliased

from admit.models import Checkin, CheckinList, Order, OrderPosition, checkin_list_items


def order_valid(clist: CheckinList, *, ignore_status: bool = False) -> ColumnElement[bool]:
    if ignore_status:
        return true()
    pending = Order.status == "n"
    if not clist.include_pending:
        pending = and_(pending, Order.valid_if_pending.is_(True))
    return and_(OrderPosition.canceled.is_(False), or_(Order.status == "p", pending))


def on_list(clist: CheckinList) -> ColumnElement[bool]:
    """Product and date of the position match the list (the order's state aside)."""
    clauses: list[Any] = [OrderPosition.event_id == clist.event_id]
    if not clist.all_products:
        clauses.append(
            OrderPosition.item_id.in_(
                select(checkin_list_items.c.item_id).where(checkin_list_items.c.list_id == clist.id)
            )
        )
    if clist.subevent_id is not None:
        clauses.append(OrderPosition.subevent_id == clist.subevent_id)
    return and_(*clauses)


def valid_positions(clist: CheckinList, *, ignore_status: bool = False) -> Any:
    """``SELECT order_positions JOIN orders`` limited to the list's tickets."""
    return (
        select(OrderPosition)
        .join(Order, Order.id == OrderPosition.order_id)
        .where(on_list(clist), order_valid(clist, ignore_status=ignore_status))
    )


def checked_in(list_id: int) -> ColumnElement[bool]:
    """The position (``OrderPosition``) has a successful entry on the list."""
    return exists().where(
        Checkin.position_id == OrderPosition.id,
        Checkin.list_id == list_id,
        Checkin.successful.is_(True),
        Checkin.type == "entry",
    )


def last_checkin_time(list_id: int) -> Any:
    return (
        select(func.max(Checkin.datetime))
        .where(
            Checkin.position_id == OrderPosition.id,
            Checkin.list_id == list_id,
            Checkin.successful.is_(True),
        )
        .correlate(OrderPosition)
        .scalar_subquery()
    )


def latest_is_entry(list_id: int) -> ColumnElement[bool]:
    """``Checkin`` (the outer row) is a successful entry with no later successful check-in
    of its ticket on the list: the ticket is inside."""
    later = aliased(Checkin)
    newer = exists().where(
        later.position_id == Checkin.position_id,
        later.list_id == Checkin.list_id,
        later.successful.is_(True),
        or_(
            later.datetime > Checkin.datetime,
            and_(later.datetime == Checkin.datetime, later.id > Checkin.id),
        ),
    )
    return and_(
        Checkin.list_id == list_id,
        Checkin.successful.is_(True),
        Checkin.type == "entry",
        ~newer,
    )
