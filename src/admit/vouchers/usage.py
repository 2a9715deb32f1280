"""Keeping ``redeemed`` and ``budget_used`` of vouchers in step with the orders using them.

Order creation counts its own uses (:func:`record`, on vouchers it holds locked). Every other
change of an order (canceled, expired, reactivated, a position canceled, a test order deleted)
recounts the vouchers it uses from the live positions (:func:`sync`): the counters can never
drift, whatever path changed the order. An order coming back to life needs its vouchers'
usages again (:func:`reclaim`).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable
from typing import Any

from sqlalchemy import and_, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.errors import APIError
from admit.models import Order, OrderPosition, Voucher
from admit.vouchers.redeem import ZERO, Use, carts_holding, lock_ids


def record(uses: Iterable[Use | None]) -> None:
    """An order was written with these uses: count them on the (locked) vouchers."""
    for use in uses:
        if use is None:
            continue
        use.voucher.redeemed += 1
        use.voucher.budget_used = (use.voucher.budget_used or ZERO) + use.budget_use


def _live(voucher_col: Any) -> Any:
    return and_(
        OrderPosition.voucher_id == voucher_col,
        OrderPosition.canceled.is_(False),
        Order.status.in_(("n", "p")),
    )


async def sync(session: AsyncSession, voucher_ids: Iterable[int | None]) -> None:
    """Recounts ``redeemed`` and ``budget_used`` of the vouchers from the live positions.

    Flushes first, locks the vouchers (after the order lock the caller holds), then counts in
    a statement that starts after the lock, so a concurrent sale is either fully counted or
    not yet visible and still to increment.
    """
    ids = sorted({i for i in voucher_ids if i is not None})
    if not ids:
        return
    await session.flush()
    await lock_ids(session, ids)
    redeemed = (
        select(func.count())
        .select_from(OrderPosition)
        .join(Order, Order.id == OrderPosition.order_id)
        .where(_live(Voucher.id))
        .correlate(Voucher)
        .scalar_subquery()
    )
    budget = (
        select(func.coalesce(func.sum(OrderPosition.voucher_budget_use), 0))
        .join(Order, Order.id == OrderPosition.order_id)
        .where(_live(Voucher.id))
        .correlate(Voucher)
        .scalar_subquery()
    )
    await session.execute(
        update(Voucher)
        .where(Voucher.id.in_(ids))
        .values(redeemed=redeemed, budget_used=budget)
        .execution_options(synchronize_session=False)
    )


async def sync_order(session: AsyncSession, order: Order) -> None:
    """After any change of an order's state or positions (positions must be loaded)."""
    await sync(session, [p.voucher_id for p in order.positions])


async def reclaim(session: AsyncSession, order: Order, force: bool = False) -> None:
    """An order coming back to life (reactivated, paid or extended after it lapsed) uses its
    vouchers again: 400 when one has been used up meanwhile (not checked with ``force``).
    Locks the vouchers before the caller locks quotas."""
    live = [p for p in order.positions if not p.canceled and p.voucher_id is not None]
    if not live:
        return
    vouchers = {v.id: v for v in await lock_ids(session, {p.voucher_id for p in live})}  # type: ignore[misc]
    if force:
        return
    in_carts = await carts_holding(session, vouchers, _now())
    wanted = Counter(p.voucher_id for p in live)
    for voucher_id, count in sorted(wanted.items()):  # type: ignore[type-var]
        voucher = vouchers.get(voucher_id)  # type: ignore[arg-type]
        if voucher is None:
            continue  # deleted meanwhile: nothing left to count against
        left = voucher.max_usages - voucher.redeemed - in_carts.get(voucher.id, 0)
        if count > left:
            raise APIError(
                400,
                f'The voucher "{voucher.code}" has already been used the maximum number of times.',
            )


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
