"""The buyer's cart: positions that hold quota for a while, with their vouchers and the prices
the checkout will charge.

Every position is written by ``carts.service.create``, the same call the API's cart positions
go through (vouchers locked and counted first, then the quota; all-or-nothing per request), so
a shop cart can never take more than the quota allows. Prices are computed for the whole cart
by ``orders.pricing.price_lines`` (the voucher's price mode, automatic discounts, the tax rule):
what the cart shows is what the checkout computes again when it writes the order.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.carts import fastpath
from admit.carts import service as carts
from admit.carts.schemas import CartPositionIn
from admit.catalog.taxes.rules import REVERSE_CHARGE_CODE, Buyer
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.filtering import parse_int
from admit.kit.resources.i18n import localized
from admit.models import CartPosition, Event, Item, Voucher
from admit.orders.pricing import Line, TaxBlocked, load_discounts, load_tax_rules, price_lines
from admit.payments import providers
from admit.payments.fees import payment_fee
from admit.quotas.availability import quota_busy, sold_out_message
from admit.shop import addons, catalog, dates
from admit.shop.cart_rows import cart_items, cart_positions
from admit.shop.settings import setting
from admit.vouchers.redeem import Budget, Use

SUFFIX = "@shop"
RESERVATION = dt.timedelta(minutes=30)
ZERO = Decimal("0.00")
MAX_ADD = 100


def new_cart_id() -> str:
    """An unguessable cart id (the cart is the buyer's only credential until the order)."""
    return secrets.token_urlsafe(24) + SUFFIX


def form_key(key: str) -> tuple[int, int | None]:
    """The product a form field names after its prefix (``<item>[-<variation>]``, as in
    ``qty_12-3`` or ``addon_7_12-3``); ValueError unless both are ids an INTEGER column holds."""
    parts = key.split("-")
    if len(parts) > 2:
        raise ValueError(key)
    item = parse_int(parts[0])
    variation = parse_int(parts[1]) if len(parts) > 1 else None
    if item < 1 or (variation is not None and variation < 1):
        raise ValueError(key)
    return item, variation


def valid_cart_id(cart_id: str | None) -> bool:
    return bool(cart_id) and cart_id.endswith(SUFFIX) and 20 < len(cart_id) < 80  # type: ignore[union-attr]


@dataclass
class Want:
    """A buyer's wish: ``count`` of one product (or variation), at ``price`` for free prices."""

    item: int
    variation: int | None = None
    count: int = 1
    price: Decimal | None = None


async def add(
    session: AsyncSession,
    event: Event,
    cart_id: str | None,
    wants: list[Want],
    voucher_code: str | None,
    now: dt.datetime,
    subevent_id: int | None = None,
) -> str:
    """Puts the wanted products into the cart (a new one without ``cart_id``); for a series
    all of them for the date ``subevent_id``. Raises FieldErrors naming what cannot be had.
    Returns the cart id."""
    if (reason := catalog.closed_reason(event, now)) is not None:
        raise FieldErrors.general(reason)
    subevent = await dates.load(session, event, subevent_id, now)
    if event.has_subevents:
        if subevent is None:
            raise FieldErrors.single(
                "subevent", dates.PICK if subevent_id is None else dates.UNKNOWN
            )
        if (reason := dates.refusal(subevent, now)) is not None:
            raise FieldErrors.single("subevent", reason)
    elif subevent_id is not None:
        raise FieldErrors.single("subevent", "This event has no dates to choose from.")
    wants = [w for w in wants if w.count > 0]
    if not wants:
        raise FieldErrors.general("Choose at least one product.")
    if sum(w.count for w in wants) > MAX_ADD:
        raise FieldErrors.general(f"You cannot add more than {MAX_ADD} products at once.")
    cart_id = cart_id if valid_cart_id(cart_id) else new_cart_id()
    current = await cart_positions(session, event, cart_id)  # expired ones are checked out too
    voucher, problem = await catalog.find_voucher(session, event, voucher_code, now)
    if problem:
        raise FieldErrors.single("voucher", problem)
    items = await cart_items(session, event, {w.item for w in wants})
    held = Counter(p.item_id for p in current)
    max_items = int(setting(event, "max_items_per_order"))
    if len(current) + sum(w.count for w in wants) > max_items:
        raise FieldErrors.general(f"You cannot buy more than {max_items} products in one order.")
    planned: list[tuple[Want, Item, Any, bool]] = []
    for want in wants:
        item = items.get(want.item)
        variation = None
        if item is not None and want.variation is not None:
            variation = next((v for v in item.variations if v.id == want.variation), None)
        if item is None or (item.variations and (variation is None or not variation.active)):
            raise FieldErrors.single("item", "This product does not exist.")
        name = localized(item.name, "en")
        refusal = catalog.window_refusal(item, now, subevent, variation)
        fits = voucher is not None and catalog.voucher_fits(voucher, item, variation, subevent)
        refusal = refusal or catalog.voucher_refusal(item, variation, voucher if fits else None)
        if refusal:
            raise FieldErrors.single("item", f"{name}: {refusal}")
        held[item.id] += want.count
        if item.max_per_order and held[item.id] > item.max_per_order:
            raise FieldErrors.single(
                "item", f"{name}: you cannot buy more than {item.max_per_order} in one order."
            )
        if want.price is not None and not item.free_price:
            raise FieldErrors.single("price", f"{name}: the price of this product is fixed.")
        planned.append((want, item, variation, fits))
    if voucher is not None and not any(fits for *_, fits in planned):
        raise FieldErrors.single("voucher", "This voucher is not valid for the chosen products.")
    for want, item, variation, fits in planned:
        listed = catalog.voucher_price(voucher if fits else None, item, variation, subevent)
        price = want.price if want.price is not None else listed
        if price < listed:
            raise FieldErrors.single("price", f"The price must be at least {listed:.2f}.")
        data = CartPositionIn(
            item=item.id,
            variation=variation.id if variation else None,
            price=price,
            voucher=voucher.code if fits and voucher else None,
            subevent=subevent.id if subevent else None,
            expires=now + RESERVATION,
            bundled=addons.bundled(item, subevent),
        ).model_copy(update={"cart_id": cart_id})
        if item.bundles:  # the bundled products carry their share of the price
            data.price = max(price - addons.bundle_share(item), ZERO)
        if len(planned) == 1 and want.count == 1 and await _sold_plain(session, event, data):
            return cart_id
        for _ in range(want.count):
            await carts.create(session, event, data, now=now)
    return cart_id


async def _sold_plain(session: AsyncSession, event: Event, data: CartPositionIn) -> bool:
    """The one plain position of a rush (no voucher, add-ons or bundled products) in one
    database call that takes the quota and commits on its own (``carts/fastpath.py``): a
    transaction holding the quota lock over several round trips would queue every sale of
    the product behind it. Nothing else was written in this request, so nothing is left to
    roll back; False when the call leaves the position to the general path."""
    if data.voucher or data.bundled or data.addons or data.seat or data.answers:
        return False
    if event.has_subevents != (data.subevent is not None) or (
        not event.has_subevents and event.seating_plan is not None
    ):
        return False
    kind, value = await fastpath.sell_plain(session, event, data, data.cart_id or "")
    if kind == "sold_out":
        raise FieldErrors.general(sold_out_message(value, 0))
    if kind == "busy":
        raise quota_busy()
    return kind == "created"


async def remove(session: AsyncSession, event: Event, cart_id: str, position_id: int) -> None:
    for position in await cart_positions(session, event, cart_id):
        if position.id == position_id:
            await carts.delete_position(session, position)
            return
    raise FieldErrors.single("position", "This product is not in your cart.")


@dataclass
class CartLine:
    position: CartPosition
    item: Item
    variation: Any
    voucher: Voucher | None
    name: str
    price: Decimal
    expired: bool = False
    subevent: Any = None
    date: str = ""

    @property
    def addon(self) -> bool:
        return self.position.addon_to_id is not None and not self.position.is_bundled

    @property
    def bundled(self) -> bool:
        return self.position.is_bundled


@dataclass
class Cart:
    cart_id: str
    lines: list[CartLine]
    total: Decimal
    expires: dt.datetime | None
    # some line is reverse charged for the invoice address the prices were computed for
    reverse_charge: bool = False
    # each payment method offered for the total, with the fee it adds (``payments/fees.py``)
    payment_fees: dict[str, Decimal] = field(default_factory=dict)

    def as_dict(self, now: dt.datetime) -> dict[str, Any]:
        left = int((self.expires - now).total_seconds()) if self.expires else 0
        return {
            "cart_id": self.cart_id,
            "positions": [
                {
                    "id": line.position.id,
                    "item": line.item.id,
                    "variation": line.variation.id if line.variation else None,
                    "name": line.name,
                    "price": f"{line.price:.2f}",
                    "voucher": line.voucher.code if line.voucher else None,
                    "subevent": line.subevent.id if line.subevent else None,
                    "date": line.date or None,
                    "addon_to": line.position.addon_to_id,
                    "bundled": line.bundled,
                    "expired": line.expired,
                }
                for line in self.lines
            ],
            "total": f"{self.total:.2f}",
            "reverse_charge": self.reverse_charge,
            "payment_fees": [
                {"provider": method, "fee": f"{fee:.2f}", "total": f"{self.total + fee:.2f}"}
                for method, fee in self.payment_fees.items()
            ],
            "expires": self.expires.isoformat() if self.expires else None,
            "seconds_left": max(left, 0),
        }


async def view(
    session: AsyncSession,
    event: Event,
    cart_id: str,
    now: dt.datetime,
    locale: str = "en",
    buyer: Buyer | None = None,
) -> Cart:
    """The cart's positions with the prices the order would have (for ``buyer``'s invoice
    address: reverse charge and custom tax rules apply). Expired ones are listed too (the
    checkout takes the whole cart), marked: their quota went back the moment they expired, so
    the checkout checks it again."""
    positions = await cart_positions(session, event, cart_id)
    if not positions:
        return Cart(cart_id, [], ZERO, None)
    items = await cart_items(session, event, {p.item_id for p in positions})
    voucher_ids = {p.voucher_id for p in positions if p.voucher_id}
    vouchers = (
        {v.id: v for v in await session.scalars(select(Voucher).where(Voucher.id.in_(voucher_ids)))}
        if voucher_ids
        else {}
    )
    subevents = await dates.load_many(
        session, event, {p.subevent_id for p in positions if p.subevent_id}
    )
    rules = await load_tax_rules(session, event.id)
    discounts = await load_discounts(session, event.id)
    return priced_cart(
        event, cart_id, positions, items, vouchers, subevents, rules, discounts, now, locale, buyer
    )


def priced_cart(
    event: Event,
    cart_id: str,
    positions: list[CartPosition],
    items: dict[int, Item],
    vouchers: dict[int, Voucher],
    subevents: dict[int, Any],
    rules: dict[int, Any],
    discounts: list[Any],
    now: dt.datetime,
    locale: str = "en",
    buyer: Buyer | None = None,
) -> Cart:
    """:func:`view` from what it read (the cart's fast lane keeps the catalog's part)."""
    budgets = {
        v.id: Budget(max(v.budget - v.budget_used, ZERO)) for v in vouchers.values() if v.budget
    }
    lines: list[Line] = []
    built: list[CartLine] = []
    for p in positions:
        item = items[p.item_id]
        variation = next((v for v in item.variations if v.id == p.variation_id), None)
        voucher = vouchers.get(p.voucher_id or 0)
        use = Use(voucher, budgets.get(voucher.id), False) if voucher else None
        given = addons.given_price(p, item, rules, buyer)
        subevent = subevents.get(p.subevent_id or 0)
        lines.append(Line(item, variation, subevent, given, p.addon_to_id is not None, use))
        name = localized(item.name, locale)
        if variation is not None:
            name = f"{name} – {localized(variation.value, locale)}"
        date = dates.label(subevent, locale) if subevent else ""
        built.append(
            CartLine(p, item, variation, voucher, name, ZERO, p.expires < now, subevent, date)
        )
    args = {"currency": event.currency, "sales_channel": catalog.CHANNEL, "now": now}
    try:
        priced = price_lines(lines, rules, discounts, buyer=buyer, **args)  # type: ignore[arg-type]
    except TaxBlocked:  # the checkout names the refusal; the cart shows the plain prices
        priced = price_lines(lines, rules, discounts, **args)  # type: ignore[arg-type]
    for line, price in zip(built, priced, strict=True):
        line.price = price.price
    total = sum((line.price for line in built), ZERO)
    live = [p.expires for p in positions if p.expires >= now]
    reverse = any(p.tax_code == REVERSE_CHARGE_CODE for p in priced)
    methods = providers.offered(event, total) if total > 0 else []
    fees = {m.identifier: payment_fee(event, m.identifier, total) for m in methods}
    return Cart(cart_id, built, total, min(live) if live else None, reverse, fees)
