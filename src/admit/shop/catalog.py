"""What a buyer may see and buy: the event's products with prices and availability, and the
rules every sale through the shop checks (shop open, sale windows, vouchers that unlock
products, min/max per order).

Prices come from ``orders/pricing.py`` (catalog price, the voucher's price mode, the tax rule)
and availability from ``quotas/availability.py``: the shop computes nothing of its own, so the
list shows what the checkout will charge and what the quota check will allow.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.db import write_intent
from admit.kit.resources.i18n import localized
from admit.models import (
    Event,
    Item,
    ItemCategory,
    ItemVariation,
    Organizer,
    SubEvent,
    TaxRule,
    Voucher,
)
from admit.orders.pricing import catalog_price
from admit.organizers.settings import accounts_open
from admit.quotas import availability
from admit.shop.settings import SHOP_OPEN, setting
from admit.vouchers.redeem import EXPIRED, HIDDEN, REQUIRED, Use

CHANNEL = "web"
NOT_YET = "This product is not on sale yet."
ENDED = "The sale of this product has ended."
UNKNOWN_VOUCHER = "This voucher code is not known."
DISABLED = "This product is not sold for this date."


async def load_event(session: AsyncSession, organizer: str, event: str) -> Event | None:
    """The event the shop's URL names (its organizer loaded), or None: a missing event, an
    event that is not live and one that is not public look the same to a buyer."""
    row = (
        await session.execute(
            select(Event, Organizer)
            .join(Organizer, Organizer.id == Event.organizer_id)
            .where(Organizer.slug == organizer, Event.slug == event)
        )
    ).first()
    if row is None or not row[0].live:
        return None
    shop_event, org = row
    shop_event.organizer_name = org.name  # type: ignore[attr-defined]
    shop_event.organizer_slug = org.slug  # type: ignore[attr-defined]
    # the header's link to the customer account, where the organizer has accounts on
    shop_event.account_url = f"/{org.slug}/account/" if accounts_open(org) else None  # type: ignore[attr-defined]
    return shop_event


def closed_reason(event: Event, now: dt.datetime) -> str | None:
    """Why the shop sells nothing right now (None: it sells)."""
    if not setting(event, SHOP_OPEN):
        return "The shop of this event is closed."
    if event.presale_start is not None and now < event.presale_start:
        return "The sale has not started yet."
    if event.presale_end is not None and now > event.presale_end:
        return "The sale has ended."
    return None


def _override(item: Item, variation: ItemVariation | None, subevent: SubEvent | None) -> Any:
    """The date's override row of the variation, else of the item (None: none)."""
    if subevent is None:
        return None
    if variation is not None:
        for row in subevent.variation_overrides:
            if row.variation_id == variation.id:
                return row
    return next((row for row in subevent.item_overrides if row.item_id == item.id), None)


def window_refusal(
    item: Item,
    now: dt.datetime,
    subevent: SubEvent | None = None,
    variation: ItemVariation | None = None,
) -> str | None:
    """Why ``item`` is not sold now (on the date ``subevent``: its overrides may disable the
    product or give it a sale window of its own)."""
    override = _override(item, variation, subevent)
    if override is not None and override.disabled:
        return "This product is not sold for this date."
    if override is not None and override.available_from and now < override.available_from:
        return NOT_YET
    if override is not None and override.available_until and now > override.available_until:
        return ENDED
    if not item.active:
        return "This product is not on sale."
    if not item.all_sales_channels and CHANNEL not in (item.limit_sales_channels or []):
        return "This product is not sold online."
    if item.available_from is not None and now < item.available_from:
        return NOT_YET
    if item.available_until is not None and now > item.available_until:
        return ENDED
    return None


def voucher_refusal(
    item: Item, variation: ItemVariation | None, voucher: Voucher | None
) -> str | None:
    """Products that need a voucher, and hidden ones a voucher must unlock (the rule the
    order's voucher check applies, asked before anything is reserved)."""
    if item.require_voucher and voucher is None:
        return REQUIRED
    hidden = item.hide_without_voucher or (variation is not None and variation.hide_without_voucher)
    if hidden and (voucher is None or not voucher.show_hidden_items):
        return HIDDEN
    return None


