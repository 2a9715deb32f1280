"""Which tax a sale bears (``catalog/taxes/rules.py``): the reference's documented cases as
tables — every custom-rule action and address type, EU reverse charge at home, in another
member state and outside the EU, validated and unvalidated VAT IDs, keep_gross on and off —
and properties over many prices."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from admit.catalog.taxes.compute import compute_tax, round_amount
from admit.catalog.taxes.rules import (
    EU_COUNTRIES,
    Buyer,
    SaleBlocked,
    applicable,
    retax,
    tax_sale,
)

D = Decimal
NINETEEN = Decimal("19.00")


@dataclass
class Rule:
    rate: Decimal = NINETEEN
    code: str | None = "S/standard"
    price_includes_tax: bool = True
    eu_reverse_charge: bool = False
    home_country: str = "DE"
    keep_gross_if_rate_changes: bool = False
    custom_rules: list[dict[str, Any]] | None = field(default=None)


def buyer(country: str = "", business: bool = False, vat_id: str = "", ok: bool = False) -> Buyer:
    return Buyer(country=country, is_business=business, vat_id=vat_id, vat_id_validated=ok)


CUSTOM = [
    {"country": "DE", "address_type": "individual", "action": "vat"},
    {"country": "AT", "address_type": "business_vat_id", "action": "reverse"},
    {
        "country": "AT",
        "address_type": "business",
        "action": "vat",
        "rate": "20.00",
        "code": "S/reduced",
    },
    {"country": "CH", "address_type": "", "action": "no", "code": "O"},
    {"country": "EU", "address_type": "individual", "action": "vat", "rate": "10.00"},
    {"country": "US", "address_type": "", "action": "block"},
    {"country": "GB", "address_type": "business", "action": "require_approval"},
    {"country": "ZZ", "address_type": "business", "action": "no"},
]
# eu_reverse_charge is set as well: custom rules make the reference ignore it.
WITH_CUSTOM = Rule(custom_rules=CUSTOM, eu_reverse_charge=True)


@pytest.mark.parametrize(
    ("who", "action", "rate", "code", "index"),
    [
        (None, "vat", "19.00", "S/standard", None),  # no invoice address: the rule's own rate
        (buyer("DE"), "vat", "19.00", "S/standard", 0),
        (buyer("DE", True), "no", "0.00", "S/standard", 7),  # no code given: the rule's
        (buyer("AT", True, "ATU1", True), "reverse", "0.00", "AE", 1),  # reverse: AE
        (buyer("AT", True, "ATU1", False), "vat", "20.00", "S/reduced", 2),  # not validated
        (buyer("AT", True, "", True), "vat", "20.00", "S/reduced", 2),  # validated, no ID
        (buyer("AT"), "vat", "10.00", "S/standard", 4),  # EU, individual, own rate
        (buyer("FR"), "vat", "10.00", "S/standard", 4),
        (buyer("FR", True, "FR1", True), "no", "0.00", "S/standard", 7),  # not reversed
        (buyer("CH"), "no", "0.00", "O", 3),
        (buyer("CH", True, "CHE1", True), "no", "0.00", "O", 3),
        (buyer("US"), "block", "19.00", "S/standard", 5),
        (buyer("GB", True), "require_approval", "19.00", "S/standard", 6),
        (buyer("GB"), "vat", "19.00", "S/standard", None),  # nothing matches: no "O" either
        (buyer("", True), "no", "0.00", "S/standard", 7),  # ZZ matches an empty country
        (buyer(""), "vat", "19.00", "S/standard", None),
    ],
)
def test_custom_rules(who, action, rate, code, index):
    applied = applicable(WITH_CUSTOM, who)
    assert (applied.action, applied.rate, applied.code, applied.custom_rule) == (
        action,
        D(rate),
        code,
        index,
    )


def test_a_custom_rule_with_its_own_rate_and_code_for_require_approval():
    rule = Rule(
        custom_rules=[
            {
                "country": "ZZ",
                "address_type": "",
                "action": "require_approval",
                "rate": "7.00",
                "code": "S/reduced",
            }
        ]
    )
    applied = applicable(rule, buyer("NL"))
    assert (applied.rate, applied.code, applied.requires_approval) == (D("7"), "S/reduced", True)


def test_a_reverse_custom_rule_with_a_code_keeps_its_code():
    rule = Rule(
        custom_rules=[{"country": "EU", "address_type": "", "action": "reverse", "code": "K"}]
    )
    assert applicable(rule, buyer("IT")).code == "K"


EU_RULE = Rule(eu_reverse_charge=True, home_country="DE")


@pytest.mark.parametrize(
    ("who", "action", "rate", "code"),
    [
        (None, "vat", "19.00", "S/standard"),
        (buyer(""), "vat", "19.00", "S/standard"),  # no country: VAT
        (buyer("DE", True, "DE1", True), "vat", "19.00", "S/standard"),  # home country
        (buyer("DE"), "vat", "19.00", "S/standard"),
        (buyer("FR", True, "FR1", True), "reverse", "0.00", "AE"),  # another member state
        (buyer("GR", True, "EL1", True), "reverse", "0.00", "AE"),
        (buyer("FR", True, "FR1", False), "vat", "19.00", "S/standard"),  # not validated
        (buyer("FR", True, "", True), "vat", "19.00", "S/standard"),  # no ID
        (buyer("FR", False, "FR1", True), "vat", "19.00", "S/standard"),  # not a business
        (buyer("FR"), "vat", "19.00", "S/standard"),
        (buyer("US"), "no", "0.00", "O"),  # outside the EU: no VAT for anyone
        (buyer("CH", True, "CHE1", True), "no", "0.00", "O"),
        (buyer("GB"), "no", "0.00", "O"),
    ],
)
def test_eu_reverse_charge(who, action, rate, code):
    applied = applicable(EU_RULE, who)
    assert (applied.action, applied.rate, applied.code) == (action, D(rate), code)


def test_an_empty_custom_rule_list_leaves_reverse_charge_on():
    assert applicable(replace(EU_RULE, custom_rules=[]), buyer("US")).code == "O"


@pytest.mark.parametrize("who", [None, buyer("US"), buyer("FR", True, "FR1", True)])
def test_a_plain_rule_applies_its_rate_to_everyone(who):
    applied = applicable(Rule(), who)
    assert (applied.action, applied.rate, applied.code) == ("vat", D("19.00"), "S/standard")


def test_the_member_states():
    assert len(EU_COUNTRIES) == 27 and "GB" not in EU_COUNTRIES and "GR" in EU_COUNTRIES


# -- prices -----------------------------------------------------------------------------------

REVERSE = buyer("AT", True, "ATU1", True)  # reverse charge under WITH_CUSTOM
AT_20 = buyer("AT", True)  # 20 %
EU_10 = buyer("FR")  # 10 %
NO_VAT = buyer("CH")
SAME = buyer("DE")


@pytest.mark.parametrize(
    ("includes", "keep_gross", "who", "price", "gross", "net", "tax", "rate"),
    [
        # 119.00 is the gross price at the rule's 19 %
        (True, False, SAME, "119.00", "119.00", "100.00", "19.00", "19"),
        (True, True, SAME, "119.00", "119.00", "100.00", "19.00", "19"),
        (True, False, REVERSE, "119.00", "100.00", "100.00", "0.00", "0"),  # the net stays
        (True, True, REVERSE, "119.00", "119.00", "119.00", "0.00", "0"),  # the gross stays
        (True, False, NO_VAT, "119.00", "100.00", "100.00", "0.00", "0"),
        (True, True, NO_VAT, "119.00", "119.00", "119.00", "0.00", "0"),
        (True, False, AT_20, "119.00", "120.00", "100.00", "20.00", "20"),
        (True, True, AT_20, "119.00", "119.00", "99.17", "19.83", "20"),
        (True, False, EU_10, "119.00", "110.00", "100.00", "10.00", "10"),
        (True, True, EU_10, "119.00", "119.00", "108.18", "10.82", "10"),
        # 100.00 is the net price at the rule's 19 %
        (False, False, SAME, "100.00", "119.00", "100.00", "19.00", "19"),
        (False, False, REVERSE, "100.00", "100.00", "100.00", "0.00", "0"),
        (False, True, REVERSE, "100.00", "119.00", "119.00", "0.00", "0"),
        (False, False, AT_20, "100.00", "120.00", "100.00", "20.00", "20"),
        (False, True, AT_20, "100.00", "119.00", "99.17", "19.83", "20"),
    ],
)
def test_catalog_prices(includes, keep_gross, who, price, gross, net, tax, rate):
    rule = replace(WITH_CUSTOM, price_includes_tax=includes, keep_gross_if_rate_changes=keep_gross)
    sale = tax_sale(rule, who, D(price), gross_given=False)
    assert (sale.gross, sale.net, sale.tax, sale.rate) == (D(gross), D(net), D(tax), D(rate))


@pytest.mark.parametrize("keep_gross", [False, True])
@pytest.mark.parametrize("includes", [False, True])
@pytest.mark.parametrize(
    ("who", "net", "tax", "code"),
    [
        (SAME, "42.02", "7.98", "S/standard"),
        (REVERSE, "50.00", "0.00", "AE"),
        (AT_20, "41.67", "8.33", "S/reduced"),
        (NO_VAT, "50.00", "0.00", "O"),
    ],
)
def test_a_given_gross_price_stays_whatever_the_rate(keep_gross, includes, who, net, tax, code):
    rule = replace(WITH_CUSTOM, price_includes_tax=includes, keep_gross_if_rate_changes=keep_gross)
    sale = tax_sale(rule, who, D("50.00"), gross_given=True)
    assert (sale.gross, sale.net, sale.tax, sale.code) == (D("50.00"), D(net), D(tax), code)


def test_no_rule_no_tax():
    sale = tax_sale(None, REVERSE, D("12.00"), gross_given=False)
    assert (sale.gross, sale.tax, sale.rate, sale.code) == (D("12.00"), D(0), D(0), None)


@pytest.mark.parametrize("gross_given", [False, True])
def test_a_blocking_rule_refuses_the_sale(gross_given):
    with pytest.raises(SaleBlocked) as caught:
        tax_sale(WITH_CUSTOM, buyer("US"), D("10.00"), gross_given=gross_given)
    assert caught.value.applied.custom_rule == 5
    with pytest.raises(SaleBlocked):
        retax(WITH_CUSTOM, buyer("US"), D("10.00"), D("1.60"), keep="keep_net")


def test_require_approval_is_reported_with_the_price():
    sale = tax_sale(WITH_CUSTOM, buyer("GB", True), D("119.00"), gross_given=False)
    assert sale.requires_approval and (sale.gross, sale.tax) == (D("119.00"), D("19.00"))
    assert not tax_sale(WITH_CUSTOM, SAME, D("1"), gross_given=False).requires_approval


@pytest.mark.parametrize(
    ("keep", "who", "gross", "tax", "code"),
    [
        ("keep_net", REVERSE, "100.00", "0.00", "AE"),
        ("keep_gross", REVERSE, "119.00", "0.00", "AE"),
        ("keep_net", AT_20, "120.00", "20.00", "S/reduced"),
        ("keep_gross", AT_20, "119.00", "19.83", "S/reduced"),
        ("keep_net", SAME, "119.00", "19.00", "S/standard"),
    ],
)
def test_recalculating_a_sold_line(keep, who, gross, tax, code):
    sale = retax(WITH_CUSTOM, who, D("119.00"), D("19.00"), keep=keep)
    assert (sale.gross, sale.tax, sale.code) == (D(gross), D(tax), code)


# -- properties -------------------------------------------------------------------------------

ACTIONS = ["vat", "vat_own_rate", "reverse", "no", "require_approval"]
prices = st.decimals(min_value=D("-9999999.99"), max_value=D("99999999.99"), places=2)
rates = st.decimals(min_value=0, max_value=100, places=2)


def _rule_for(action: str, rate: Decimal, own: Decimal, includes: bool, keep: bool) -> Rule:
    entry: dict[str, Any] = {"country": "ZZ", "address_type": "", "action": action}
    if action == "vat_own_rate":
        entry = {**entry, "action": "vat", "rate": str(own)}
    return Rule(
        rate=rate,
        price_includes_tax=includes,
        keep_gross_if_rate_changes=keep,
        custom_rules=[entry],
    )


@given(
    prices,
    rates,
    rates,
    st.booleans(),
    st.booleans(),
    st.sampled_from([*ACTIONS, "block"]),
    st.booleans(),
)
def test_gross_is_net_plus_tax_for_every_combination(
    price, rate, own, includes, keep, action, gross_given
):
    rule = _rule_for(action, rate, own, includes, keep)
    applied = applicable(rule, SAME)
    if action == "block":
        with pytest.raises(SaleBlocked):
            tax_sale(rule, SAME, price, gross_given=gross_given)
        return
    sale = tax_sale(rule, SAME, price, gross_given=gross_given)
    assert sale.requires_approval == (action == "require_approval")
    assert sale.gross == sale.net + sale.tax
    assert sale.rate == applied.rate
    if applied.rate == 0:
        assert sale.tax == 0 and sale.gross == sale.net
    at_own_rate = compute_tax(price, rule.rate, includes)
    if gross_given:
        assert sale.gross == round_amount(price)  # a given price is gross, and stays
    elif applied.rate == rule.rate:
        assert sale == replace(sale, gross=at_own_rate.gross, net=at_own_rate.net)
    elif keep:
        assert sale.gross == at_own_rate.gross  # keep_gross: the gross amount stays
    else:
        assert sale.net == at_own_rate.net  # otherwise the net amount stays


@given(prices, rates, st.sampled_from(ACTIONS), st.sampled_from(["keep_net", "keep_gross"]))
def test_recalculated_lines_add_up(price, rate, action, keep):
    rule = _rule_for(action, rate, D("7.00"), True, False)
    sold = compute_tax(price, D("19.00"), True)
    sale = retax(rule, SAME, sold.gross, sold.tax, keep=keep)
    assert sale.gross == sale.net + sale.tax
    if keep == "keep_gross":
        assert sale.gross == sold.gross
    else:
        assert sale.net == sold.net
