"""The discount engine, rule by rule, and its properties over random carts."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from admit.catalog.discounts.engine import (
    CartLine,
    DiscountRule,
    apply_discounts,
    compute,
    reduce,
)

D = Decimal
NOW = dt.datetime(2030, 6, 1, 12, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


def line(price: str, item: int = 1, subevent: int | None = None, **kw: Any) -> CartLine:
    date = kw.pop("date", None)
    if date is None and subevent is not None:
        date = NOW + subevent * DAY
    return CartLine(
        item_id=item,
        variation_id=kw.pop("variation", None),
        subevent_id=subevent,
        subevent_date_from=date,
        price=D(price),
        **kw,
    )


def rule(id: int = 1, **kw: Any) -> DiscountRule:
    for key in ("condition_limit_products", "benefit_limit_products", "limit_sales_channels"):
        if key in kw:
            kw[key] = frozenset(kw[key])
    for key in ("condition_min_value", "benefit_discount_matching_percent"):
        if key in kw:
            kw[key] = D(str(kw[key]))
    return DiscountRule(id=id, **kw)


def run(lines: list[CartLine], *rules: DiscountRule, channel: str = "web", now=NOW) -> list[str]:
    return [str(p) for p in apply_discounts(lines, channel, now, rules)]


THREE_FOR_TWO = {
    "condition_min_count": 3,
    "benefit_discount_matching_percent": 100,
    "benefit_only_apply_to_cheapest_n_matches": 1,
}


# -- basics ----------------------------------------------------------------------------------


def test_no_discounts_keeps_prices():
    assert run([line("10.00"), line("5.50")]) == ["10.00", "5.50"]


def test_percentage_on_every_matching_line():
    lines = [line("10.00"), line("20.00")]
    assert run(lines, rule(benefit_discount_matching_percent=10)) == ["9.00", "18.00"]


def test_rounding_is_half_up_to_cents():
    assert reduce(D("0.05"), D("50")) == D("0.03")
    assert reduce(D("10.00"), D("33.33")) == D("6.67")
    assert run([line("0.05")], rule(benefit_discount_matching_percent=50)) == ["0.03"]


def test_inactive_discount_is_ignored():
    assert run([line("10.00")], rule(active=False, benefit_discount_matching_percent=50)) == [
        "10.00"
    ]


def test_empty_cart():
    assert run([], rule(benefit_discount_matching_percent=50)) == []


# -- availability ----------------------------------------------------------------------------


def test_availability_window_is_inclusive():
    half = {"benefit_discount_matching_percent": 50}
    assert run([line("10")], rule(available_from=NOW, **half)) == ["5.00"]
    assert run([line("10")], rule(available_until=NOW, **half)) == ["5.00"]
    assert run([line("10")], rule(available_from=NOW + DAY, **half)) == ["10"]
    assert run([line("10")], rule(available_until=NOW - DAY, **half)) == ["10"]
    window = rule(available_from=NOW - DAY, available_until=NOW + DAY, **half)
    assert run([line("10")], window) == ["5.00"]


def test_sales_channels():
    limited = rule(
        all_sales_channels=False,
        limit_sales_channels={"box_office"},
        benefit_discount_matching_percent=50,
    )
    assert run([line("10")], limited, channel="web") == ["10"]
    assert run([line("10")], limited, channel="box_office") == ["5.00"]
    everywhere = rule(limit_sales_channels={"box_office"}, benefit_discount_matching_percent=50)
    assert run([line("10")], everywhere, channel="web") == ["5.00"]


# -- conditions ------------------------------------------------------------------------------


def test_condition_products():
    only_item_2 = rule(
        condition_all_products=False,
        condition_limit_products={2},
        benefit_discount_matching_percent=50,
    )
    assert run([line("10", item=1), line("10", item=2)], only_item_2) == ["10", "5.00"]


def test_condition_addons():
    no_addons = rule(condition_apply_to_addons=False, benefit_discount_matching_percent=50)
    assert run([line("10"), line("10", is_addon=True)], no_addons) == ["5.00", "10"]
    with_addons = rule(benefit_discount_matching_percent=50)
    assert run([line("10"), line("10", is_addon=True)], with_addons) == ["5.00", "5.00"]


def test_condition_voucher_discounted():
    ignore = rule(condition_ignore_voucher_discounted=True, benefit_discount_matching_percent=50)
    lines = [line("10"), line("10", voucher_discounted=True)]
    assert run(lines, ignore) == ["5.00", "10"]
    assert run(lines, rule(benefit_discount_matching_percent=50)) == ["5.00", "5.00"]


def test_min_count():
    group = rule(condition_min_count=3, benefit_discount_matching_percent=10)
    assert run([line("10")] * 2, group) == ["10", "10"]
    assert run([line("10")] * 3, group) == ["9.00"] * 3
    assert run([line("10")] * 4, group) == ["9.00"] * 4


def test_min_count_counts_only_matching_lines():
    group = rule(
        condition_min_count=2,
        condition_all_products=False,
        condition_limit_products={1},
        benefit_discount_matching_percent=10,
    )
    assert run([line("10", item=1), line("10", item=2)], group) == ["10", "10"]
    assert run([line("10", item=1), line("10", item=1), line("7", item=2)], group) == [
        "9.00",
        "9.00",
        "7",
    ]


def test_min_value():
    big_cart = rule(condition_min_value="50.00", benefit_discount_matching_percent=20)
    assert run([line("20"), line("29.99")], big_cart) == ["20", "29.99"]
    assert run([line("20"), line("30")], big_cart) == ["16.00", "24.00"]


def test_subevent_date_window():
    dated = rule(
        subevent_date_from=NOW + 2 * DAY,
        subevent_date_until=NOW + 3 * DAY,
        benefit_discount_matching_percent=50,
    )
    lines = [line("10", subevent=1), line("10", subevent=2), line("10", subevent=3)]
    lines.append(line("10", subevent=4))
    lines.append(line("10"))  # no date at all: outside any window
    assert run(lines, dated) == ["10", "5.00", "5.00", "10", "10"]


# -- cheapest n ------------------------------------------------------------------------------


def test_three_for_two():
    deal = rule(**THREE_FOR_TWO)
    assert run([line("10"), line("20")], deal) == ["10", "20"]
    assert run([line("30"), line("10"), line("20")], deal) == ["30", "0.00", "20"]


def test_three_for_two_repeats_per_complete_set():
    deal = rule(**THREE_FOR_TWO)
    prices = ["60", "10", "50", "20", "40", "30", "5"]
    result = compute([line(p) for p in prices], "web", NOW, [deal])
    # 7 lines: two complete sets, so the two cheapest are free; the dearest line is not used.
    assert [str(r.price) for r in result] == ["60", "0.00", "50", "20", "40", "30", "0.00"]
    assert [r.discount_id for r in result] == [None, 1, 1, 1, 1, 1, 1]


def test_cheapest_n_leaves_incomplete_sets_to_later_discounts():
    deal = rule(1, position=1, **THREE_FOR_TWO)
    later = rule(2, position=2, benefit_discount_matching_percent=10)
    result = compute([line("10"), line("20"), line("30"), line("40")], "web", NOW, [deal, later])
    assert [str(r.price) for r in result] == ["0.00", "20", "30", "36.00"]
    assert [r.discount_id for r in result] == [1, 1, 1, 2]


def test_equal_prices_pick_the_first_line():
    assert run([line("10")] * 3, rule(**THREE_FOR_TWO)) == ["0.00", "10", "10"]


def test_buy_two_get_both_cheapest_half_price():
    deal = rule(
        condition_min_count=4,
        benefit_discount_matching_percent=50,
        benefit_only_apply_to_cheapest_n_matches=2,
    )
    assert run([line(p) for p in ("40", "10", "30", "20")], deal) == ["40", "5.00", "30", "10.00"]


# -- benefit products ------------------------------------------------------------------------


def test_benefit_on_other_products():
    merch = rule(
        condition_all_products=False,
        condition_limit_products={1},
        condition_min_count=1,
        benefit_same_products=False,
        benefit_limit_products={2},
        benefit_discount_matching_percent=50,
    )
    assert run([line("20", item=2)], merch) == ["20"]
    assert run([line("100", item=1), line("20", item=2)], merch) == ["100", "10.00"]


def test_benefit_line_is_not_spent_as_condition():
    merch = rule(
        condition_min_count=1,
        benefit_same_products=False,
        benefit_limit_products={2},
        benefit_discount_matching_percent=50,
    )
    assert run([line("100", item=1), line("20", item=2)], merch) == ["100", "10.00"]
    assert run([line("20", item=2)], merch) == ["20"]


def test_benefit_addons_and_vouchers():
    base = {
        "condition_min_count": 1,
        "condition_all_products": False,
        "condition_limit_products": {1},
        "benefit_same_products": False,
        "benefit_limit_products": {2},
        "benefit_discount_matching_percent": 50,
    }
    lines = [line("100", item=1), line("20", item=2, is_addon=True)]
    lines.append(line("20", item=2, voucher_discounted=True))
    assert run(lines, rule(**base)) == ["100", "10.00", "10.00"]
    assert run(lines, rule(benefit_apply_to_addons=False, **base)) == ["100", "20", "10.00"]
    assert run(lines, rule(benefit_ignore_voucher_discounted=True, **base)) == [
        "100",
        "10.00",
        "20",
    ]


def test_benefit_cheapest_n_on_other_products():
    deal = rule(
        condition_all_products=False,
        condition_limit_products={1},
        condition_min_count=2,
        benefit_same_products=False,
        benefit_limit_products={2},
        benefit_discount_matching_percent=100,
        benefit_only_apply_to_cheapest_n_matches=1,
    )
    lines = [line("50", item=1), line("50", item=1), line("8", item=2), line("5", item=2)]
    assert run(lines, deal) == ["50", "50", "8", "0.00"]
    lines += [line("50", item=1), line("50", item=1)]
    assert run(lines, deal) == ["50", "50", "0.00", "0.00", "50", "50"]


# -- order and consumption -------------------------------------------------------------------


def test_discounts_apply_in_position_order_and_lines_are_used_once():
    first = rule(1, position=2, benefit_discount_matching_percent=10)
    second = rule(2, position=1, benefit_discount_matching_percent=50)
    assert run([line("10")], first, second) == ["5.00"]
    same_position = [
        rule(2, benefit_discount_matching_percent=10),
        rule(1, benefit_discount_matching_percent=50),
    ]
    assert run([line("10")], *same_position) == ["5.00"]


def test_a_rule_that_does_not_match_leaves_lines_for_the_next():
    picky = rule(1, position=1, condition_min_count=5, benefit_discount_matching_percent=90)
    fallback = rule(2, position=2, benefit_discount_matching_percent=10)
    assert run([line("10"), line("10")], picky, fallback) == ["9.00", "9.00"]


# -- subevent modes --------------------------------------------------------------------------


def test_mixed_counts_lines_of_all_subevents_together():
    group = rule(condition_min_count=2, benefit_discount_matching_percent=50)
    assert run([line("10", subevent=1), line("10", subevent=2)], group) == ["5.00", "5.00"]


def test_same_groups_per_subevent():
    group = rule(subevent_mode="same", condition_min_count=2, benefit_discount_matching_percent=50)
    lines = [line("10", subevent=1), line("10", subevent=2), line("10", subevent=1)]
    assert run(lines, group) == ["5.00", "10", "5.00"]


def test_same_with_min_value_per_subevent():
    group = rule(
        subevent_mode="same", condition_min_value="15", benefit_discount_matching_percent=50
    )
    lines = [line("10", subevent=1), line("10", subevent=2), line("10", subevent=1)]
    assert run(lines, group) == ["5.00", "10", "5.00"]


def test_distinct_needs_different_subevents():
    group = rule(
        subevent_mode="distinct", condition_min_count=2, benefit_discount_matching_percent=50
    )
    assert run([line("10", subevent=1), line("10", subevent=1)], group) == ["10", "10"]
    assert run([line("10", subevent=1), line("10", subevent=2)], group) == ["5.00", "5.00"]


def test_distinct_makes_as_many_groups_as_possible():
    deal = rule(
        subevent_mode="distinct",
        condition_min_count=2,
        benefit_discount_matching_percent=100,
        benefit_only_apply_to_cheapest_n_matches=1,
    )
    lines = [line("10", subevent=1), line("10", subevent=1), line("10", subevent=1)]
    lines += [line("10", subevent=2), line("10", subevent=3)]
    result = run(lines, deal)
    assert result.count("0.00") == 2


def test_distinct_left_over_lines_join_a_group_without_their_subevent():
    group = rule(
        subevent_mode="distinct", condition_min_count=2, benefit_discount_matching_percent=50
    )
    lines = [line("10", subevent=1), line("10", subevent=2), line("10", subevent=3)]
    assert run(lines, group) == ["5.00", "5.00", "5.00"]
    lines = [line("10", subevent=1), line("10", subevent=2), line("10", subevent=2)]
    # Two groups impossible (subevent 1 has one line); the second line of 2 cannot join.
    assert sorted(run(lines, group)) == ["10", "5.00", "5.00"]


# -- from the ORM object ---------------------------------------------------------------------


def test_from_model_reads_every_field():
    class Obj:
        pass

    class Item:
        def __init__(self, id: int) -> None:
            self.id = id

    obj = Obj()
    values = {
        "id": 3,
        "position": 4,
        "active": True,
        "all_sales_channels": False,
        "limit_sales_channels": ["web"],
        "available_from": NOW,
        "available_until": None,
        "subevent_mode": "same",
        "subevent_date_from": None,
        "subevent_date_until": NOW,
        "condition_all_products": False,
        "condition_limit_products": [Item(1)],
        "condition_apply_to_addons": False,
        "condition_ignore_voucher_discounted": True,
        "condition_min_count": 2,
        "condition_min_value": D("0.00"),
        "benefit_discount_matching_percent": D("12.50"),
        "benefit_only_apply_to_cheapest_n_matches": 1,
        "benefit_same_products": False,
        "benefit_limit_products": [Item(2), Item(5)],
        "benefit_apply_to_addons": False,
        "benefit_ignore_voucher_discounted": True,
    }
    obj.__dict__.update(values)
    converted = DiscountRule.from_model(obj)
    assert converted.limit_sales_channels == frozenset({"web"})
    assert converted.condition_limit_products == frozenset({1})
    assert converted.benefit_limit_products == frozenset({2, 5})
    for key, value in values.items():
        if not isinstance(value, list):
            assert getattr(converted, key) == value, key


# -- properties ------------------------------------------------------------------------------

money = st.decimals(min_value=0, max_value=500, places=2)
lines_strategy = st.lists(
    st.builds(
        CartLine,
        item_id=st.integers(1, 4),
        variation_id=st.none(),
        subevent_id=st.one_of(st.none(), st.integers(1, 3)),
        subevent_date_from=st.one_of(st.none(), st.just(NOW + DAY)),
        price=money,
        is_addon=st.booleans(),
        voucher_discounted=st.booleans(),
    ),
    max_size=12,
)
rules_strategy = st.lists(
    st.builds(
        DiscountRule,
        id=st.integers(1, 1000),
        position=st.integers(0, 3),
        active=st.booleans(),
        all_sales_channels=st.booleans(),
        limit_sales_channels=st.frozensets(st.sampled_from(["web", "api"])),
        subevent_mode=st.sampled_from(["mixed", "same", "distinct"]),
        condition_all_products=st.booleans(),
        condition_limit_products=st.frozensets(st.integers(1, 4)),
        condition_apply_to_addons=st.booleans(),
        condition_ignore_voucher_discounted=st.booleans(),
        condition_min_count=st.integers(0, 4),
        condition_min_value=st.sampled_from([D("0"), D("0"), D("25.00"), D("100.00")]),
        benefit_discount_matching_percent=st.decimals(min_value=0, max_value=100, places=2),
        benefit_only_apply_to_cheapest_n_matches=st.one_of(st.none(), st.integers(1, 3)),
        benefit_same_products=st.booleans(),
        benefit_limit_products=st.frozensets(st.integers(1, 4)),
        benefit_apply_to_addons=st.booleans(),
        benefit_ignore_voucher_discounted=st.booleans(),
    ),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(lines_strategy, rules_strategy, st.sampled_from(["web", "api"]))
def test_properties(lines, rules, channel):
    results = compute(lines, channel, NOW, rules)
    assert len(results) == len(lines)
    assert sum(r.price for r in results) <= sum(line.price for line in lines)
    for original, result in zip(lines, results, strict=True):
        assert D(0) <= result.price <= original.price
        if result.discount_id is None:
            assert result.price == original.price
    # Deterministic, also with the discounts given in another order.
    assert compute(lines, channel, NOW, rules) == results
    assert compute(lines, channel, NOW, list(reversed(rules))) == results or _ambiguous(rules)


def _ambiguous(rules: list[DiscountRule]) -> bool:
    """Two rules with the same position and id have no defined order between them."""
    keys = [(r.position, r.id) for r in rules]
    return len(keys) != len(set(keys))


@given(lines_strategy)
def test_lines_not_matched_keep_their_price(lines):
    only_item_9 = rule(
        condition_all_products=False,
        condition_limit_products={9},
        benefit_discount_matching_percent=100,
    )
    assert apply_discounts(lines, "web", NOW, [only_item_9]) == [line.price for line in lines]


@given(lines_strategy, st.decimals(min_value=0, max_value=100, places=2))
def test_unconditional_percentage_reduces_every_line(lines, percent):
    everything = rule(benefit_discount_matching_percent=percent)
    prices = apply_discounts(lines, "web", NOW, [everything])
    assert prices == [reduce(line.price, percent) for line in lines]
