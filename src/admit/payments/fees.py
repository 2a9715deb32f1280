"""Payment fees: what a payment method adds to an order, and the settings that say so.

Why one module: the shop's checkout page, the headless checkout's price preview (the cart),
the order it writes and the order's mails must all name the same amount, so the amount is
computed here and nowhere else (:func:`payment_fee`), from the order's total and the method.

The rules, as the reference has them for a method's fee:

- ``payment_<method>__fee_abs`` (an amount) and ``payment_<method>__fee_percent`` (a
  percentage of the total) are added together;
- with ``payment_<method>__fee_reverse_calc`` (on by default) the percentage is taken so that
  the organizer receives the total plus the fixed part *after* the payment service took its
  percentage of everything the buyer pays: ``fee = (total + abs) / (1 - percent/100) - total``;
- the fee is rounded (half up) to the currency's places; a total of zero has no fee;
- the order carries it as one fee of type ``payment``, taxed by the event's
  ``tax_rule_payment``: ``default`` (the event's default tax rule, its ``default`` flag;
  untaxed when the event has none) or ``none`` (untaxed). The fee's value is its gross amount,
  as every order fee's value is.

Only methods that take fees have the settings (:attr:`Provider.takes_fees`): ``free`` never has
a fee, and neither has ``giftcard``. A checkout paid with a gift card carries no fee at all,
also when the card leaves a rest to bank transfer: the fee belongs to the method the buyer
chose, and the order is priced before the card's credit is known.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal

from admit.catalog.taxes.compute import currency_places
from admit.events.settings import EVENT_SETTINGS, PAYMENT, Amount, Percent, value
from admit.kit.resources.settings import Setting
from admit.models import Event, TaxRule
from admit.orders.schemas import FeeIn

ZERO = Decimal("0.00")
HUNDRED = Decimal(100)
TAX_RULE_PAYMENT = "tax_rule_payment"
FEE_TYPE = "payment"
FEE_LABEL = "Payment fee"
REVERSE_100 = (
    "A percentage of 100 cannot be calculated back: nothing would be left for the organizer."
)


def abs_key(method: str) -> str:
    return f"payment_{method}__fee_abs"


def percent_key(method: str) -> str:
    return f"payment_{method}__fee_percent"


def reverse_key(method: str) -> str:
    return f"payment_{method}__fee_reverse_calc"


EVENT_SETTINGS.register(
    Setting(
        key=TAX_RULE_PAYMENT,
        annotation=Literal["default", "none"],
        default="default",
        label="Tax rule for payment fees",
        permission=PAYMENT,
        help_text="default: the event's default tax rule; none: payment fees are not taxed.",
    ),
)
_WITH_FEES: list[str] = []


def register_settings(method: str) -> None:
    """Declares the fee settings of a method that takes fees (``providers.register`` calls it),
    and the rule that a reverse calculation needs a percentage below 100."""
    EVENT_SETTINGS.register(
        Setting(abs_key(method), Amount, "0.00", "Additional fee: fixed amount", PAYMENT),
        Setting(percent_key(method), Percent, "0.00", "Additional fee: percentage", PAYMENT),
        Setting(
            reverse_key(method),
            bool,
            True,
            "Calculate the fee from the total value including the fee",
            PAYMENT,
            help_text="The percentage is taken so that the organizer receives the total after "
            "the payment service took its percentage of everything the buyer pays.",
        ),
    )
    _WITH_FEES.append(method)


@EVENT_SETTINGS.rule
def _reverse_needs_less_than_all(merged: Mapping[str, Any]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for method in _WITH_FEES:
        if merged[reverse_key(method)] and Decimal(str(merged[percent_key(method)])) >= HUNDRED:
            errors[percent_key(method)] = [REVERSE_100]
    return errors


def fee_amount(
    total: Decimal, fixed: Decimal, percent: Decimal, reverse: bool, places: int = 2
) -> Decimal:
    """The fee for an order of ``total`` (the pure rule of the module's docstring): ``fixed``
    plus ``percent`` of the total, or with ``reverse`` the amount that leaves the organizer
    ``total + fixed`` once ``percent`` of all is taken; rounded half up to ``places``; zero
    for a total of zero (or less) and for a reverse percentage of 100 or more."""
    if total <= 0 or (fixed <= 0 and percent <= 0):
        return ZERO
    if reverse:
        if percent >= HUNDRED:
            return ZERO  # refused by the settings' rule; never a division by zero
        raw = (total + fixed) / (1 - percent / HUNDRED) - total
    else:
        raw = total * percent / HUNDRED + fixed
    return max(raw.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP), ZERO)


def takes_fees(method: str) -> bool:
    return method in _WITH_FEES


def configured(event: Event, method: str) -> bool:
    """Whether the event charges a fee for ``method`` (any fixed part or percentage)."""
    if not takes_fees(method):
        return False
    return Decimal(str(value(event, abs_key(method)))) > 0 or (
        Decimal(str(value(event, percent_key(method)))) > 0
    )


def payment_fee(event: Event, method: str | None, total: Decimal) -> Decimal:
    """The fee ``method`` adds to an order of ``total`` at ``event`` (zero for ``free``, a gift
    card, an unknown method or a zero total)."""
    if method is None or total <= 0 or not configured(event, method):
        return ZERO
    return fee_amount(
        total,
        Decimal(str(value(event, abs_key(method)))),
        Decimal(str(value(event, percent_key(method)))),
        bool(value(event, reverse_key(method))),
        currency_places(event.currency),
    )


def fee_tax_rule(event: Event, rules: Mapping[int, TaxRule]) -> int | None:
    """The tax rule of payment fees (``tax_rule_payment``): the event's default rule, or none."""
    if value(event, TAX_RULE_PAYMENT) == "none":
        return None
    defaults = sorted(r.id for r in rules.values() if r.default)
    return defaults[0] if defaults else None


def fees_for(
    event: Event, method: str | None, label: str = ""
) -> Callable[[Decimal, Mapping[int, TaxRule]], list[FeeIn]] | None:
    """What ``orders.create.create_order`` adds once it knows the total: the method's fee as
    an order fee (none when the method charges nothing, so the order is written as before)."""
    if method is None or not configured(event, method):
        return None

    def fees(total: Decimal, rules: Mapping[int, TaxRule]) -> list[FeeIn]:
        amount = payment_fee(event, method, total)
        if amount <= 0:
            return []
        return [
            FeeIn(
                fee_type=FEE_TYPE,
                value=amount,
                description=label,
                internal_type=method,
                tax_rule=fee_tax_rule(event, rules),
            )
        ]

    return fees


FEE_KINDS = {
    "payment": FEE_LABEL,
    "shipping": "Shipping fee",
    "service": "Service fee",
    "cancellation": "Cancellation fee",
    "insurance": "Insurance",
    "late": "Late fee",
    "giftcard": "Gift card",
    "other": "Other fees",
}


def fee_label(
    fee_type: str, description: str, translate: Callable[[str], str] = lambda text: text
) -> str:
    """How a buyer sees an order fee: its kind, and the method (or text) it is for, each
    through ``translate`` (the shop's catalogue for the order's language)."""
    kind = translate(FEE_KINDS.get(fee_type, "Fee"))
    return f"{kind} ({translate(description)})" if description else kind
