"""Which tax a sale bears: a tax rule and the buyer's invoice address decide the rate, the tax
code, and whether the sale may happen at all.

Pure functions (no database, no HTTP), so every path that prices a sale — order creation, its
fast lane, order changes, fees — asks the same question the same way. The order of decisions is
the reference's:

1. A rule with ``custom_rules`` takes the first entry matching the buyer (country: a code,
   ``EU`` = any member state, ``ZZ`` = anywhere; address type: ``""`` any, ``individual``,
   ``business``, ``business_vat_id`` = a business whose VAT ID was validated); without a match,
   or without an address, the rule's own rate applies. ``eu_reverse_charge`` is then ignored.
2. Otherwise, with ``eu_reverse_charge``: a business in another member state than
   ``home_country`` with a validated VAT ID is reverse charged (no tax, code ``AE``), a buyer
   outside the EU pays no tax (code ``O``), anyone else the rule's rate.
3. Otherwise the rule's rate and code.

When the applicable rate differs from the rule's own, a catalog price (given for the rule's
own rate, gross or net by ``price_includes_tax``) keeps its gross amount under
``keep_gross_if_rate_changes`` and its net amount without. A price that is already gross (one
the client sent, a fee's value) keeps its gross amount and only the tax is split off anew.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal, Protocol

from admit.catalog.taxes.compute import TaxedPrice, compute_tax

Action = Literal["vat", "reverse", "no", "block", "require_approval"]

# The member states of the EU (ISO 3166-1; Greece is GR here, whatever its VAT prefix).
EU_COUNTRIES: frozenset[str] = frozenset(
    "AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK".split()
)
REVERSE_CHARGE_CODE = "AE"
OUTSIDE_SCOPE_CODE = "O"
ZERO = Decimal("0.00")


class Terms(Protocol):
    """What of a tax rule decides (the ``TaxRule`` row has these attributes)."""

    rate: Decimal
    code: str | None
    price_includes_tax: bool
    eu_reverse_charge: bool
    home_country: str
    keep_gross_if_rate_changes: bool
    custom_rules: list[dict[str, Any]] | None


@dataclass(frozen=True)
class Buyer:
    """The facts of an invoice address that taxes depend on."""

    country: str = ""
    is_business: bool = False
    vat_id: str = ""
    vat_id_validated: bool = False

    @classmethod
    def of(cls, address: Mapping[str, Any] | None) -> Buyer | None:
        """From an order's ``invoice_address`` (None: the order has none)."""
        if not address:
            return None
        return cls(
            country=str(address.get("country") or ""),
            is_business=bool(address.get("is_business")),
            vat_id=str(address.get("vat_id") or ""),
            vat_id_validated=bool(address.get("vat_id_validated")),
        )

    @property
    def validated_business(self) -> bool:
        return self.is_business and bool(self.vat_id) and self.vat_id_validated


@dataclass(frozen=True)
class Applied:
    """The outcome for one rule and buyer. ``custom_rule``: the index of the matching entry of
    ``custom_rules`` (None when none decided)."""

    action: Action
    rate: Decimal
    code: str | None
    custom_rule: int | None = None

    @property
    def blocked(self) -> bool:
        return self.action == "block"

    @property
    def requires_approval(self) -> bool:
        return self.action == "require_approval"


class SaleBlocked(Exception):
    """The rule's matching custom rule forbids the sale to this buyer."""

    def __init__(self, applied: Applied) -> None:
        super().__init__(f"custom rule {applied.custom_rule} blocks the sale")
        self.applied = applied


@dataclass(frozen=True)
class TaxedSale:
    """A priced line: the amounts, the rate and code applied, and whether the rule asks for
    the order's approval."""

    gross: Decimal
    net: Decimal
    tax: Decimal
    rate: Decimal
    code: str | None
    requires_approval: bool = False


def _matches(entry: Mapping[str, Any], buyer: Buyer) -> bool:
    country = entry.get("country", "ZZ")
    if country == "EU":
        if buyer.country not in EU_COUNTRIES:
            return False
    elif country != "ZZ" and country != buyer.country:
        return False
    kind = entry.get("address_type", "")
    if kind == "individual":
        return not buyer.is_business
    if kind == "business":
        return buyer.is_business
    if kind == "business_vat_id":
        return buyer.validated_business
    return True


