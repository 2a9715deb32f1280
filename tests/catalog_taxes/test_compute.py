"""Net / tax / gross computation: worked examples and properties over many prices."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from admit.catalog.taxes.compute import compute_tax, currency_places, round_amount

D = Decimal


@pytest.mark.parametrize(
    ("price", "rate", "includes", "gross", "net", "tax"),
    [
        ("100.00", "19", True, "100.00", "84.03", "15.97"),
        ("84.03", "19", False, "100.00", "84.03", "15.97"),
        ("23.00", "7", True, "23.00", "21.50", "1.50"),
        ("10.00", "0", True, "10.00", "10.00", "0.00"),
        ("10.00", "0", False, "10.00", "10.00", "0.00"),
        ("0.00", "19", True, "0.00", "0.00", "0.00"),
        ("1.00", "100", True, "1.00", "0.50", "0.50"),
        ("0.01", "100", True, "0.01", "0.00", "0.01"),  # 0.005 rounds half up
        ("0.05", "10", False, "0.06", "0.05", "0.01"),  # 0.005 rounds half up
        ("12.345", "19", False, "14.70", "12.35", "2.35"),  # the price itself is rounded
        ("-100.00", "19", True, "-100.00", "-84.03", "-15.97"),
    ],
)
def test_examples(price, rate, includes, gross, net, tax):
    result = compute_tax(D(price), D(rate), includes)
    assert (result.gross, result.net, result.tax) == (D(gross), D(net), D(tax))
    assert result.rate == D(rate)


@pytest.mark.parametrize(
    ("currency", "places"),
    [
        ("JPY", 0),
        ("jpy", 0),
        ("KRW", 0),
        ("KWD", 3),
        ("BHD", 3),
        ("EUR", 2),
        ("USD", 2),
        ("CLF", 4),
        ("XYZ", 2),
    ],
)
def test_currency_places(currency, places):
    assert currency_places(currency) == places


def test_zero_place_currency():
    result = compute_tax(D("1000"), D("10"), True, places=0)
    assert (result.gross, result.net, result.tax) == (D("1000"), D("909"), D("91"))
    assert str(result.tax) == "91"


def test_three_place_currency():
    result = compute_tax(D("10.000"), D("5"), True, places=3)
    assert (result.net, result.tax) == (D("9.524"), D("0.476"))


def test_negative_rate_is_refused():
    with pytest.raises(ValueError):
        compute_tax(D("10"), D("-1"), True)


def test_round_amount_is_half_up():
    assert round_amount(D("0.125")) == D("0.13")
    assert round_amount(D("-0.125")) == D("-0.13")
    assert round_amount(D("2.5"), 0) == D("3")


prices = st.decimals(min_value=0, max_value=D("99999999.99"), places=2)
rates = st.decimals(min_value=0, max_value=100, places=2)
places = st.sampled_from([0, 2, 3])


@given(prices, rates, st.booleans(), places)
def test_gross_is_net_plus_tax(price, rate, includes, digits):
    result = compute_tax(price, rate, includes, digits)
    assert result.gross == result.net + result.tax
    assert result.tax >= 0 and result.net >= 0
    assert result.tax <= result.gross
    unit = D(1).scaleb(-digits)
    for amount in (result.gross, result.net, result.tax):
        assert amount == amount.quantize(unit)


@given(prices, rates)
def test_excluding_then_including_gives_the_net_back(net, rate):
    forward = compute_tax(net, rate, price_includes_tax=False)
    back = compute_tax(forward.gross, rate, price_includes_tax=True)
    assert back == forward


@given(prices, rates)
def test_including_then_excluding_is_within_one_cent(gross, rate):
    forward = compute_tax(gross, rate, price_includes_tax=True)
    back = compute_tax(forward.net, rate, price_includes_tax=False)
    assert back.net == forward.net
    assert abs(back.gross - forward.gross) <= D("0.01")


@given(prices, rates, st.booleans())
def test_tax_grows_with_the_rate(price, rate, includes):
    lower = compute_tax(price, rate, includes)
    higher = compute_tax(price, rate + D("1"), includes)
    assert higher.tax >= lower.tax
