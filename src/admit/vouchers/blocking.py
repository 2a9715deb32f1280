"""Quota held by vouchers with ``block_quota``: how much, and the check that it fits.

A blocking voucher that has not passed ``valid_until`` holds its unused usages
(``max_usages - redeemed``) in every quota of its product (or in its quota). Unexpired cart
positions redeeming the voucher are already counted as carts, so the voucher holds only the
rest; redeeming it in an order moves a unit from the voucher to the order. Either way the
quota's total stays the same, which is why such sales take no new quota.

:func:`count_blocking` is registered as ``blocking_vouchers`` with the availability counter:
one statement for any number of quotas, driven by the ``(event_id, block_quota)`` index.
Creating or changing a blocking voucher goes through :func:`ensure_capacity`, which locks the
quotas (in id order, 409 after the lock timeout) and recounts before the voucher is written.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, bindparam, case, func, or_, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import UTCDateTime, utcnow
from admit.kit.http.errors import NON_FIELD
from admit.models import CartPosition, Item, ItemVariation, Quota, Voucher, quota_items
from admit.models import quota_variations as qv
from admit.quotas import availability

SOLD_OUT = (
    "You cannot create a voucher that blocks quota as the selected product or quota is "
    "currently sold out or completely reserved."
)
NEEDS_PRODUCT = (
    "You need to select a specific product or quota if this voucher should reserve tickets."
)
NEEDS_VARIATION = (
    "You can only block quota if you specify a specific product variation. Otherwise it might "
    "be unclear which quotas to block."
)
NEEDS_DATE = "If you want this voucher to block quota, you need to select a specific date."


def _build_count_query(*, single: bool = False) -> Any:
    """The blocking-voucher count, built once (statement construction costs more than running
    it); parameters ``events``, ``ids`` (quota ids) and ``now``. ``single``: for one quota of
    one event instead (``event_id``, ``quota_id``, ``now``), as the fast lanes' database
    functions embed it."""
    now = bindparam("now", type_=UTCDateTime())
    if single:
        event_match = Voucher.event_id == bindparam("event_id")
        quota_in: Any = lambda column: column == bindparam("quota_id")  # noqa: E731
    else:
        event_match = Voucher.event_id.in_(bindparam("events", expanding=True))
        ids = bindparam("ids", expanding=True)
        quota_in = lambda column: column.in_(ids)  # noqa: E731
    carts = (
        select(func.count())
        .select_from(CartPosition)
        .where(CartPosition.voucher_id == Voucher.id, CartPosition.expires >= now)
        .correlate(Voucher)
        .scalar_subquery()
    )
    # The valid blocking vouchers with what each still holds: few rows, found through the
    # ``(event_id, block_quota)`` index however many other vouchers the event has.
    b = (
        select(
            Voucher.quota_id,
            Voucher.item_id,
            Voucher.variation_id,
            Voucher.subevent_id,
            (Voucher.max_usages - Voucher.redeemed - carts).label("free"),
        )
        .where(
            event_match,
            Voucher.block_quota.is_(True),
            or_(Voucher.valid_until.is_(None), Voucher.valid_until >= now),
        )
        .cte("blocking")
    )
    by_quota = select(b.c.quota_id.label("quota_id"), b.c.free).where(quota_in(b.c.quota_id))
    in_variations = (
        select(qv.c.variation_id)
        .where(qv.c.quota_id == quota_items.c.quota_id, qv.c.variation_id == b.c.variation_id)
        .exists()
    )
    same_date = or_(
        b.c.subevent_id == Quota.subevent_id,
        and_(b.c.subevent_id.is_(None), Quota.subevent_id.is_(None)),
    )
    by_product = (
        select(quota_items.c.quota_id.label("quota_id"), b.c.free)
        .select_from(b)
        .join(quota_items, quota_items.c.item_id == b.c.item_id)
        .join(Quota, Quota.id == quota_items.c.quota_id)
        .where(
            b.c.quota_id.is_(None),
            quota_in(quota_items.c.quota_id),
            or_(b.c.variation_id.is_(None), in_variations),
            same_date,
        )
    )
    both = union_all(by_quota, by_product).subquery()
    held = case((both.c.free > 0, both.c.free), else_=0)
    return select(both.c.quota_id, func.sum(held).label("held")).group_by(both.c.quota_id)


_COUNT_QUERY = _build_count_query()
# One quota's units held (no row: none), for ``kit/lanes/plpgsql.embed``.
HELD_IN_QUOTA = _build_count_query(single=True)


async def count_blocking(
    session: AsyncSession, quotas: list[Quota], now: dt.datetime
) -> dict[int, int]:
    """Units each quota loses to blocking vouchers (registered as ``blocking_vouchers``).

    One statement for any number of quotas; its cost grows with the blocking vouchers of the
    event, not with all of its vouchers."""
    if not quotas:
        return {}
    params = {
        "events": sorted({q.event_id for q in quotas}),
        "ids": [q.id for q in quotas],
        "now": now,
    }
    rows = await session.execute(_COUNT_QUERY, params)
    return {quota_id: int(total or 0) for quota_id, total in rows}


@dataclass(frozen=True)
class Block:
    """What one voucher state holds: ``units`` in each quota of ``quota_ids``."""

    quota_ids: frozenset[int] = frozenset()
    units: int = 0


@dataclass(frozen=True)
class Target:
    """The product side of a voucher state, as far as quota goes."""

    event_id: int
    has_subevents: bool
    block_quota: bool
    valid_until: dt.datetime | None
    max_usages: int
    redeemed: int
    item_id: int | None
    variation_id: int | None
    quota_id: int | None
    subevent_id: int | None


class BlockError(Exception):
    """A voucher state that cannot block quota; the message goes to ``non_field_errors``."""


async def _item_has_variations(session: AsyncSession, item_id: int) -> bool:
    found = await session.scalar(
        select(ItemVariation.id).where(ItemVariation.item_id == item_id).limit(1)
    )
    return found is not None


async def block_of(session: AsyncSession, target: Target, now: dt.datetime) -> Block:
    """The quota a voucher state holds (nothing when it does not block or has expired).

    Raises :class:`BlockError` for a blocking voucher whose quotas are ambiguous or missing.
    """
    if not target.block_quota:
        return Block()
    if target.has_subevents and target.subevent_id is None and target.quota_id is None:
        raise BlockError(NEEDS_DATE)
    if target.quota_id is not None:
        quota_ids = frozenset({target.quota_id})
    elif target.item_id is None:
        raise BlockError(NEEDS_PRODUCT)
    else:
        if target.variation_id is None and await _item_has_variations(session, target.item_id):
            raise BlockError(NEEDS_VARIATION)
        key = (target.item_id, target.variation_id, target.subevent_id)
        quotas = await availability.quotas_for(session, target.event_id, key)
        if not quotas:
            raise BlockError(await _no_quota_message(session, target.item_id))
        quota_ids = frozenset(q.id for q in quotas)
    if target.valid_until is not None and target.valid_until < now:
        return Block(quota_ids, 0)
    return Block(quota_ids, max(0, target.max_usages - target.redeemed))


async def _no_quota_message(session: AsyncSession, item_id: int) -> str:
    names = await session.scalar(select(Item.name).where(Item.id == item_id)) or {}
    name = names.get("en") or next(iter(names.values()), str(item_id))
    return f'The product "{name}" is not assigned to a quota.'


@dataclass(frozen=True)
class Change:
    """One voucher write: what it held before (``old``) and what it will hold (``new``);
    ``checked`` is False for ``allow_ignore_quota`` vouchers, which block without a check."""

    old: Block
    new: Block
    checked: bool = True

    @property
    def touches_quota(self) -> bool:
        return self.old.units > 0 or self.new.units > 0


async def ensure_capacity(
    session: AsyncSession, changes: Sequence[Change], now: dt.datetime | None = None
) -> dict[int, str]:
    """Locks every quota the changes touch and checks that each growth fits.

    Returns ``{index of the change: message}`` for the changes that do not fit (counting the
    earlier changes of the same batch), empty when all fit. The locks are held until commit,
    so the written vouchers and any concurrent sale are serialised per quota.
    """
    now = now or utcnow()
    touched = {q for c in changes if c.touches_quota for q in c.old.quota_ids | c.new.quota_ids}
    if not touched:
        return {}
    await availability.lock(session, touched)
    quotas = list(
        (await session.execute(select(Quota).where(Quota.id.in_(touched)).order_by(Quota.id)))
        .scalars()
        .all()
    )
    numbers = await availability.count(session, quotas, now)
    by_id = {q.id: q for q in quotas}
    demand: dict[int, int] = defaultdict(int)
    problems: dict[int, str] = {}
    for index, change in enumerate(changes):
        growth: dict[int, int] = defaultdict(int)
        for quota_id in change.new.quota_ids:
            growth[quota_id] += change.new.units
        for quota_id in change.old.quota_ids:
            growth[quota_id] -= change.old.units
        if change.checked and any(
            units > 0 and not _fits(by_id.get(q), numbers.get(q), demand[q] + units)
            for q, units in growth.items()
        ):
            problems[index] = SOLD_OUT
            continue
        for quota_id, units in growth.items():
            demand[quota_id] += units
    return problems


def _fits(quota: Quota | None, numbers: availability.Availability | None, units: int) -> bool:
    if quota is None or numbers is None:
        return False  # deleted meanwhile
    if quota.closed:
        return False
    return numbers.available_number is None or numbers.available_number >= units


def errors_for(problems: dict[int, str], count: int) -> list[dict[str, list[str]]]:
    """Per-entry error objects for a batch (``{}`` for entries without a problem)."""
    return [{NON_FIELD: [problems[i]]} if i in problems else {} for i in range(count)]


def register() -> None:
    """Makes quota availability subtract what blocking vouchers hold."""
    availability.blocking_counters["blocking_vouchers"] = count_blocking