def _custom(rule: Terms, buyer: Buyer | None) -> Applied:
    """The first matching entry of the rule's custom rules; the rule's own rate without one."""
    if buyer is None:
        return Applied("vat", rule.rate, rule.code)
    for index, entry in enumerate(rule.custom_rules or []):
        if not _matches(entry, buyer):
            continue
        action: Action = entry.get("action", "vat")
        code = entry.get("code") or None
        if action in ("reverse", "no"):
            default = REVERSE_CHARGE_CODE if action == "reverse" else rule.code
            return Applied(action, ZERO, code or default, index)
        own = entry.get("rate")
        rate = Decimal(str(own)) if own is not None else rule.rate
        return Applied(action, rate, code or rule.code, index)
    return Applied("vat", rule.rate, rule.code)


def _eu_reverse_charge(rule: Terms, buyer: Buyer | None) -> Applied:
    if buyer is None or not buyer.country:
        return Applied("vat", rule.rate, rule.code)
    if buyer.country not in EU_COUNTRIES:
        return Applied("no", ZERO, OUTSIDE_SCOPE_CODE)
    if buyer.country != rule.home_country and buyer.validated_business:
        return Applied("reverse", ZERO, REVERSE_CHARGE_CODE)
    return Applied("vat", rule.rate, rule.code)


def applicable(rule: Terms, buyer: Buyer | None) -> Applied:
    """What ``rule`` does for ``buyer`` (None: a sale without invoice address)."""
    if rule.custom_rules:
        return _custom(rule, buyer)
    if rule.eu_reverse_charge:
        return _eu_reverse_charge(rule, buyer)
    return Applied("vat", rule.rate, rule.code)


def _sale(taxed: TaxedPrice, applied: Applied) -> TaxedSale:
    return TaxedSale(
        gross=taxed.gross,
        net=taxed.net,
        tax=taxed.tax,
        rate=taxed.rate,
        code=applied.code,
        requires_approval=applied.requires_approval,
    )


def tax_sale(
    rule: Terms | None,
    buyer: Buyer | None,
    amount: Decimal,
    *,
    gross_given: bool,
    places: int = 2,
) -> TaxedSale:
    """Prices ``amount`` under ``rule`` for ``buyer``; raises :class:`SaleBlocked`.

    ``gross_given``: ``amount`` is the gross price and stays so (a price the client sent, a
    fee's value). Otherwise it is the catalog price for the rule's own rate, gross or net by
    ``price_includes_tax``; a different applicable rate keeps its gross amount with
    ``keep_gross_if_rate_changes`` and its net amount without. Without a rule: no tax."""
    if rule is None:
        return _sale(compute_tax(amount, ZERO, True, places), Applied("vat", ZERO, None))
    applied = applicable(rule, buyer)
    if applied.blocked:
        raise SaleBlocked(applied)
    if gross_given:
        return _sale(compute_tax(amount, applied.rate, True, places), applied)
    own = compute_tax(amount, rule.rate, rule.price_includes_tax, places)
    if applied.rate == rule.rate:
        return _sale(own, applied)
    if rule.keep_gross_if_rate_changes:
        return _sale(compute_tax(own.gross, applied.rate, True, places), applied)
    return _sale(compute_tax(own.net, applied.rate, False, places), applied)


def retax(
    rule: Terms | None,
    buyer: Buyer | None,
    gross: Decimal,
    tax: Decimal,
    *,
    keep: Literal["keep_net", "keep_gross"],
    places: int = 2,
) -> TaxedSale:
    """A sold line (``gross`` with ``tax`` in it) recomputed for the rule's applicable rate:
    ``keep_net`` keeps ``gross - tax`` and rebuilds the gross price, ``keep_gross`` keeps the
    gross price. Raises :class:`SaleBlocked`."""
    if rule is None:
        applied = Applied("vat", ZERO, None)
    else:
        applied = applicable(rule, buyer)
        if applied.blocked:
            raise SaleBlocked(applied)
    if keep == "keep_net":
        return _sale(compute_tax(gross - tax, applied.rate, False, places), applied)
    return _sale(compute_tax(gross, applied.rate, True, places), applied)
