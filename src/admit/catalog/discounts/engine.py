"""The automatic discount engine: pure data in, new line prices out, no database.

Discounts run in ``(position, id)`` order. Each cart line is used by at most one discount,
whether it was reduced or only counted towards the condition of one ("buy 3, pay 2"): a line
once used is invisible to the discounts after it. For one discount:

1. Lines are matched against the condition (products, add-ons, voucher-discounted lines, the
   subevent date window) and the benefit (the same lines, or other products).
2. The lines are grouped by ``subevent_mode``: ``mixed`` one group; ``same`` one group per
   subevent; ``distinct`` groups of ``condition_min_count`` lines for different subevents.
3. Per group, a minimum value needs the condition lines to sum up to it, then every benefit
   line is reduced; a minimum count needs that many condition lines, then every benefit line
   is reduced, or with "cheapest n matches" only the ``n`` cheapest lines per complete set of
   ``condition_min_count`` lines (the lines of incomplete sets stay free for later discounts).

When the benefit goes to other products than the condition, a line that could receive the
benefit is never spent as a condition ("any ticket gives 50 % off merchandise" then also works
for a cart holding a ticket and merchandise, although merchandise is a product too).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

HUNDRED = Decimal(100)
CENT = Decimal("0.01")


@dataclass(frozen=True)
class CartLine:
    item_id: int
    variation_id: int | None
    subevent_id: int | None
    subevent_date_from: dt.datetime | None
    price: Decimal
    is_addon: bool = False
    voucher_discounted: bool = False


@dataclass(frozen=True)
class DiscountRule:
    """The data of one discount the engine needs (see :meth:`from_model`)."""

    id: int
    position: int = 0
    active: bool = True
    all_sales_channels: bool = True
    limit_sales_channels: frozenset[str] = frozenset()
    available_from: dt.datetime | None = None
    available_until: dt.datetime | None = None
    subevent_mode: str = "mixed"
    subevent_date_from: dt.datetime | None = None
    subevent_date_until: dt.datetime | None = None
    condition_all_products: bool = True
    condition_limit_products: frozenset[int] = frozenset()
    condition_apply_to_addons: bool = True
    condition_ignore_voucher_discounted: bool = False
    condition_min_count: int = 0
    condition_min_value: Decimal = Decimal("0.00")
    benefit_discount_matching_percent: Decimal = Decimal("0.00")
    benefit_only_apply_to_cheapest_n_matches: int | None = None
    benefit_same_products: bool = True
    benefit_limit_products: frozenset[int] = frozenset()
    benefit_apply_to_addons: bool = True
    benefit_ignore_voucher_discounted: bool = False

    @classmethod
    def from_model(cls, discount: Any) -> DiscountRule:
        """From a ``Discount`` row whose product relationships are loaded."""
        return cls(
            id=discount.id,
            position=discount.position,
            active=discount.active,
            all_sales_channels=discount.all_sales_channels,
            limit_sales_channels=frozenset(discount.limit_sales_channels or ()),
            available_from=discount.available_from,
            available_until=discount.available_until,
            subevent_mode=discount.subevent_mode,
            subevent_date_from=discount.subevent_date_from,
            subevent_date_until=discount.subevent_date_until,
            condition_all_products=discount.condition_all_products,
            condition_limit_products=frozenset(i.id for i in discount.condition_limit_products),
            condition_apply_to_addons=discount.condition_apply_to_addons,
            condition_ignore_voucher_discounted=discount.condition_ignore_voucher_discounted,
            condition_min_count=discount.condition_min_count,
            condition_min_value=discount.condition_min_value,
            benefit_discount_matching_percent=discount.benefit_discount_matching_percent,
            benefit_only_apply_to_cheapest_n_matches=(
                discount.benefit_only_apply_to_cheapest_n_matches
            ),
            benefit_same_products=discount.benefit_same_products,
            benefit_limit_products=frozenset(i.id for i in discount.benefit_limit_products),
            benefit_apply_to_addons=discount.benefit_apply_to_addons,
            benefit_ignore_voucher_discounted=discount.benefit_ignore_voucher_discounted,
        )

    def available(self, sales_channel: str, now: dt.datetime) -> bool:
        if not self.active:
            return False
        if not self.all_sales_channels and sales_channel not in self.limit_sales_channels:
            return False
        if self.available_from is not None and now < self.available_from:
            return False
        return self.available_until is None or now <= self.available_until

    def _in_date_window(self, line: CartLine) -> bool:
        if self.subevent_date_from is None and self.subevent_date_until is None:
            return True
        date = line.subevent_date_from
        if date is None:
            return False
        if self.subevent_date_from is not None and date < self.subevent_date_from:
            return False
        return self.subevent_date_until is None or date <= self.subevent_date_until

    def is_condition(self, line: CartLine) -> bool:
        return (
            (self.condition_all_products or line.item_id in self.condition_limit_products)
            and (self.condition_apply_to_addons or not line.is_addon)
            and not (self.condition_ignore_voucher_discounted and line.voucher_discounted)
            and self._in_date_window(line)
        )

    def is_benefit(self, line: CartLine) -> bool:
        if self.benefit_same_products:
            return self.is_condition(line)
        return (
            line.item_id in self.benefit_limit_products
            and (self.benefit_apply_to_addons or not line.is_addon)
            and not (self.benefit_ignore_voucher_discounted and line.voucher_discounted)
            and self._in_date_window(line)
        )


@dataclass(frozen=True)
class LineResult:
    price: Decimal
    discount_id: int | None  # the discount that used the line (reduced or counted), if any


def reduce(price: Decimal, percent: Decimal) -> Decimal:
    """``price`` less ``percent`` %, half-up to cents; never below zero or above ``price``."""
    percent = min(max(percent, Decimal(0)), HUNDRED)
    return (price - price * percent / HUNDRED).quantize(CENT, rounding=ROUND_HALF_UP)


def compute(
    lines: Sequence[CartLine],
    sales_channel: str,
    now: dt.datetime,
    discounts: Iterable[DiscountRule],
) -> list[LineResult]:
    """The price of every line after the discounts, and which discount used it."""
    prices = [line.price for line in lines]
    used: list[int | None] = [None] * len(lines)
    for rule in sorted(discounts, key=lambda d: (d.position, d.id)):
        if not rule.available(sales_channel, now):
            continue
        free = [i for i in range(len(lines)) if used[i] is None]
        benefit = [i for i in free if rule.is_benefit(lines[i])]
        if rule.benefit_same_products:
            condition = benefit
        else:
            taken = set(benefit)
            condition = [i for i in free if i not in taken and rule.is_condition(lines[i])]
        for cond_group, benefit_group in _groups(rule, lines, condition, benefit):
            consumed, reduced = _apply_group(rule, prices, cond_group, benefit_group)
            for i in consumed:
                used[i] = rule.id
            for i in reduced:
                prices[i] = reduce(prices[i], rule.benefit_discount_matching_percent)
    return [LineResult(price=p, discount_id=d) for p, d in zip(prices, used, strict=True)]


def apply_discounts(
    lines: Sequence[CartLine],
    sales_channel: str,
    now: dt.datetime,
    discounts: Iterable[DiscountRule],
) -> list[Decimal]:
    """The price of every line after the event's automatic discounts."""
    return [r.price for r in compute(lines, sales_channel, now, discounts)]


