"""Who holds a seat right now, derived from the rows that point at it (never a stored flag).

A seat is held by an order position of a pending or paid order that is not canceled, by a cart
position that has not expired, or by a voucher that reserves it. Canceling or expiring the order,
or the cart expiring, frees the seat at once with nothing to update. Vouchers live in another
package, which tells this one how to find the seats they hold with
:func:`register_voucher_holds`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, literal, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import CartPosition, Order, OrderPosition, Seat

ACTIVE_ORDER_STATES = ("n", "p")

# ``held(now)``: a SELECT of (seat id, voucher id) for every voucher reserving a seat at ``now``.
VoucherHeld = Callable[[dt.datetime], Select[Any]]
# ``render(session, voucher ids)``: the vouchers as the API shows them, by id (for ``expand``).
VoucherRender = Callable[[AsyncSession, Sequence[int]], Awaitable[dict[int, dict[str, Any]]]]


@dataclass(frozen=True)
class VoucherHolds:
    held: VoucherHeld
    render: VoucherRender | None = None


_vouchers: list[VoucherHolds] = []


def register_voucher_holds(held: VoucherHeld, render: VoucherRender | None = None) -> None:
    """Called once by the vouchers package; later calls replace the earlier registration."""
    _vouchers[:] = [VoucherHolds(held, render)]


def voucher_renderer() -> VoucherRender | None:
    return _vouchers[0].render if _vouchers else None


@dataclass
class Holds:
    """The ids of what holds one seat (each None when nothing of that kind does)."""

    orderposition: int | None = None
    cartposition: int | None = None
    voucher: int | None = None

    def taken(self, own_voucher: int | None = None) -> bool:
        """Held by someone, not counting the voucher the buyer redeems for this very seat."""
        voucher = self.voucher is not None and self.voucher != own_voucher
        return self.orderposition is not None or self.cartposition is not None or voucher


def _order_holds(now: dt.datetime) -> Select[Any]:
    return (
        select(OrderPosition.seat_id.label("seat_id"), OrderPosition.id.label("holder"))
        .join(Order, Order.id == OrderPosition.order_id)
        .where(
            OrderPosition.seat_id.is_not(None),
            OrderPosition.canceled.is_(False),
            Order.status.in_(ACTIVE_ORDER_STATES),
        )
    )


def _cart_holds(now: dt.datetime) -> Select[Any]:
    return select(CartPosition.seat_id.label("seat_id"), CartPosition.id.label("holder")).where(
        CartPosition.seat_id.is_not(None), CartPosition.expires >= now
    )


def _voucher_holds(now: dt.datetime) -> Select[Any] | None:
    if not _vouchers:
        return None
    sub = _vouchers[0].held(now).subquery()
    seat_col, holder_col = list(sub.c)[:2]
    return select(seat_col.label("seat_id"), holder_col.label("holder")).where(
        seat_col.is_not(None)
    )


CHUNK = 2000  # seat ids per query: three IN lists of this size stay far below bind limits


async def holds(
    session: AsyncSession, seat_ids: Iterable[int], now: dt.datetime
) -> dict[int, Holds]:
    """What holds each of ``seat_ids`` now (seats held by nothing are absent)."""
    ids = sorted(set(seat_ids))
    found: dict[int, Holds] = {}
    for start in range(0, len(ids), CHUNK):
        rows = (await session.execute(_holds_query(ids[start : start + CHUNK], now))).all()
        for seat_id, holder, kind in sorted(rows, key=lambda r: (r[0], r[1])):
            entry = found.setdefault(seat_id, Holds())
            if getattr(entry, kind) is None:
                setattr(entry, kind, holder)
    return found


def _holds_query(ids: list[int], now: dt.datetime) -> Any:
    voucher = _voucher_holds(now)
    parts: list[tuple[str, Select[Any]]] = [
        ("orderposition", _order_holds(now).where(OrderPosition.seat_id.in_(ids))),
        ("cartposition", _cart_holds(now).where(CartPosition.seat_id.in_(ids))),
    ]
    if voucher is not None:
        sub = voucher.subquery()
        parts.append(("voucher", select(sub.c.seat_id, sub.c.holder).where(sub.c.seat_id.in_(ids))))
    return union_all(*(query.add_columns(literal(kind).label("kind")) for kind, query in parts))


def available(now: dt.datetime, event_id: int) -> ColumnElement[bool]:
    """Seats of ``event_id`` not blocked and held by nothing (for ``?is_available=``).

    Each kind of holder is one uncorrelated subquery over the event's rows (``NOT IN`` a
    hashed set), so filtering a plan of many thousand seats reads every holder table once
    instead of probing it once per seat.
    """
    orders = _order_holds(now).where(OrderPosition.event_id == event_id).subquery()
    carts = _cart_holds(now).where(CartPosition.event_id == event_id).subquery()
    clauses: list[ColumnElement[bool]] = [
        Seat.blocked.is_(False),
        Seat.id.not_in(select(orders.c.seat_id)),
        Seat.id.not_in(select(carts.c.seat_id)),
    ]
    voucher = _voucher_holds(now)
    if voucher is not None:
        clauses.append(Seat.id.not_in(select(voucher.subquery().c.seat_id)))
    return and_(*clauses)
