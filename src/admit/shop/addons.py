"""Add-ons and bundles in the shop.

Bundles (``bundles`` on an item) go into the cart with their main product, in the same
``carts.service.create`` call (``bundled``): they hold quota together and leave together. Each
bundled position costs its designated price, which is part of the main product's price: the
main position costs the listed price minus the bundle's share, so the total is the listed price.
Those prices are written on the cart rows and given to the order as they are.

Add-ons (``addons`` on an item: categories with min/max) are chosen per position after the
product is in the cart. The carts service writes add-ons only together with their main position,
so choosing them replaces the main position (and its bundled ones) by one with the chosen
add-ons, in one transaction: the quota check of the new positions sees the old ones gone, and
nothing is lost if the new ones do not fit (the request is rolled back). The same min/max rules
are checked again at checkout, since a headless client may skip this step.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.carts import service as carts
from admit.carts.schemas import CartPositionIn, NestedPositionIn
from admit.catalog.taxes.rules import Buyer, SaleBlocked, tax_sale
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.i18n import localized
from admit.models import (
    CartPosition,
    Event,
    Item,
    ItemAddOn,
    ItemCategory,
    SubEvent,
    TaxRule,
    Voucher,
)
from admit.shop import catalog, dates
from admit.shop.cart_rows import cart_items, cart_positions

ZERO = Decimal("0.00")


def bundle_share(item: Item) -> Decimal:
    """The part of ``item``'s price its bundled products carry (their designated prices)."""
    return sum((b.designated_price * b.count for b in item.bundles), ZERO)


def bundled(item: Item, subevent: SubEvent | None) -> list[NestedPositionIn]:
    """The bundled positions one unit of ``item`` comes with."""
    return [
        NestedPositionIn(
            item=b.bundled_item_id,
            variation=b.bundled_variation_id,
            price=b.designated_price,
            subevent=subevent.id if subevent else None,
        )
        for b in item.bundles
        for _ in range(b.count)
    ]


def given_price(
    row: CartPosition, item: Item, rules: dict[int, TaxRule], buyer: Buyer | None
) -> Decimal | None:
    """The price the cart row carries for the order (None: the order computes it): free prices,
    bundled positions and main products with bundles (their share taken off).

    A bundle's split price stands for a catalog price, so it is taxed as one for ``buyer``
    (reverse charge takes the VAT off) before the order keeps it as the gross price."""
    if item.free_price:
        return row.price
    if row.is_bundled or item.bundles:
        rule = rules.get(item.tax_rule_id or 0)
        if rule is None:
            return row.price
        try:
            return tax_sale(rule, buyer, row.price, gross_given=False).gross
        except SaleBlocked:
            return row.price  # the order's own pricing names the refusal
    if row.addon_to_id is not None and row.price == ZERO:
        return ZERO  # an add-on whose price is included in its main product
    return None


@dataclass
class Offer:
    """One add-on category offered for one cart position."""

    rule: ItemAddOn
    category: str
    products: list[catalog.Product]
    chosen: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {
            "category": self.rule.addon_category_id,
            "name": self.category,
            "min_count": self.rule.min_count,
            "max_count": self.rule.max_count,
            "multi_allowed": self.rule.multi_allowed,
            "price_included": self.rule.price_included,
            "products": [
                {**p.as_dict(), "chosen": self.chosen.get(p.key, 0)} for p in self.products
            ],
        }


@dataclass
class Choice:
    """The add-ons offered for one main position of the cart."""

    position: CartPosition
    name: str
    offers: list[Offer]
    date: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "position": self.position.id,
            "name": self.name,
            "categories": [o.as_dict() for o in self.offers],
        }


async def _category_names(session: AsyncSession, ids: set[int]) -> dict[int, str]:
    if not ids:
        return {}
    rows = await session.scalars(select(ItemCategory).where(ItemCategory.id.in_(ids)))
    return {c.id: localized(c.name, "en") for c in rows}


def _key(row: CartPosition) -> str:
    return f"{row.item_id}-{row.variation_id}" if row.variation_id else str(row.item_id)


