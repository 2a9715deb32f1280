"""A transaction's writes to rows every concurrent writer of their kind needs, sent together.

Why: a product's sales totals and an invoice number's counter are rows that each payment of
the product (or each invoice of the sequence) updates; the update holds the row's lock until
the commit, so concurrent transactions queue there, and whatever happens between the update
and the commit is time each of them waits. Under load each round trip in that window also
waits a turn of the event loop behind other requests. A domain that writes such a row hands
the write here (:func:`defer`) instead of running it. The last statement of the transaction
that must see its result (an invoice's, see ``invoices/writing``) takes the deferred writes
along as data-modifying CTEs (:func:`fetch_with`), so both locks are taken in one round trip;
whatever is still deferred when the before-commit work is done runs in one statement
(:func:`flush`, called by ``kit.http.transaction``) right before the commit.

Lock order: PostgreSQL runs a CTE that the main query does not read after the main query,
so in a combined statement the statement's own rows (the counter) are locked before the
deferred ones (the totals), as when the counter is taken earlier in the transaction (a
cancellation's number) and the totals right before the commit. A statement that may find its
own row missing and then run again must make sure of the row first (``invoices/writing``
does), or its second run would lock them the other way round. Deferred writes must not depend
on each other's results.

Other dialects (SQLite, which serialises writers anyway) run the write at once.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import literal_column, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql import Executable

from admit.kit.lanes import in_transaction

_SLOT = "hot_writes"


async def defer(session: AsyncSession, write: Any, params: Mapping[str, Any]) -> None:
    """Runs ``write`` (an INSERT or UPDATE built once per process, its parameters named apart
    from every other hot write's and statement's) with the transaction's last statements."""
    if session.get_bind().dialect.name != "postgresql":
        await session.execute(write, dict(params))
        return
    if any(pending_write is write for pending_write, _ in session.info.get(_SLOT, ())):
        await flush(session)  # the same write again: its values would share names
    session.info.setdefault(_SLOT, []).append((write, dict(params)))


def pending(session: AsyncSession) -> bool:
    return bool(session.info.get(_SLOT))


def discard(session: AsyncSession) -> None:
    """Forgets the deferred writes (the transaction is being rolled back)."""
    session.info.pop(_SLOT, None)


async def fetch_with(
    session: AsyncSession, statement: Any, params: Mapping[str, Any]
) -> Sequence[Mapping[str, Any]]:
    """The rows of ``statement`` (a SELECT built once per process), run in one statement
    together with the deferred writes, which are then done."""
    deferred: list[tuple[Any, dict[str, Any]]] = session.info.pop(_SLOT, [])
    if not deferred:
        return await in_transaction.fetch(session, statement, params)
    combined = _combined(statement, tuple(write for write, _ in deferred))
    merged = dict(params)
    for _write, values in deferred:
        merged.update(values)
    return await in_transaction.fetch(session, combined, merged)


async def flush(session: AsyncSession) -> None:
    """Runs whatever is still deferred, in one statement."""
    if pending(session):
        await fetch_with(session, _NOTHING, {})


_NOTHING: Executable = select(literal_column("1").label("done"))


@functools.cache
def _combined(statement: Any, writes: tuple[Any, ...]) -> Any:
    """``statement`` with each write as a CTE, cached per combination (the same statement
    object for the same writes, so it is compiled and prepared once)."""
    combined = statement
    for index, write in enumerate(writes):
        combined = combined.add_cte(write.cte(f"hot_{index}"))
    return combined