async def find_voucher(
    session: AsyncSession, event: Event, code: str | None, now: dt.datetime
) -> tuple[Voucher | None, str | None]:
    """The voucher named by ``code`` and why it cannot be used (None: it can be tried; its
    usages are counted under its lock when the cart is written)."""
    code = (code or "").strip()
    if not code:
        return None, None
    voucher = await session.scalar(
        select(Voucher).where(
            Voucher.event_id == event.id, func.lower(Voucher.code) == code.lower()
        )
    )
    if voucher is None:
        return None, UNKNOWN_VOUCHER
    if voucher.valid_until is not None and voucher.valid_until < now:
        return voucher, EXPIRED
    return voucher, None


def voucher_fits(
    voucher: Voucher,
    item: Item,
    variation: ItemVariation | None,
    subevent: SubEvent | None = None,
) -> bool:
    if voucher.item_id is not None and voucher.item_id != item.id:
        return False
    if voucher.subevent_id is not None and subevent is not None:
        if voucher.subevent_id != subevent.id:
            return False
    return voucher.variation_id is None or (
        variation is not None and voucher.variation_id == variation.id
    )


def voucher_price(
    voucher: Voucher | None,
    item: Item,
    variation: ItemVariation | None,
    subevent: SubEvent | None = None,
    currency_places: int = 2,
) -> Decimal:
    """The price before automatic discounts: the catalog's (the date's override first), then
    the voucher's price mode."""
    listed = catalog_price(item, variation, subevent)
    if voucher is None or not voucher_fits(voucher, item, variation, subevent):
        return listed
    return Use(voucher, None, False).price(listed, currency_places)


@dataclass
class Product:
    """One line of the shop's list: a product, or one variation of it."""

    item: Item
    variation: ItemVariation | None
    name: str
    description: str
    price: Decimal
    original_price: Decimal | None
    tax_note: str
    state: str  # available | sold_out | reserved | not_yet | ended
    left: int | None
    min_per_order: int
    max_per_order: int
    free_price: bool
    category: str
    picture: str | None = None
    messages: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.item.id}-{self.variation.id}" if self.variation else str(self.item.id)

    def as_dict(self) -> dict[str, Any]:
        return {
            "item": self.item.id,
            "variation": self.variation.id if self.variation else None,
            "name": self.name,
            "description": self.description,
            "category": self.category,
            "price": f"{self.price:.2f}",
            "original_price": f"{self.original_price:.2f}" if self.original_price else None,
            "free_price": self.free_price,
            "tax_note": self.tax_note,
            "availability": self.state,
            "available_number": self.left,
            "min_per_order": self.min_per_order,
            "max_per_order": self.max_per_order,
        }


def tax_note(rule: TaxRule | None) -> str:
    if rule is None or not rule.rate:
        return ""
    word = "incl." if rule.price_includes_tax else "plus"
    return f"{word} {rule.rate.normalize():f}% {localized(rule.name, 'en') or 'tax'}"


# Per worker: the catalog rows the product list reads, by event, with the catalog stamp they
# were read under (``kit/stamps/catalog.py``: every write of products, variations,
# categories, tax rules and quotas moves it in its own transaction). The event row, read
# anew by every request, carries the stamp: rows kept under an equal stamp are the rows the
# database holds, so they are used as read. Only read-only requests (GET) keep and use them,
# detached from their session (``expunge``): no rollback can expire them, no write request
# can attach a shared object to its transaction.
_KEPT: dict[int, tuple[Any, tuple[list[Item], dict[int, ItemCategory], dict[int, TaxRule]]]] = {}
_KEPT_EVENTS = 256


async def _catalog_rows(
    session: AsyncSession, event: Event
) -> tuple[list[Item], dict[int, ItemCategory], dict[int, TaxRule]]:
    stamp = getattr(event, "catalog_modified", None) if not write_intent.get() else None
    if stamp is not None:  # (with the event's birth: an id a deleted event had is not it)
        stamp = (stamp, event.created)
    kept = _KEPT.get(event.id)
    if stamp is not None and kept is not None and kept[0] == stamp:
        return kept[1]
    items = list(
        (
            await session.scalars(
                select(Item)
                .where(Item.event_id == event.id, Item.active.is_(True))
                .options(selectinload(Item.variations))
                .order_by(Item.position, Item.id)
            )
        ).all()
    )
    categories = {
        c.id: c
        for c in await session.scalars(
            select(ItemCategory).where(ItemCategory.event_id == event.id)
        )
    }
    rules = {
        r.id: r for r in await session.scalars(select(TaxRule).where(TaxRule.event_id == event.id))
    }
    rows = (items, categories, rules)
    if stamp is not None:
        variations = [v for item in items for v in item.variations]
        for row in (*items, *variations, *categories.values(), *rules.values()):
            if row in session:  # (an item's variations go with it)
                session.expunge(row)
        if len(_KEPT) >= _KEPT_EVENTS:
            _KEPT.pop(next(iter(_KEPT)))
        _KEPT[event.id] = (stamp, rows)
    return rows


