"""Prices of new order positions: catalog price, date (subevent) overrides, then the automatic
discounts; a price the client sends is trusted as the gross price. Tax comes from the item's
tax rule as it applies to the order's invoice address (``catalog/taxes/rules.py``: custom
rules, reverse charge, the rate that keeps the gross or the net price), split per line."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.catalog.discounts.engine import CartLine, DiscountRule, compute
from admit.catalog.questions.answers import invalid_pk
from admit.catalog.taxes.compute import currency_places
from admit.catalog.taxes.rules import Applied, Buyer, SaleBlocked, TaxedSale, tax_sale
from admit.kit.http.errors import FieldErrors
from admit.models import Discount, Event, Item, ItemVariation, SubEvent, TaxRule

if TYPE_CHECKING:
    from admit.orders.schemas import OrderIn

ZERO = Decimal("0.00")


@dataclass
class Line:
    """One position to price; ``given`` is the client's price (None: computed)."""

    item: Item
    variation: ItemVariation | None
    subevent: SubEvent | None
    given: Decimal | None
    is_addon: bool
    # The voucher this position redeems (``admit.vouchers.redeem.Use``): applies its price mode.
    voucher: Any = None


@dataclass
class Priced:
    price: Decimal
    tax_rate: Decimal
    tax_value: Decimal
    tax_rule_id: int | None
    tax_code: str | None
    discount_id: int | None
    # the tax rule's custom rule for the invoice address asks for the order's approval
    requires_approval: bool = False


def catalog_price(
    item: Item, variation: ItemVariation | None, subevent: SubEvent | None
) -> Decimal:
    """Date override of the variation, else of the item, else the variation's or item's price."""
    if subevent is not None:
        if variation is not None:
            for row in subevent.variation_overrides:
                if row.variation_id == variation.id and row.price is not None:
                    return row.price
        for row in subevent.item_overrides:
            if row.item_id == item.id and row.price is not None:
                return row.price
    if variation is not None and variation.default_price is not None:
        return variation.default_price
    return item.default_price


def _start_price(line: Line, places: int) -> Decimal:
    """The catalog price, then the voucher's price mode (before automatic discounts)."""
    listed = catalog_price(line.item, line.variation, line.subevent)
    return line.voucher.price(listed, places) if line.voucher is not None else listed


_DISCOUNTS = (
    select(Discount)
    .where(Discount.event_id == bindparam("event_id"))
    .options(
        selectinload(Discount.condition_limit_products),
        selectinload(Discount.benefit_limit_products),
    )
)


async def load_discounts(session: AsyncSession, event_id: int) -> list[DiscountRule]:
    rows = await session.scalars(_DISCOUNTS, {"event_id": event_id})
    return [DiscountRule.from_model(d) for d in rows]


def blocked_message(rule: TaxRule, applied: Applied) -> str:
    """Why a sale is refused: the tax rule (its name) and which of its custom rules."""
    names = rule.name or {}
    name = names.get("en") or next(iter(names.values()), "") or str(rule.id)
    number = (applied.custom_rule or 0) + 1
    return (
        f'The tax rule "{name}" does not allow this sale for the given invoice address '
        f"(custom rule {number} blocks it)."
    )


class TaxBlocked(Exception):
    """Lines (by index) whose tax rule blocks the sale to the invoice address."""

    def __init__(self, messages: dict[int, str]) -> None:
        super().__init__(next(iter(messages.values())))
        self.messages = messages


