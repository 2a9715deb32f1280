"""Vouchers in sales: finding the code, the rules, counting usages, the voucher price.

A sale (order or cart position) names a voucher by code per position. :func:`claim` locks the
named vouchers (PostgreSQL ``FOR UPDATE`` in id order, 409 with ``Retry-After`` past the lock
timeout; SQLite serialises writers anyway) *before* the sale locks any quota, then checks each
position against its voucher and counts the usages while the lock is held, so concurrent sales
can never redeem a voucher more than ``max_usages`` times.

Usages: a voucher's remaining usages are ``max_usages - redeemed - unexpired cart positions
holding it``. Carts therefore count as "in use" until they expire (as in pretix), and an order
using the voucher fails while carts hold its last usages; an expired cart frees its usage at
once. ``redeemed`` counts the positions of live (pending or paid) orders: order creation
increments it under the lock; any later change of an order (cancel, expire, reactivate, a
position canceled, a test order deleted) recounts it with :func:`sync`.

Quota: a position whose voucher has ``allow_ignore_quota`` takes no quota check, nor does one
whose voucher blocks quota (its unit is moved from the voucher's block to the sale). Such sales
still lock every quota they touch, so other sales never count a half-written state.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import (
    CartPosition,
    Item,
    ItemVariation,
    Quota,
    Seat,
    Voucher,
    quota_items,
    quota_variations,
)
from admit.quotas import availability
from admit.quotas.availability import ProductKey

HUNDRED = Decimal(100)
ZERO = Decimal("0.00")

EXPIRED = "The specified voucher has expired."
WRONG_ITEM = "The specified voucher is not valid for this item."
WRONG_SUBEVENT = "The specified voucher is not valid for this subevent."
WRONG_SEAT = "The specified voucher is not valid for this seat."
EXHAUSTED = "The voucher has already been used the maximum number of times."
REQUIRED = "This product can only be bought using a voucher."
HIDDEN = "This product is only available with a voucher that unlocks it."


def min_usages_message(code: str, count: int) -> str:
    return (
        f'The voucher code "{code}" can only be used if you select at least {count} '
        "matching products."
    )


def budget_message(remaining: Decimal, wanted: Decimal) -> str:
    return (
        f"The voucher has a remaining budget of {remaining:.2f}, therefore a discount of "
        f"{wanted:.2f} can not be given."
    )


def blocks_quota(voucher: Voucher, now: dt.datetime) -> bool:
    """Whether the voucher currently holds quota of its own."""
    return voucher.block_quota and (voucher.valid_until is None or voucher.valid_until >= now)


# -- locking -------------------------------------------------------------------------------


async def _locked(session: AsyncSession, query: Any) -> list[Voucher]:
    """The vouchers, locked in id order until commit (PostgreSQL; SQLite serialises writers
    anyway). A wait past the connection's lock timeout answers 409 (``kit.http.errors``)."""
    query = query.order_by(Voucher.id).with_for_update().execution_options(populate_existing=True)
    return list((await session.scalars(query)).all())


async def lock_codes(session: AsyncSession, event_id: int, codes: Iterable[str | None]) -> None:
    """Locks the vouchers named by ``codes`` (for batches: before any quota is locked)."""
    wanted = sorted({c.lower() for c in codes if c})
    if wanted:
        await _locked(
            session,
            select(Voucher).where(
                Voucher.event_id == event_id, func.lower(Voucher.code).in_(wanted)
            ),
        )


async def lock_ids(session: AsyncSession, voucher_ids: Iterable[int]) -> list[Voucher]:
    ids = sorted(set(voucher_ids))
    if not ids:
        return []
    return await _locked(session, select(Voucher).where(Voucher.id.in_(ids)))


async def lock_quotas(session: AsyncSession, event_id: int, keys: Iterable[ProductKey]) -> None:
    """Locks every quota of the products in one id-ordered step."""
    quota_ids: set[int] = set()
    for key in set(keys):
        quota_ids |= {q.id for q in await availability.quotas_for(session, event_id, key)}
    await availability.lock(session, quota_ids)


# -- pricing -------------------------------------------------------------------------------


@dataclass
class Budget:
    """What is left of one voucher's budget during one sale."""

    remaining: Decimal


