"""Who a rule mails for its due dates, and claiming them so nobody is mailed twice.

A recipient is an order (``position_id`` 0: the order's address) or a ticket (its attendee's
address), per date of a series. Filters: the order's state among ``restrict_to_status``, a
ticket that is not canceled, of a listed product (unless ``all_products``), checked in or not
(``checked_in_status``: a successful entry scan on any list). An order qualifies when one of
its tickets on that date does. Recipients already in ``sendmail_records`` are left out in the
query; :func:`claim` then inserts their records with ``ON CONFLICT DO NOTHING`` and returns
only the rows it inserted, so of two schedulers at the same time each recipient goes to one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, and_, exists, false, func, or_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Checkin, Order, OrderPosition, SendMailRecord, SendMailRule

BATCH = 500  # recipients claimed per rule and run; the rest follow in the next runs


class Claimed(NamedTuple):
    record_id: int
    order_id: int
    position_id: int
    subevent_id: int


def status_filter(codes: Sequence[str], now: dt.datetime) -> ColumnElement[bool]:
    pending = Order.status == "n"
    conditions = {
        "p": Order.status == "p",
        "e": Order.status == "e",
        "c": Order.status == "c",
        "n__pending_approval": and_(pending, Order.require_approval.is_(True)),
        "n__not_pending_approval_and_not_valid_if_pending": and_(
            pending, Order.require_approval.is_(False), Order.valid_if_pending.is_(False)
        ),
        "n__valid_if_pending": and_(
            pending, Order.require_approval.is_(False), Order.valid_if_pending.is_(True)
        ),
        "n__pending_overdue": and_(pending, Order.require_approval.is_(False), Order.expires < now),
    }
    chosen = [conditions[c] for c in codes if c in conditions]
    return or_(*chosen) if chosen else false()


def _subevent_key() -> ColumnElement[int]:
    return func.coalesce(OrderPosition.subevent_id, 0)


def _positions(
    rule: SendMailRule,
    event_id: int,
    subevents: Sequence[int] | None,
    products: Sequence[int] | None,
    now: dt.datetime,
) -> Any:
    """Tickets that qualify, joined to their orders (no columns chosen yet)."""
    query = (
        select()
        .select_from(OrderPosition)
        .join(Order, Order.id == OrderPosition.order_id)
        .where(
            Order.event_id == event_id,
            OrderPosition.canceled.is_(False),
            status_filter(rule.restrict_to_status or (), now),
        )
    )
    if subevents is not None:
        query = query.where(OrderPosition.subevent_id.in_(subevents))
    if products is not None:
        query = query.where(OrderPosition.item_id.in_(products))
    if rule.checked_in_status:
        entered = exists().where(
            Checkin.position_id == OrderPosition.id,
            Checkin.successful.is_(True),
            Checkin.type == "entry",
        )
        query = query.where(entered if rule.checked_in_status == "checked_in" else ~entered)
    return query


def _not_sent(rule_id: int, position: ColumnElement[int] | int) -> ColumnElement[bool]:
    return ~exists().where(
        SendMailRecord.rule_id == rule_id,
        SendMailRecord.order_id == Order.id,
        SendMailRecord.position_id == position,
        SendMailRecord.subevent_id == _subevent_key(),
    )


async def order_candidates(
    session: AsyncSession,
    rule: SendMailRule,
    event_id: int,
    subevents: Sequence[int] | None,
    products: Sequence[int] | None,
    now: dt.datetime,
) -> list[tuple[int, int, int]]:
    """(order, 0, date) of orders not yet mailed by the rule for that date."""
    key = _subevent_key().label("date_key")  # DISTINCT orders by what it selects
    query = (
        _positions(rule, event_id, subevents, products, now)
        .add_columns(Order.id, key)
        .where(Order.email.is_not(None), Order.email != "", _not_sent(rule.id, 0))
        .distinct()
        .order_by(Order.id, key)
        .limit(BATCH)
    )
    return [(order_id, 0, key) for order_id, key in await session.execute(query)]


async def attendee_candidates(
    session: AsyncSession,
    rule: SendMailRule,
    event_id: int,
    subevents: Sequence[int] | None,
    products: Sequence[int] | None,
    now: dt.datetime,
    *,
    skip_order_address: bool,
) -> list[tuple[int, int, int]]:
    """(order, ticket, date) of tickets with an attendee address not yet mailed; with
    ``skip_order_address`` (``send_to`` both) tickets whose address is the order's are left
    to the order's mail."""
    query = (
        _positions(rule, event_id, subevents, products, now)
        .add_columns(Order.id, OrderPosition.id, _subevent_key())
        .where(
            OrderPosition.attendee_email.is_not(None),
            OrderPosition.attendee_email != "",
            _not_sent(rule.id, OrderPosition.id),
        )
        .order_by(OrderPosition.id)
        .limit(BATCH)
    )
    if skip_order_address:
        query = query.where(
            or_(
                Order.email.is_(None),
                func.lower(OrderPosition.attendee_email) != func.lower(Order.email),
            )
        )
    return [tuple(row) for row in await session.execute(query)]  # type: ignore[misc]


async def claim(
    session: AsyncSession, rule_id: int, keys: Sequence[tuple[int, int, int]], now: dt.datetime
) -> list[Claimed]:
    """Records for ``keys`` (order, position, date); returns those this transaction wrote."""
    if not keys:
        return []
    dialect = session.bind.dialect.name  # type: ignore[union-attr]
    module = postgresql if dialect == "postgresql" else sqlite
    stmt = (
        module.insert(SendMailRecord)
        .values(
            [
                {
                    "rule_id": rule_id,
                    "order_id": order_id,
                    "position_id": position_id,
                    "subevent_id": subevent_id,
                    "created": now,
                }
                for order_id, position_id, subevent_id in keys
            ]
        )
        .on_conflict_do_nothing()
        .returning(
            SendMailRecord.id,
            SendMailRecord.order_id,
            SendMailRecord.position_id,
            SendMailRecord.subevent_id,
        )
    )
    rows = [Claimed(*row) for row in await session.execute(stmt)]
    return sorted(rows, key=lambda c: (c.order_id, c.position_id, c.subevent_id))
