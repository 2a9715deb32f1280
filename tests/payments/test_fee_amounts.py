"""``payments/fees.py``: the one function that says what a payment method adds to an order."""

from __future__ import annotations

from decimal import Decimal as D
from types import SimpleNamespace

import pytest

from admit.payments import fees


@pytest.mark.parametrize(
    ("total", "fixed", "percent", "reverse", "places", "fee"),
    [
        # a fixed amount only (the percentage off: reverse or not, the same)
        ("23.00", "1.50", "0", False, 2, "1.50"),
        ("23.00", "1.50", "0", True, 2, "1.50"),
        # a percentage of the total: 2.9 % of 23.00 = 0.667 -> 0.67
        ("23.00", "0", "2.90", False, 2, "0.67"),
        # both: 0.667 + 0.25 = 0.917 -> 0.92
        ("23.00", "0.25", "2.90", False, 2, "0.92"),
        # reverse: (23.00 + 0.25) / 0.971 - 23.00 = 0.94490... -> 0.94; the organizer keeps
        # 23.94 * 0.971 = 23.246 ≈ 23.25 (total plus the fixed part)
        ("23.00", "0.25", "2.90", True, 2, "0.94"),
        # reverse of 10 %: 100 / 0.9 - 100 = 11.111... -> 11.11
        ("100.00", "0", "10", True, 2, "11.11"),
        # half up at the currency's places: 1 % of 0.50 = 0.005 -> 0.01
        ("0.50", "0", "1", False, 2, "0.01"),
        # 2.5 % of 10.10 = 0.2525 -> 0.25 (not 0.26: only the third place counts)
        ("10.10", "0", "2.5", False, 2, "0.25"),
        # a currency without minor units (JPY): whole amounts, half up: 2.5 % of 1100 = 27.5 -> 28
        ("1100", "0", "2.5", False, 0, "28"),
        # nothing to pay, nothing configured: no fee
        ("0.00", "1.50", "2.90", True, 2, "0.00"),
        ("23.00", "0", "0", True, 2, "0.00"),
        # a reverse percentage of 100 is refused by the settings; never a division by zero
        ("23.00", "0", "100", True, 2, "0.00"),
    ],
)
def test_fee_amount(total, fixed, percent, reverse, places, fee):
    got = fees.fee_amount(D(total), D(fixed), D(percent), reverse, places)
    assert str(got) == fee  # the amount, at the currency's places


def _event(currency: str = "EUR", **settings: object) -> SimpleNamespace:
    return SimpleNamespace(currency=currency, settings=settings)


def test_the_event_settings_decide_the_fee():
    event = _event(
        payment_banktransfer__fee_abs="0.25",
        payment_banktransfer__fee_percent="2.90",
    )
    # the reference's default: calculated back
    assert fees.payment_fee(event, "banktransfer", D("23.00")) == D("0.94")
    event.settings["payment_banktransfer__fee_reverse_calc"] = False
    assert fees.payment_fee(event, "banktransfer", D("23.00")) == D("0.92")
    # free and gift cards never take a fee, nor does an unknown method, a zero total or none
    for method in ("free", "giftcard", "nope", None):
        assert fees.payment_fee(event, method, D("23.00")) == 0
    assert fees.payment_fee(event, "banktransfer", D("0.00")) == 0
    assert fees.configured(event, "banktransfer") and not fees.configured(_event(), "banktransfer")
    # the currency's places: yen in whole amounts
    yen = _event("JPY", payment_banktransfer__fee_percent="2.5")
    yen.settings["payment_banktransfer__fee_reverse_calc"] = False
    assert fees.payment_fee(yen, "banktransfer", D("1100")) == D("28")


def test_the_fee_tax_rule_is_the_events_default_or_none():
    rules = {
        3: SimpleNamespace(id=3, default=False),
        7: SimpleNamespace(id=7, default=True),
    }
    assert fees.fee_tax_rule(_event(), rules) == 7
    assert fees.fee_tax_rule(_event(tax_rule_payment="none"), rules) is None
    assert fees.fee_tax_rule(_event(), {3: rules[3]}) is None  # no default rule: untaxed


def test_an_order_fee_only_for_a_method_with_a_fee():
    event = _event(payment_banktransfer__fee_abs="1.50")
    assert fees.fees_for(event, "giftcard") is None
    assert fees.fees_for(_event(), "banktransfer") is None
    make = fees.fees_for(event, "banktransfer", "Bank transfer")
    assert make is not None
    (fee,) = make(D("23.00"), {})
    assert (fee.fee_type, fee.value, fee.internal_type, fee.tax_rule) == (
        "payment",
        D("1.50"),
        "banktransfer",
        None,
    )
    assert make(D("0.00"), {}) == []
    assert fees.fee_label("payment", "Bank transfer") == "Payment fee (Bank transfer)"