async def choices(
    session: AsyncSession, event: Event, cart_id: str, now: dt.datetime
) -> list[Choice]:
    """Per main position of the cart whose product has add-ons: each add-on category with its
    products (the position's date, prices, availability) and what is chosen already."""
    rows = await cart_positions(session, event, cart_id)
    items = await cart_items(session, event, {r.item_id for r in rows})
    mains = [r for r in rows if r.addon_to_id is None and items[r.item_id].addons]
    if not mains:
        return []
    category_ids = {a.addon_category_id for r in mains for a in items[r.item_id].addons}
    names = await _category_names(session, category_ids)
    subevents = await dates.load_many(
        session, event, {r.subevent_id for r in mains if r.subevent_id}
    )
    child_items = await cart_items(session, event, {r.item_id for r in rows if r.addon_to_id})
    found = []
    for main in mains:
        item = items[main.item_id]
        subevent = subevents.get(main.subevent_id or 0)
        listed = await catalog.products(
            session, event, None, now, subevent=subevent, addon_categories=category_ids
        )
        offers = []
        for rule in item.addons:
            products = [p for p in listed if p.item.category_id == rule.addon_category_id]
            if rule.price_included:
                for p in products:
                    p.price = ZERO
            chosen = Counter(
                _key(r)
                for r in rows
                if r.addon_to_id == main.id
                and not r.is_bundled
                and child_items[r.item_id].category_id == rule.addon_category_id
            )
            offers.append(Offer(rule, names.get(rule.addon_category_id, ""), products, chosen))
        date = dates.label(subevent) if subevent else ""
        found.append(Choice(main, localized(item.name, "en"), offers, date))
    return found


def count_problems(item: Item, children: list[Item]) -> list[str]:
    """Why the add-ons ``children`` do not fit ``item``'s add-on rules (empty: they do)."""
    problems = []
    by_category = Counter(c.category_id for c in children)
    allowed = {a.addon_category_id for a in item.addons}
    if any(c.category_id not in allowed for c in children):
        problems.append("This add-on cannot be chosen with this product.")
    for rule in item.addons:
        got = by_category[rule.addon_category_id]
        if got < rule.min_count:
            problems.append(f"Choose at least {rule.min_count} add-on(s) of this kind.")
        if got > rule.max_count:
            problems.append(f"Choose at most {rule.max_count} add-on(s) of this kind.")
        if not rule.multi_allowed:
            same = Counter(c.id for c in children if c.category_id == rule.addon_category_id)
            if any(n > 1 for n in same.values()):
                problems.append("Each add-on of this kind can be chosen once.")
    return problems


async def choose(
    session: AsyncSession,
    event: Event,
    cart_id: str,
    position_id: int,
    wants: list[Any],
    now: dt.datetime,
) -> None:
    """Sets the add-ons of the cart's main position ``position_id`` to ``wants`` (``cart.Want``
    rows): checked against its add-on rules, then written (see the module's docstring)."""
    rows = await cart_positions(session, event, cart_id)
    main = next((r for r in rows if r.id == position_id and r.addon_to_id is None), None)
    if main is None:
        raise FieldErrors.single("position", "This product is not in your cart.")
    wants = [w for w in wants if w.count > 0]
    items = await cart_items(
        session, event, {main.item_id, *(w.item for w in wants), *(r.item_id for r in rows)}
    )
    item = items[main.item_id]
    subevent = (await dates.load_many(session, event, {main.subevent_id or 0})).get(
        main.subevent_id or 0
    )
    rules = {a.addon_category_id: a for a in item.addons}
    children: list[Item] = []
    nested: list[NestedPositionIn] = []
    for want in wants:
        child = items.get(want.item)
        variation = None
        if child is not None and want.variation is not None:
            variation = next((v for v in child.variations if v.id == want.variation), None)
        if child is None or ((child.variations or want.variation is not None) and not variation):
            # (a variation named for a product without variations is refused, not dropped)
            raise FieldErrors.single("item", "This add-on does not exist.")
        rule = rules.get(child.category_id or 0)
        if rule is None:
            raise FieldErrors.single("item", "This add-on cannot be chosen with this product.")
        name = localized(child.name, "en")
        if (refusal := catalog.window_refusal(child, now, subevent, variation)) is not None:
            raise FieldErrors.single("item", f"{name}: {refusal}")
        price = (
            ZERO if rule.price_included else catalog.voucher_price(None, child, variation, subevent)
        )
        children += [child] * want.count
        nested += [
            NestedPositionIn(
                item=child.id,
                variation=variation.id if variation else None,
                price=price,
                subevent=subevent.id if subevent else None,
            )
        ] * want.count
    if problems := count_problems(item, children):
        raise FieldErrors.single("addons", problems[0])
    voucher = await session.get(Voucher, main.voucher_id) if main.voucher_id else None
    keep_bundled = [
        NestedPositionIn(
            item=r.item_id, variation=r.variation_id, price=r.price, subevent=r.subevent_id
        )
        for r in rows
        if r.addon_to_id == main.id and r.is_bundled
    ]
    data = CartPositionIn(
        item=main.item_id,
        variation=main.variation_id,
        price=main.price,
        voucher=voucher.code if voucher else None,
        subevent=main.subevent_id,
        expires=main.expires if main.expires > now else None,
        addons=nested,
        bundled=keep_bundled,
    ).model_copy(update={"cart_id": cart_id})
    if not await carts.delete_position(session, main):
        # Replaced (or removed) by a request at the same time: writing it again would put a
        # second main position into the cart and hold its quota twice.
        raise FieldErrors.single("position", "This product is not in your cart.")
    await carts.create(session, event, data, now=now)
