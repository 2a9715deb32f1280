"""The sales ledger: running totals (``sales_counts``) of what orders and carts take per product.

Why: counting positions makes availability cost grow with the tickets sold (and it runs under
the quota lock of every sale). The totals make it a handful of rows whatever the volume.

How the totals stay exact:

- carts: every insert and delete of cart rows adds or removes its unit here, in the same
  transaction (:func:`carts_added`, :func:`carts_removed`); expiry needs no write — what
  availability subtracts for expired-but-not-yet-purged carts is counted live (few rows, indexed);
- orders: anything that may change an order's positions or state first calls
  :func:`track_orders`, which remembers what the order counted for; right before the commit
  the difference to what it counts for now is applied (:func:`_settle`). So every way of
  changing an order — actions, cancelling a position, deleting a test order — is covered by
  one rule, and rolled-back work never touches the totals.

Updates go through an upsert in key order, so concurrent transactions never deadlock on them.
:func:`recount` / :func:`drift` / :func:`rebuild` derive the totals from scratch (tests compare
after every test; ``admit recount-sales`` repairs a database edited by hand).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Integer, bindparam, delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.transaction import before_commit
from admit.kit.lanes import hot_writes
from admit.models import CartPosition, Order, OrderPosition
from admit.models.quotas import SalesCount

# (item id, variation id or 0, subevent id or 0)
Key = tuple[int, int, int]
# (pending, paid, carts)
Totals = tuple[int, int, int]
COLUMNS = ("pending", "paid", "carts")


def key_of(item_id: int, variation_id: int | None, subevent_id: int | None) -> Key:
    return (item_id, variation_id or 0, subevent_id or 0)


def _rows(deltas: Mapping[Key, Totals]) -> list[dict[str, Any]]:
    return [
        {
            "item_id": k[0],
            "variation_id": k[1],
            "subevent_id": k[2],
            **dict(zip(COLUMNS, d, strict=True)),
        }
        for k, d in sorted(deltas.items())
        if any(d)
    ]


async def apply(session: AsyncSession, deltas: Mapping[Key, Totals]) -> None:
    """Adds the deltas to the totals (creating rows as needed), in key order."""
    rows = _rows(deltas)
    if not rows:
        return
    stmt = upsert_statement(session.bind.dialect.name)  # type: ignore[union-attr]
    for row in rows:  # one statement per key keeps the lock order; there are rarely many
        await session.execute(stmt, row)


_UPSERTS: dict[str, Any] = {}
_NAMES = ("item_id", "variation_id", "subevent_id", *COLUMNS)


async def _apply_last(session: AsyncSession, deltas: Mapping[Key, Totals]) -> None:
    """As :func:`apply`, with the transaction's last statements (``kit.lanes.hot_writes``):
    on PostgreSQL all keys in one upsert, their rows locked in key order, sent along with an
    invoice's number where the payment issues one."""
    rows = _rows(deltas)
    if not rows:
        return
    if session.get_bind().dialect.name != "postgresql":
        await apply(session, deltas)
        return
    params = {f"sc_{name}": [row[name] for row in rows] for name in _NAMES}
    await hot_writes.defer(session, _hot_upsert(), params)


@functools.cache
def _hot_upsert() -> Any:
    """Every key's deltas (arrays, one element per key) added in one statement, in key order."""
    given = (
        func.unnest(*(bindparam(f"sc_{name}", type_=ARRAY(Integer)) for name in _NAMES))
        .table_valued(*_NAMES)
        .render_derived(name="given")
    )
    key = (given.c.item_id, given.c.variation_id, given.c.subevent_id)
    base = postgresql.insert(SalesCount).from_select(
        list(_NAMES), select(*(given.c[name] for name in _NAMES)).order_by(*key)
    )
    return base.on_conflict_do_update(
        index_elements=["item_id", "variation_id", "subevent_id"],
        set_={c: getattr(SalesCount, c) + getattr(base.excluded, c) for c in COLUMNS},
    )


def upsert_statement(dialect: str) -> Any:
    """The add-to-totals statement, built once per dialect (building it costs more than
    running it)."""
    stmt = _UPSERTS.get(dialect)
    if stmt is None:
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        names = ("item_id", "variation_id", "subevent_id", *COLUMNS)
        base = insert(SalesCount).values({n: bindparam(n) for n in names})
        stmt = base.on_conflict_do_update(
            index_elements=["item_id", "variation_id", "subevent_id"],
            set_={c: getattr(SalesCount, c) + getattr(base.excluded, c) for c in COLUMNS},
        )
        _UPSERTS[dialect] = stmt
    return stmt


def defer(session: AsyncSession, deltas: Mapping[Key, Totals]) -> None:
    """Adds the deltas right before the commit instead of now (with the orders' own, one
    upsert per key): a totals row is locked from its upsert to the commit, and every sale of
    the product queues for it. Only for callers whose quota checks need not see these deltas
    in this transaction (a checkout taking over the units its cart already holds)."""
    pending: Counter[tuple] = session.info.setdefault("ledger_deferred", Counter())
    for key, totals in deltas.items():
        for column, n in zip(COLUMNS, totals, strict=True):
            pending[(key, column)] += n
    before_commit(session, "sales-ledger", _settle, hot_locks=True)