@dataclass
class Use:
    """One position redeeming a voucher; priced lines carry it as ``line.voucher``."""

    voucher: Voucher
    budget: Budget | None
    quota_exempt: bool
    budget_use: Decimal = ZERO
    discounted: bool = False

    def price(self, listed: Decimal, places: int = 2) -> Decimal:
        """The price after the voucher's price mode, capped by its remaining budget."""
        v = self.voucher
        if v.price_mode == "set":
            price = v.value
        elif v.price_mode == "subtract":
            price = max(listed - v.value, ZERO)
        elif v.price_mode == "percent":
            price = listed * (HUNDRED - v.value) / HUNDRED
        else:
            price = listed
        price = price.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        discount = max(listed - price, ZERO)
        if self.budget is not None and discount > self.budget.remaining:
            discount = self.budget.remaining
            price = listed - discount
        if self.budget is not None:
            self.budget.remaining -= discount
        self.budget_use = discount
        self.discounted = price < listed
        return price

    def given(self, listed: Decimal, given: Decimal) -> str | None:
        """A price the client sent: the discount it implies must fit the budget."""
        discount = max(listed - given, ZERO)
        if self.budget is not None:
            if discount > self.budget.remaining:
                return budget_message(self.budget.remaining, discount)
            self.budget.remaining -= discount
        self.budget_use = discount
        self.discounted = given < listed
        return None


# -- checking ------------------------------------------------------------------------------


@dataclass
class Want:
    """One position of a sale, as far as vouchers go."""

    code: str | None
    item: Item
    variation: ItemVariation | None
    variation_id: int | None
    subevent_id: int | None
    seat_guid: str | None = None


@dataclass
class Rejected(Exception):
    """Positions that may not redeem their voucher: ``{index: {field: [message]}}``."""

    problems: dict[int, dict[str, list[str]]] = field(default_factory=dict)

    def add(self, index: int, field_name: str, message: str) -> None:
        self.problems.setdefault(index, {}).setdefault(field_name, []).append(message)


@dataclass
class _QuotaMembers:
    items: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    variations: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    subevent: dict[int, int | None] = field(default_factory=dict)


async def _quota_members(session: AsyncSession, quota_ids: set[int]) -> _QuotaMembers:
    members = _QuotaMembers()
    if not quota_ids:
        return members
    for quota_id, item_id in await session.execute(
        select(quota_items.c.quota_id, quota_items.c.item_id).where(
            quota_items.c.quota_id.in_(quota_ids)
        )
    ):
        members.items[quota_id].add(item_id)
    for quota_id, variation_id in await session.execute(
        select(quota_variations.c.quota_id, quota_variations.c.variation_id).where(
            quota_variations.c.quota_id.in_(quota_ids)
        )
    ):
        members.variations[quota_id].add(variation_id)
    for quota_id, subevent_id in await session.execute(
        select(Quota.id, Quota.subevent_id).where(Quota.id.in_(quota_ids))
    ):
        members.subevent[quota_id] = subevent_id
    return members


async def carts_holding(
    session: AsyncSession, voucher_ids: Iterable[int], now: dt.datetime
) -> dict[int, int]:
    """Unexpired cart positions per voucher (they count as usages in progress)."""
    ids = set(voucher_ids)
    if not ids:
        return {}
    rows = await session.execute(
        select(CartPosition.voucher_id, func.count())
        .where(CartPosition.voucher_id.in_(ids), CartPosition.expires >= now)
        .group_by(CartPosition.voucher_id)
    )
    return {voucher_id: int(n) for voucher_id, n in rows}


def _applies(v: Voucher, want: Want, members: _QuotaMembers) -> str | None:
    if v.quota_id is not None:
        in_items = want.item.id in members.items.get(v.quota_id, set())
        variations = members.variations.get(v.quota_id, set())
        if not in_items or (want.variation_id is not None and want.variation_id not in variations):
            return WRONG_ITEM
        if members.subevent.get(v.quota_id) != want.subevent_id:
            return WRONG_SUBEVENT
    if v.item_id is not None and v.item_id != want.item.id:
        return WRONG_ITEM
    if v.variation_id is not None and v.variation_id != want.variation_id:
        return WRONG_ITEM
    if v.subevent_id is not None and v.subevent_id != want.subevent_id:
        return WRONG_SUBEVENT
    return None


def _visibility(want: Want, voucher: Voucher | None) -> tuple[str, str] | None:
    """Orders only: products that need a voucher (``require_voucher``, hidden ones)."""
    if want.item.require_voucher and voucher is None:
        return "voucher", REQUIRED
    hidden = want.item.hide_without_voucher or (
        want.variation is not None and want.variation.hide_without_voucher
    )
    if hidden and (voucher is None or not voucher.show_hidden_items):
        return "item", HIDDEN
    return None