def price_lines(
    lines: list[Line],
    rules: dict[int, TaxRule],
    discounts: list[DiscountRule],
    *,
    currency: str,
    sales_channel: str,
    now: dt.datetime,
    buyer: Buyer | None = None,
) -> list[Priced]:
    """Prices and taxes for every line (discounts only touch lines without a given price);
    raises :class:`TaxBlocked` naming every line whose tax rule refuses ``buyer``."""
    places = currency_places(currency)
    computed = [i for i, line in enumerate(lines) if line.given is None]
    cart = [
        CartLine(
            item_id=lines[i].item.id,
            variation_id=lines[i].variation.id if lines[i].variation else None,
            subevent_id=lines[i].subevent.id if lines[i].subevent else None,
            subevent_date_from=lines[i].subevent.date_from if lines[i].subevent else None,
            price=_start_price(lines[i], places),
            is_addon=lines[i].is_addon,
            voucher_discounted=bool(lines[i].voucher and lines[i].voucher.discounted),
        )
        for i in computed
    ]
    discounted = compute(cart, sales_channel, now, discounts) if cart else []
    by_index = dict(zip(computed, discounted, strict=True))
    result = []
    blocked: dict[int, str] = {}
    for i, line in enumerate(lines):
        rule = rules.get(line.item.tax_rule_id) if line.item.tax_rule_id else None
        given = line.given is not None
        amount = line.given if line.given is not None else by_index[i].price
        try:
            taxed = tax_sale(rule, buyer, amount, gross_given=given, places=places)
        except SaleBlocked as exc:
            assert rule is not None
            blocked[i] = blocked_message(rule, exc.applied)
            continue
        result.append(
            Priced(
                price=taxed.gross,
                tax_rate=taxed.rate,
                tax_value=taxed.tax,
                tax_rule_id=rule.id if rule else None,
                tax_code=taxed.code,
                discount_id=None if given else by_index[i].discount_id,
                requires_approval=taxed.requires_approval,
            )
        )
    if blocked:
        raise TaxBlocked(blocked)
    return result


_TAX_RULES = select(TaxRule).where(TaxRule.event_id == bindparam("event_id"))


async def load_tax_rules(session: AsyncSession, event_id: int) -> dict[int, TaxRule]:
    return {r.id: r for r in await session.scalars(_TAX_RULES, {"event_id": event_id})}


def needs_discounts(lines: Sequence[Line]) -> bool:
    """Automatic discounts touch only lines without a given price."""
    return any(line.given is None for line in lines)


@dataclass
class PricedOrder:
    lines: list[Priced]
    fees: list[TaxedSale]
    total: Decimal
    # a tax rule's custom rule asks for approval (``require_approval`` action): the shop's
    # checkout honours it; orders created through the API do not, as with the reference
    require_approval: bool = False


def price_order(
    event: Event,
    data: OrderIn,
    lines: list[Line],
    rules: dict[int, TaxRule],
    discounts: list[DiscountRule],
    now: dt.datetime,
) -> PricedOrder:
    """The positions' and fees' prices and taxes for the order's invoice address, and the
    total; 400 for a fee with an unknown tax rule, for a position or fee whose tax rule blocks
    the sale to the invoice address, and for a paid order without a payment provider."""
    fee_errors = [
        {"tax_rule": [invalid_pk(f.tax_rule)]}
        if f.tax_rule is not None and f.tax_rule not in rules
        else {}
        for f in data.fees
    ]
    if any(fee_errors):
        raise FieldErrors({"fees": fee_errors})
    buyer = Buyer.of(data.invoice_address)  # type: ignore[arg-type]
    try:
        priced = price_lines(
            lines,
            rules,
            discounts,
            currency=event.currency,
            sales_channel=data.sales_channel,
            now=now,
            buyer=buyer,
        )
    except TaxBlocked as exc:
        raise FieldErrors(
            {"positions": [_item_error(exc.messages.get(i)) for i in range(len(lines))]}
        ) from None
    fees = _price_fees(data, rules, buyer, currency_places(event.currency))
    total = sum((p.price for p in priced), ZERO) + sum((f.value for f in data.fees), ZERO)
    if data.status == "p" and total > 0 and not data.payment_provider:
        raise FieldErrors.single(
            "payment_provider", "This field is required when creating a paid order."
        )
    approval = any(p.requires_approval for p in priced)
    return PricedOrder(priced, fees, total, require_approval=approval)


def _item_error(message: str | None) -> dict[str, list[str]]:
    return {"item": [message]} if message else {}


def _price_fees(
    data: OrderIn, rules: dict[int, TaxRule], buyer: Buyer | None, places: int
) -> list[TaxedSale]:
    """A fee's value is its gross amount; its tax follows the rule as it applies to the buyer
    (as a price the client gives does); 400 when the rule blocks the sale."""
    fees: list[TaxedSale] = []
    errors: list[dict[str, list[str]]] = []
    for fee in data.fees:
        rule = rules.get(fee.tax_rule) if fee.tax_rule else None
        try:
            fees.append(tax_sale(rule, buyer, fee.value, gross_given=True, places=places))
            errors.append({})
        except SaleBlocked as exc:
            assert rule is not None
            errors.append({"tax_rule": [blocked_message(rule, exc.applied)]})
    if any(errors):
        raise FieldErrors({"fees": errors})
    return fees