async def carts_added(session: AsyncSession, keys: Iterable[Key]) -> None:
    await apply(session, {k: (0, 0, n) for k, n in Counter(keys).items()})


async def carts_removed(session: AsyncSession, keys: Iterable[Key]) -> None:
    await apply(session, {k: (0, 0, -n) for k, n in Counter(keys).items()})


_POSITION_KEY = (OrderPosition.item_id, OrderPosition.variation_id, OrderPosition.subevent_id)


async def _position_totals(session: AsyncSession, *where: Any) -> Counter[tuple]:
    """What (the selected) live orders count for: {(key, status): positions}."""
    rows = await session.execute(
        select(*_POSITION_KEY, Order.status, func.count())
        .join(Order, Order.id == OrderPosition.order_id)
        .where(Order.status.in_(("n", "p")), OrderPosition.canceled.is_(False), *where)
        .group_by(*_POSITION_KEY, Order.status)
    )
    return Counter({(key_of(i, v, s), st): n for i, v, s, st, n in rows.all()})


async def _order_totals(session: AsyncSession, order_ids: Iterable[int]) -> Counter[tuple]:
    ids = sorted(set(order_ids))
    return await _position_totals(session, Order.id.in_(ids)) if ids else Counter()


async def track_orders(
    session: AsyncSession, order_ids: Iterable[int], *, new: bool = False
) -> None:
    """Call before changing these orders (``new``: just created, they counted for nothing)."""
    tracked: set[int] = session.info.setdefault("ledger_orders", set())
    fresh = [i for i in order_ids if i not in tracked]
    if not fresh:
        return
    before: Counter[tuple] = session.info.setdefault("ledger_before", Counter())
    if not new:
        before.update(await _order_totals(session, fresh))
    tracked.update(fresh)
    before_commit(session, "sales-ledger", _settle, hot_locks=True)  # a product's totals row


async def _settle(session: AsyncSession) -> None:
    ids: set[int] = session.info.pop("ledger_orders", set())
    before: Counter[tuple] = session.info.pop("ledger_before", Counter())
    deferred: Counter[tuple] = session.info.pop("ledger_deferred", Counter())
    await session.flush()
    after = await _order_totals(session, ids)  # read before any totals row is locked
    deltas: dict[Key, list[int]] = {}
    for (key, column), n in deferred.items():
        deltas.setdefault(key, [0, 0, 0])[COLUMNS.index(column)] += n
    for (key, status), n in (after - before).items():
        deltas.setdefault(key, [0, 0, 0])[0 if status == "n" else 1] += n
    for (key, status), n in (before - after).items():
        deltas.setdefault(key, [0, 0, 0])[0 if status == "n" else 1] -= n
    await _apply_last(session, {k: (d[0], d[1], d[2]) for k, d in deltas.items()})


async def recount(session: AsyncSession) -> dict[Key, Totals]:
    """The totals derived from the positions and cart rows themselves."""
    totals: dict[Key, list[int]] = {}
    for (key, status), n in (await _position_totals(session)).items():
        totals.setdefault(key, [0, 0, 0])[0 if status == "n" else 1] += n
    carts = await session.execute(
        select(
            CartPosition.item_id, CartPosition.variation_id, CartPosition.subevent_id, func.count()
        ).group_by(CartPosition.item_id, CartPosition.variation_id, CartPosition.subevent_id)
    )
    for item, variation, subevent, n in carts.all():
        totals.setdefault(key_of(item, variation, subevent), [0, 0, 0])[2] += n
    return {k: (v[0], v[1], v[2]) for k, v in totals.items()}


async def stored(session: AsyncSession) -> dict[Key, Totals]:
    rows = await session.execute(select(SalesCount))
    return {
        (r.item_id, r.variation_id, r.subevent_id): (r.pending, r.paid, r.carts)
        for r in rows.scalars().all()
        if r.pending or r.paid or r.carts
    }


async def drift(session: AsyncSession) -> dict[Key, tuple[Totals, Totals]]:
    """Keys whose stored totals differ from a recount: {key: (stored, recounted)}."""
    have, want = await stored(session), await recount(session)
    zero = (0, 0, 0)
    return {
        k: (have.get(k, zero), want.get(k, zero))
        for k in set(have) | set(want)
        if have.get(k, zero) != want.get(k, zero)
    }


async def rebuild(session: AsyncSession) -> int:
    """Replaces every total with a recount (for a database edited outside the API)."""
    await session.execute(delete(SalesCount))
    fresh = await recount(session)
    for (item, variation, subevent), totals in sorted(fresh.items()):
        session.add(
            SalesCount(
                item_id=item,
                variation_id=variation,
                subevent_id=subevent,
                **dict(zip(COLUMNS, totals, strict=True)),
            )
        )
    await session.flush()
    return len(fresh)
