"""Extension points of the order life cycle, so packages that react to orders (auto check-in,
later webhooks or mail) need not be imported by the order code.

Hooks are ``async (session, order, positions)`` callables run inside the order's transaction:
``order_placed_hooks`` right after an order was created, ``order_paid_hooks`` whenever an
order becomes paid (created paid, marked paid, approved free). They may write; an exception
fails the whole request. Register once at import time (``register`` ignores repeats).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Order, OrderPosition

OrderHook = Callable[[AsyncSession, Order, Sequence[OrderPosition]], Awaitable[None]]

order_placed_hooks: list[OrderHook] = []
order_paid_hooks: list[OrderHook] = []


def register(hooks: list[OrderHook], hook: OrderHook) -> None:
    if hook not in hooks:
        hooks.append(hook)


async def run(
    hooks: Sequence[OrderHook],
    session: AsyncSession,
    order: Order,
    positions: Sequence[OrderPosition],
) -> None:
    for hook in hooks:
        await hook(session, order, positions)
