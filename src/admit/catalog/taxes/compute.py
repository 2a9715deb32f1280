"""Splitting a price into net, tax and gross, rounded per line as the reference does.

The rounded tax is computed first and the other amount derived from it, so ``gross == net +
tax`` holds exactly whichever way the price was given.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

# ISO 4217 minor units where they differ from two.
_MINOR_UNITS: dict[str, int] = {
    **dict.fromkeys(
        "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF".split(), 0
    ),
    **dict.fromkeys("BHD IQD JOD KWD LYD OMR TND".split(), 3),
    **dict.fromkeys("CLF UYW".split(), 4),
}

HUNDRED = Decimal(100)


def currency_places(currency: str) -> int:
    """Decimal places of ``currency`` (ISO 4217 code); 2 for codes not listed otherwise."""
    return _MINOR_UNITS.get(currency.upper(), 2)


def round_amount(value: Decimal, places: int = 2) -> Decimal:
    """Half-up (away from zero on ties) to ``places`` decimal places."""
    return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class TaxedPrice:
    gross: Decimal
    net: Decimal
    tax: Decimal
    rate: Decimal


def compute_tax(
    price: Decimal, rate: Decimal, price_includes_tax: bool, places: int = 2
) -> TaxedPrice:
    """``price`` is the gross amount when ``price_includes_tax``, else the net amount.

    ``rate`` is a percentage (19 for 19 %) and must not be negative.
    """
    if rate < 0:
        raise ValueError("A tax rate cannot be negative.")
    if price_includes_tax:
        gross = round_amount(price, places)
        tax = round_amount(gross * rate / (HUNDRED + rate), places)
        return TaxedPrice(gross=gross, net=gross - tax, tax=tax, rate=rate)
    net = round_amount(price, places)
    tax = round_amount(net * rate / HUNDRED, places)
    return TaxedPrice(gross=net + tax, net=net, tax=tax, rate=rate)