Group = tuple[list[int], list[int]]


def _groups(
    rule: DiscountRule, lines: Sequence[CartLine], condition: list[int], benefit: list[int]
) -> list[Group]:
    if rule.subevent_mode == "same":
        by_subevent: dict[Any, Group] = defaultdict(lambda: ([], []))
        for i in condition:
            by_subevent[lines[i].subevent_id][0].append(i)
        for i in benefit:
            by_subevent[lines[i].subevent_id][1].append(i)
        return [by_subevent[key] for key in sorted(by_subevent, key=_none_first)]
    if rule.subevent_mode == "distinct":
        return [(g, g) for g in _distinct_groups(rule, lines, condition)]
    return [(condition, benefit)]


def _none_first(value: int | None) -> tuple[bool, int]:
    return (value is not None, value or 0)


def _distinct_groups(
    rule: DiscountRule, lines: Sequence[CartLine], candidates: list[int]
) -> list[list[int]]:
    """As many groups of ``condition_min_count`` lines for pairwise different subevents as
    the cart allows; left-over lines then join a group that lacks their subevent."""
    size = max(rule.condition_min_count, 1)
    pools: dict[Any, list[int]] = defaultdict(list)
    for i in candidates:
        pools[lines[i].subevent_id].append(i)
    for pool in pools.values():
        # Dearest last: each group takes the dearest line left of each of its subevents.
        pool.sort(key=lambda i: (lines[i].price, -i))
    groups: list[list[int]] = []
    while True:
        # The subevents with the most lines left: taking from them keeps the most groups
        # possible (ties: lower subevent id first, for determinism).
        ready = sorted(
            (k for k in pools if pools[k]), key=lambda k: (-len(pools[k]), _none_first(k))
        )
        if len(ready) < size:
            break
        groups.append([pools[k].pop() for k in ready[:size]])
    for key in sorted(pools, key=_none_first):
        for i in sorted(pools[key]):
            for group in groups:
                if all(lines[j].subevent_id != key for j in group):
                    group.append(i)
                    break
    return groups


def _apply_group(
    rule: DiscountRule, prices: list[Decimal], condition: list[int], benefit: list[int]
) -> tuple[list[int], list[int]]:
    """Which lines the discount uses and which of them it reduces, within one group."""
    if not condition:
        return [], []
    if rule.condition_min_value > 0:
        if sum(prices[i] for i in condition) < rule.condition_min_value:
            return [], []
        return _union(condition, benefit), benefit
    if len(condition) < rule.condition_min_count:
        return [], []
    cheapest_n = rule.benefit_only_apply_to_cheapest_n_matches
    if not cheapest_n or rule.condition_min_count < 1:
        return _union(condition, benefit), benefit
    sets = len(condition) // rule.condition_min_count
    by_price = sorted(condition, key=lambda i: (prices[i], i))
    spent = by_price[: sets * rule.condition_min_count]
    if rule.benefit_same_products:
        return spent, spent[: sets * cheapest_n]
    targets = sorted(benefit, key=lambda i: (prices[i], i))[: sets * cheapest_n]
    return _union(spent, targets), targets


def _union(first: list[int], second: list[int]) -> list[int]:
    return list(dict.fromkeys([*first, *second]))