async def _states(
    session: AsyncSession,
    event: Event,
    keys: list[tuple[int, int | None, int | None]],
    now: dt.datetime,
) -> dict[tuple[int, int | None, int | None], tuple[str, int | None]]:
    """Per product: available / sold_out / reserved (sold out only because of carts), and
    how many are left; every quota counted once, whatever the number of products."""
    by_key = await availability.quotas_by_key(session, event.id, keys)
    every = {q.id: q for quotas in by_key.values() for q in quotas}
    counted = (
        await availability.count(session, every.values(), now, informational=False) if every else {}
    )
    states: dict[tuple[int, int | None, int | None], tuple[str, int | None]] = {}
    for key, quotas in by_key.items():
        if not quotas:
            states[key] = ("sold_out", 0)
            continue
        lefts = [counted[q.id].available_number for q in quotas]
        bounded = [n for n in lefts if n is not None]
        left = min(bounded) if bounded else None
        if all(counted[q.id].available for q in quotas):
            states[key] = ("available", left)
            continue
        held = any(counted[q.id].cart_positions for q in quotas if not counted[q.id].available)
        states[key] = ("reserved" if held else "sold_out", 0)
    return states


async def products(
    session: AsyncSession,
    event: Event,
    voucher: Voucher | None,
    now: dt.datetime,
    locale: str = "en",
    subevent: SubEvent | None = None,
    addon_categories: set[int] | None = None,
) -> list[Product]:
    """The products a buyer (with ``voucher``, if any) may see, in the catalog's order; for a
    series, those of the date ``subevent`` (its prices, windows and quotas). With
    ``addon_categories``: only the add-on products of those categories."""
    items, categories, rules = await _catalog_rows(session, event)
    shown: list[tuple[Item, ItemVariation | None, str | None, Any]] = []
    max_items = int(setting(event, "max_items_per_order"))
    for item in items:
        category = categories.get(item.category_id or 0)
        if addon_categories is not None:
            if item.category_id not in addon_categories:
                continue  # only the add-ons of a main product
        elif category is not None and category.is_addon:
            continue  # add-ons are offered with their main product, not on their own
        if not item.all_sales_channels and CHANNEL not in (item.limit_sales_channels or []):
            continue
        variations: list[ItemVariation | None] = (
            [v for v in sorted(item.variations, key=lambda v: (v.position, v.id)) if v.active]
            if item.variations
            else [None]
        )
        for variation in variations:
            if voucher_refusal(item, variation, voucher) == HIDDEN:
                continue
            refusal = window_refusal(item, now, subevent, variation)
            if refusal == DISABLED:
                continue
            if refusal == NOT_YET and item.available_from_mode == "hide":
                continue
            if refusal == ENDED and item.available_until_mode == "hide":
                continue
            key = (item.id, variation.id if variation else None, subevent.id if subevent else None)
            shown.append((item, variation, refusal, key))
    states = await _states(session, event, [key for *_, key in shown], now)
    found: list[Product] = []
    for item, variation, refusal, key in shown:
        category = categories.get(item.category_id or 0)
        state, left = states[key]
        if refusal == NOT_YET:
            state = "not_yet"
        elif refusal == ENDED:
            state = "ended"
        name = localized(item.name, locale)
        if variation is not None:
            name = f"{name} – {localized(variation.value, locale)}"
        description = localized(
            variation.description if variation and variation.description else item.description,
            locale,
        )
        show_left = item.show_quota_left
        found.append(
            Product(
                item=item,
                variation=variation,
                name=name,
                description=description,
                price=voucher_price(voucher, item, variation, subevent),
                original_price=(variation.original_price if variation else None)
                or item.original_price,
                tax_note=tax_note(rules.get(item.tax_rule_id or 0)),
                state=state,
                left=left if show_left else None,
                min_per_order=item.min_per_order or 0,
                max_per_order=min(item.max_per_order or max_items, max_items),
                free_price=item.free_price,
                category=localized(category.name, locale) if category else "",
                picture=item.picture,
            )
        )
    return found
