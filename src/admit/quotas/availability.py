"""How many of a quota are left, and the guarded check every sale goes through.

A sale (cart position, order) calls :func:`reserve` inside its transaction before writing its
positions: it finds the quotas of every wanted product, locks them in id order (PostgreSQL
``SELECT … FOR UPDATE``; on SQLite the request's ``BEGIN IMMEDIATE`` already serialises
writers), recounts what is taken and refuses when any quota would go below zero. Because the
lock is held until commit and the count runs after it was taken, two concurrent sales can never
both take the last ticket, whatever the number of API processes.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import Select, and_, bindparam, func, or_, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.kit.http.errors import APIError, busy_error
from admit.models import CartPosition, Quota, quota_items, quota_variations
from admit.models.quotas import SalesCount

# (item id, variation id or None, subevent id or None)
ProductKey = tuple[int, int | None, int | None]

# Extra counts that reduce a quota, registered by packages that own them (blocking vouchers,
# exited tickets): called with the quota ids, returning {quota id: number}.
Counter = Callable[[AsyncSession, list[Quota], dt.datetime], Awaitable[dict[int, int]]]
blocking_counters: dict[str, Counter] = {}
# Informational counts (e.g. the waiting list), reported but not subtracted.
informational_counters: dict[str, Counter] = {}


@dataclass
class Availability:
    available: bool
    available_number: int | None
    total_size: int | None
    pending_orders: int = 0
    paid_orders: int = 0
    exited_orders: int = 0
    cart_positions: int = 0
    blocking_vouchers: int = 0
    waiting_list: int = 0

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


class QuotaExceeded(Exception):
    def __init__(self, quota: Quota, available: int) -> None:
        super().__init__(quota.name)
        self.quota = quota
        self.available = available

    @property
    def message(self) -> str:
        return sold_out_message(self.quota.name, self.available)


def sold_out_message(quota_name: str, available: int) -> str:
    if available <= 0:
        return f'There are no more tickets available in the quota "{quota_name}".'
    return f'Only {available} tickets are left in the quota "{quota_name}", fewer than requested.'


def quota_busy() -> APIError:
    return APIError(
        409, "The quota is busy right now. Please try again.", headers={"Retry-After": "1"}
    )


class NoQuota(Exception):
    """The product is not part of any quota for this date: it cannot be sold."""


def _position_matches(quota: Quota, item_col, variation_col, subevent_col):  # noqa: ANN001
    in_items = item_col.in_(select(quota_items.c.item_id).where(quota_items.c.quota_id == quota.id))
    in_variations = variation_col.in_(
        select(quota_variations.c.variation_id).where(quota_variations.c.quota_id == quota.id)
    )
    subevent = (
        subevent_col.is_(None) if quota.subevent_id is None else subevent_col == quota.subevent_id
    )
    return and_(in_items, or_(variation_col.is_(None), in_variations), subevent)


# Built once: constructing and keying a statement of this shape costs more CPU than running
# it. ``subevent_id`` is 0 for "no date", as in the ledger.
_QUOTA_ITEMS = select(quota_items.c.item_id).where(quota_items.c.quota_id == bindparam("quota_id"))
_QUOTA_VARIATIONS = select(quota_variations.c.variation_id).where(
    quota_variations.c.quota_id == bindparam("quota_id")
)
_EXPIRED_CARTS = (
    select(func.count())
    .select_from(CartPosition)
    .where(
        CartPosition.expires < bindparam("now"),
        CartPosition.item_id.in_(_QUOTA_ITEMS),
        or_(CartPosition.variation_id.is_(None), CartPosition.variation_id.in_(_QUOTA_VARIATIONS)),
        func.coalesce(CartPosition.subevent_id, 0) == bindparam("subevent_id"),
    )
    .scalar_subquery()
)
TAKEN = select(
    func.coalesce(func.sum(SalesCount.pending), 0),
    func.coalesce(func.sum(SalesCount.paid), 0),
    func.coalesce(func.sum(SalesCount.carts), 0),
    _EXPIRED_CARTS,
).where(
    SalesCount.item_id.in_(_QUOTA_ITEMS),
    or_(SalesCount.variation_id == 0, SalesCount.variation_id.in_(_QUOTA_VARIATIONS)),
    SalesCount.subevent_id == bindparam("subevent_id"),
)


async def _taken(session: AsyncSession, quota: Quota, now: dt.datetime) -> tuple[int, int, int]:
    """Pending, paid and cart units from the ledger, less carts expired but not yet purged.

    One statement whose cost does not grow with the tickets sold: a few ledger rows plus an
    index range over the (few) expired cart rows still waiting for the purge job.
    """
    params = {"quota_id": quota.id, "subevent_id": quota.subevent_id or 0, "now": now}
    row = (await session.execute(TAKEN, params)).one()
    pending, paid, carts, stale = (int(v or 0) for v in row)
    return pending, paid, carts - stale


async def count(
    session: AsyncSession,
    quotas: Iterable[Quota],
    now: dt.datetime | None = None,
    *,
    informational: bool = True,
) -> dict[int, Availability]:
    """Availability of each quota, counted from the database as it is now.

    ``informational=False`` skips the counts that do not change availability (the waiting
    list): a sale's check under the quota lock needs only what takes from the quota.
    """
    now = now or utcnow()
    quotas = list(quotas)
    result: dict[int, Availability] = {}
    extra: dict[str, dict[int, int]] = {}
    counters = {**blocking_counters, **(informational_counters if informational else {})}
    for name, counter in counters.items():
        extra[name] = await counter(session, quotas, now)
    for quota in quotas:
        pending, paid, carts = await _taken(session, quota, now)
        numbers = {name: values.get(quota.id, 0) for name, values in extra.items()}
        vouchers = numbers.get("blocking_vouchers", 0)
        exited = numbers.get("exited_orders", 0)
        taken = paid + pending + carts + vouchers - exited
        if quota.size is None:
            left = None
            available = not quota.closed
        else:
            left = 0 if quota.closed else max(0, quota.size - taken)
            available = left > 0
        result[quota.id] = Availability(
            available=available,
            available_number=left,
            total_size=quota.size,
            pending_orders=pending,
            paid_orders=paid,
            exited_orders=exited,
            cart_positions=carts,
            blocking_vouchers=vouchers,
            waiting_list=numbers.get("waiting_list", 0),
        )
    return result


def _quotas_of(with_variation: bool, locked: bool) -> Select[tuple[Quota]]:
    query = select(Quota).where(
        Quota.event_id == bindparam("event_id"),
        Quota.id.in_(
            select(quota_items.c.quota_id).where(quota_items.c.item_id == bindparam("item_id"))
        ),
        func.coalesce(Quota.subevent_id, 0) == bindparam("subevent_id"),
    )
    if with_variation:
        query = query.where(
            Quota.id.in_(
                select(quota_variations.c.quota_id).where(
                    quota_variations.c.variation_id == bindparam("variation_id")
                )
            )
        )
    query = query.order_by(Quota.id)
    return query.with_for_update() if locked else query  # FOR UPDATE is a no-op on SQLite


# Built once, by (variation given, locked); see TAKEN for why.
QUOTAS_OF = {(v, lk): _quotas_of(v, lk) for v in (False, True) for lk in (False, True)}


async def quotas_for(
    session: AsyncSession, event_id: int, key: ProductKey, *, locked: bool = False
) -> list[Quota]:
    """Every quota a unit of this product (on this date) counts against.

    ``locked``: found and locked in one statement, in id order (as :func:`lock` does) — the
    common sale of one product saves a round trip under the lock.
    """
    item_id, variation_id, subevent_id = key
    query = QUOTAS_OF[(variation_id is not None, locked)]
    params = {
        "event_id": event_id,
        "item_id": item_id,
        "variation_id": variation_id,
        "subevent_id": subevent_id or 0,
    }
    options = {"populate_existing": True} if locked else {}
    return list((await session.execute(query, params, execution_options=options)).scalars())


_EVENT_QUOTA_ITEMS = (
    select(Quota, quota_items.c.item_id)
    .join(quota_items, quota_items.c.quota_id == Quota.id)
    .where(Quota.event_id == bindparam("event_id"))
)
_EVENT_QUOTA_VARIATIONS = (
    select(quota_variations.c.quota_id, quota_variations.c.variation_id)
    .join(Quota, Quota.id == quota_variations.c.quota_id)
    .where(Quota.event_id == bindparam("event_id"))
)


async def quotas_by_key(
    session: AsyncSession, event_id: int, keys: Iterable[ProductKey]
) -> dict[ProductKey, list[Quota]]:
    """What :func:`quotas_for` finds for each key (unlocked), in two statements for all of
    them: a product list asks for every product of the event."""
    keys = list(keys)
    links = (await session.execute(_EVENT_QUOTA_ITEMS, {"event_id": event_id})).all()
    variations: set[tuple[int, int]] = set()
    if any(key[1] is not None for key in keys):
        rows = await session.execute(_EVENT_QUOTA_VARIATIONS, {"event_id": event_id})
        variations = {(quota_id, variation_id) for quota_id, variation_id in rows.all()}
    found: dict[ProductKey, list[Quota]] = {}
    for key in keys:
        item_id, variation_id, subevent_id = key
        quotas = {
            quota.id: quota
            for quota, linked in links
            if linked == item_id
            and (quota.subevent_id or 0) == (subevent_id or 0)
            and (variation_id is None or (quota.id, variation_id) in variations)
        }
        found[key] = [quotas[i] for i in sorted(quotas)]
    return found


async def lock(session: AsyncSession, quota_ids: Iterable[int]) -> None:
    """Locks quota rows in id order until the transaction ends (409 if that takes too long).

    The rows are read again once locked (``populate_existing``): a change of ``size`` or
    ``closed`` committed while this transaction waited is what the check must see. How long
    to wait is the connection's ``lock_timeout`` (``db.LOCK_TIMEOUT``).
    """
    ids = sorted(set(quota_ids))
    if not ids or session.bind.dialect.name != "postgresql":  # type: ignore[union-attr]
        return
    try:
        await session.execute(
            select(Quota)
            .where(Quota.id.in_(ids))
            .order_by(Quota.id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
    except DBAPIError as exc:
        if busy_error(exc) is None:
            raise
        raise quota_busy() from None


async def reserve(
    session: AsyncSession,
    event_id: int,
    wanted: Mapping[ProductKey, int],
    *,
    now: dt.datetime | None = None,
    ignore_quota: bool = False,
    locked: bool = True,
) -> dict[ProductKey, list[Quota]]:
    """Locks and checks every quota the wanted products count against (``locked=False``:
    checks only, for a caller whose units are held already and who only asks whether the
    quotas still sell).

    Raises :class:`NoQuota` for a product without a quota and :class:`QuotaExceeded` when a
    quota would be oversold; the caller turns them into its own error shape. With
    ``ignore_quota`` (``force``) the quotas are still locked, so counts stay consistent.
    Quotas with ``close_when_sold_out`` that this sale sells out are closed.
    """
    by_key: dict[ProductKey, list[Quota]] = {}
    single = len(wanted) == 1 or not locked
    for key in wanted:
        quotas = await quotas_for(session, event_id, key, locked=single and locked)
        if not quotas and not ignore_quota:
            raise NoQuota(key)
        by_key[key] = quotas
    all_quotas = {q.id: q for quotas in by_key.values() for q in quotas}
    if not single:
        await lock(session, all_quotas)
    if ignore_quota or not all_quotas:
        return by_key
    demand: dict[int, int] = defaultdict(int)
    for key, number in wanted.items():
        for quota in by_key[key]:
            demand[quota.id] += number
    numbers = await count(session, all_quotas.values(), now, informational=False)
    for quota_id in sorted(demand):
        quota = all_quotas[quota_id]
        state = numbers[quota_id]
        if quota.closed:
            raise QuotaExceeded(quota, 0)
        if state.available_number is None:
            continue
        if demand[quota_id] > state.available_number:
            raise QuotaExceeded(quota, state.available_number)
        if locked and quota.close_when_sold_out and state.available_number == demand[quota_id]:
            quota.closed = True
    return by_key