async def claim(
    session: AsyncSession,
    event_id: int,
    wants: Sequence[Want],
    *,
    now: dt.datetime,
    unknown: str,
    for_order: bool,
) -> list[Use | None]:
    """Locks and checks the vouchers the positions name; raises :class:`Rejected`.

    ``unknown`` is the message for a code that does not exist (``{code}`` is filled in).
    Orders (``for_order``) also enforce ``min_usages`` and products that need a voucher;
    cart positions do not (the spec: carts do not validate voucher-only products).
    """
    rejected = Rejected()
    codes = {w.code.lower() for w in wants if w.code}
    vouchers: dict[str, Voucher] = {}
    if codes:
        found = await _locked(
            session,
            select(Voucher).where(
                Voucher.event_id == event_id, func.lower(Voucher.code).in_(codes)
            ),
        )
        vouchers = {v.code.lower(): v for v in found}
    members = await _quota_members(
        session, {v.quota_id for v in vouchers.values() if v.quota_id is not None}
    )
    seat_guids = await _seat_guids(session, [v.seat_id for v in vouchers.values()])
    chosen: list[Voucher | None] = []
    for index, want in enumerate(wants):
        voucher = vouchers.get(want.code.lower()) if want.code else None
        chosen.append(voucher)
        if want.code and voucher is None:
            rejected.add(index, "voucher", unknown.format(code=want.code))
            continue
        if for_order and (problem := _visibility(want, voucher)) is not None:
            rejected.add(index, *problem)
        if voucher is None:
            continue
        if voucher.valid_until is not None and voucher.valid_until < now:
            rejected.add(index, "voucher", EXPIRED)
        elif (message := _applies(voucher, want, members)) is not None:
            rejected.add(index, "voucher", message)
        elif voucher.seat_id is not None and seat_guids.get(voucher.seat_id) != want.seat_guid:
            rejected.add(index, "voucher", WRONG_SEAT)
    _count_usages(
        wants, chosen, await carts_holding(session, _ids(chosen), now), rejected, for_order
    )
    if rejected.problems:
        raise rejected
    budgets = {
        v.id: Budget(max(v.budget - v.budget_used, ZERO))
        for v in vouchers.values()
        if v.budget is not None
    }
    return [
        Use(v, budgets.get(v.id), v.allow_ignore_quota or blocks_quota(v, now))
        if v is not None
        else None
        for v in chosen
    ]


def _ids(chosen: Iterable[Voucher | None]) -> set[int]:
    return {v.id for v in chosen if v is not None}


def _count_usages(
    wants: Sequence[Want],
    chosen: Sequence[Voucher | None],
    in_carts: dict[int, int],
    rejected: Rejected,
    for_order: bool,
) -> None:
    used: Counter[int] = Counter()
    for index, voucher in enumerate(chosen):
        if voucher is None or index in rejected.problems:
            continue
        used[voucher.id] += 1
        left = voucher.max_usages - voucher.redeemed - in_carts.get(voucher.id, 0)
        if used[voucher.id] > left:
            rejected.add(index, "voucher", EXHAUSTED)
    if not for_order:
        return
    for index, voucher in enumerate(chosen):
        if voucher is None or index in rejected.problems:
            continue
        if voucher.redeemed == 0 and used[voucher.id] < voucher.min_usages:
            code = wants[index].code or voucher.code
            rejected.add(index, "voucher", min_usages_message(code, voucher.min_usages))


async def _seat_guids(session: AsyncSession, seat_ids: Iterable[int | None]) -> dict[int, str]:
    ids = {i for i in seat_ids if i is not None}
    if not ids:
        return {}
    rows = await session.execute(select(Seat.id, Seat.seat_guid).where(Seat.id.in_(ids)))
    return dict(rows.all())


# -- the sales code's entry points ----------------------------------------------------------


def demand(keys: Sequence[ProductKey], uses: Sequence[Use | None]) -> Counter[ProductKey]:
    """What a sale asks of the quotas: every position but the quota-exempt ones."""
    return Counter(
        key for key, use in zip(keys, uses, strict=True) if use is None or not use.quota_exempt
    )


async def lock_for_exempt(
    session: AsyncSession, event_id: int, keys: Sequence[ProductKey], uses: Sequence[Use | None]
) -> None:
    """When some positions skip the quota check, lock every quota of the sale anyway."""
    if any(use is not None and use.quota_exempt for use in uses):
        await lock_quotas(session, event_id, keys)


def position_fields(use: Use | None) -> dict[str, Any]:
    """The voucher columns of an order position written for ``use``."""
    if use is None:
        return {}
    return {"voucher_id": use.voucher.id, "voucher_budget_use": use.budget_use}
