"""Extension points of the order life cycle, so packages that react to orders (auto check-in,
gift cards, memberships) need not be imported by the order code.

Hooks are ``async (session, order, positions)`` callables run inside the order's transaction:
``order_placed_hooks`` right after an order was created, ``order_paid_hooks`` whenever an
order becomes paid (created paid, marked paid, approved free). They may write through the
session; an exception fails the whole request. ``order`` and ``positions`` describe the rows
as written (at creation they are snapshots, not objects of the session: change rows through
the session, never through them). Register once at import time (``register`` ignores repeats).

A hook may also say when it certainly has nothing to do for a new order: ``idle``, a
predicate on the event, the order's products and the order row, answered from memory, and
``active_if``, a query (parameter ``event_id``) that finds a row whenever the hook may have
work where ``idle`` cannot tell (rows that are no part of the catalog copy the lane holds).
Order creation's fast lane writes without running hooks, so it takes an order only when every
hook that would run is idle for it or its ``active_if`` finds nothing when the order is
written; a hook registered with neither makes the lane leave every order to the general path,
which runs it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.transaction import before_commit
from admit.models import Event, Item, Order, OrderPosition

OrderHook = Callable[[AsyncSession, Order, Sequence[OrderPosition]], Awaitable[None]]
# (event, the order's products, the order's row as written) -> nothing to do for this order
Idle = Callable[[Event, Sequence[Item], Mapping[str, Any]], bool]


order_placed_hooks: list[OrderHook] = []
order_paid_hooks: list[OrderHook] = []
# Run when an order that required approval is approved (before the paid hooks of a free one).
order_approved_hooks: list[OrderHook] = []
# Run once before the commit of a transaction that canceled the order (or canceled its
# positions keeping a cancellation fee): :func:`canceled` records it, so the synchronous
# cancel paths need not await anything. ``positions`` is empty: the hook reads what it needs.
order_canceled_hooks: list[OrderHook] = []
# Run once before the commit of a transaction that changed what a live order holds (the change
# API, a position's PATCH or cancel): :func:`changed` records it. The hook compares what it
# cares about (the invoices: the lines) and acts only on a real difference.
order_changed_hooks: list[OrderHook] = []
_idle: dict[OrderHook, Idle | None] = {}
_active_if: dict[OrderHook, Any] = {}
# The ``active_if`` queries, in the order they were registered (the lane refers to them by
# their index here).
GUARDS: list[Any] = []


def register(
    hooks: list[OrderHook],
    hook: OrderHook,
    *,
    idle: Idle | None = None,
    active_if: Any = None,
) -> None:
    if hook not in hooks:
        hooks.append(hook)
    _idle[hook] = idle
    _active_if[hook] = active_if
    if active_if is not None and not any(g is active_if for g in GUARDS):
        GUARDS.append(active_if)


async def run(
    hooks: Sequence[OrderHook],
    session: AsyncSession,
    order: Order,
    positions: Sequence[OrderPosition],
) -> None:
    for hook in hooks:
        await hook(session, order, positions)


def canceled(session: AsyncSession, order: Order) -> None:
    """Records that ``order`` was canceled in this transaction; the
    ``order_canceled_hooks`` run for it (once) right before the commit."""
    if not order_canceled_hooks:
        return
    session.info.setdefault("canceled_orders", {})[order.id] = order
    before_commit(session, "order_canceled_hooks", _run_canceled)


async def _run_canceled(session: AsyncSession) -> None:
    orders: dict[int, Order] = session.info.pop("canceled_orders", {})
    for order in orders.values():
        for hook in order_canceled_hooks:
            await hook(session, order, ())


def changed(session: AsyncSession, order: Order, *, reissue_invoice: bool | None = None) -> None:
    """Records that what ``order`` holds may have changed in this transaction; the
    ``order_changed_hooks`` run for it (once) right before the commit. ``reissue_invoice``:
    what the caller asked for its invoice (the change API's parameter), None when it did not
    say (see :func:`reissue_invoice_asked`)."""
    if not order_changed_hooks:
        return
    session.info.setdefault("changed_orders", {})[order.id] = order
    if reissue_invoice is not None:
        session.info.setdefault("changed_orders_reissue", {})[order.id] = reissue_invoice
    before_commit(session, "order_changed_hooks", _run_changed)


async def _run_changed(session: AsyncSession) -> None:
    orders: dict[int, Order] = session.info.pop("changed_orders", {})
    for order in orders.values():
        for hook in order_changed_hooks:
            await hook(session, order, ())
    session.info.pop("changed_orders_reissue", None)


def reissue_invoice_asked(session: AsyncSession, order: Order) -> bool | None:
    """For an ``order_changed_hooks`` hook: whether the change asked for its invoice to be
    reissued (True/False), or None when it did not say."""
    return session.info.get("changed_orders_reissue", {}).get(order.id)


def for_new_order(order_row: Mapping[str, Any]) -> list[OrderHook]:
    """The hooks creating this order runs: placed, and paid when it is created paid."""
    paid = order_paid_hooks if order_row["status"] == "p" else []
    return [*order_placed_hooks, *paid]


def all_idle(event: Event, items: Sequence[Item], order_row: Mapping[str, Any]) -> bool:
    """Whether every hook creating this order would run is known to do nothing for it."""
    for hook in for_new_order(order_row):
        idle = _idle.get(hook)
        if idle is None or not idle(event, items, order_row):
            return False
    return True


def guards_for(
    event: Event, items: Sequence[Item], order_row: Mapping[str, Any]
) -> list[int] | None:
    """For the fast lane: the indexes (in :data:`GUARDS`) of the queries that must find
    nothing for the hooks of this order to have nothing to do; None when a hook may act."""
    needed: set[int] = set()
    for hook in for_new_order(order_row):
        idle = _idle.get(hook)
        if idle is not None and idle(event, items, order_row):
            continue
        guard = _active_if.get(hook)
        if guard is None:
            return None
        needed.add(next(i for i, g in enumerate(GUARDS) if g is guard))
    return sorted(needed)
