"""Variations, add-ons and bundles: rendering and rules, shared by the nested endpoints and
by item creation (which accepts them inline).

Rules are pure functions over references loaded up front in a fixed number of queries, so an
item created with many inline add-ons or bundles costs no query per element.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.items.schemas import AddOnIn, BundleIn, VariationIn
from admit.catalog.items.service import (
    Errors,
    apply_channels,
    channels_out,
    in_range,
    invalid_pk,
    load_by_id,
    meta_errors,
    meta_out,
    window_error,
    writes_meta,
)
from admit.kit.http.errors import NON_FIELD
from admit.models import Item, ItemAddOn, ItemBundle, ItemCategory, ItemVariation

_VARIATION_COLUMNS = (
    "id value default_price active description position original_price free_price_suggestion "
    "require_approval checkin_attention checkin_text available_from available_until "
    "hide_without_voucher all_sales_channels"
).split()


def variation_to_read(
    variation: ItemVariation, item: Item, declared: Mapping[str, str] | None
) -> dict[str, Any]:
    data = {c: getattr(variation, c) for c in _VARIATION_COLUMNS}
    data["price"] = (
        variation.default_price if variation.default_price is not None else item.default_price
    )
    data["limit_sales_channels"] = list(variation.limit_sales_channels or [])
    data["sales_channels"] = channels_out(variation)
    # A variation inherits the item's meta data and overrides single values.
    data["meta_data"] = meta_out(declared, item.meta_data, variation.meta_data)
    return data


def addon_to_read(addon: ItemAddOn) -> dict[str, Any]:
    return {
        "id": addon.id,
        "addon_category": addon.addon_category_id,
        "min_count": addon.min_count,
        "max_count": addon.max_count,
        "position": addon.position,
        "multi_allowed": addon.multi_allowed,
        "price_included": addon.price_included,
    }


def bundle_to_read(bundle: ItemBundle) -> dict[str, Any]:
    return {
        "id": bundle.id,
        "bundled_item": bundle.bundled_item_id,
        "bundled_variation": bundle.bundled_variation_id,
        "count": bundle.count,
        "designated_price": bundle.designated_price,
    }


# -- variations -------------------------------------------------------------------------------


def variation_errors(data: VariationIn, declared: Mapping[str, str] | None) -> Errors:
    errors: Errors = {}
    unknown = meta_errors(data.meta_data, declared or {})
    if unknown:
        errors["meta_data"] = unknown
    window = window_error(data.available_from, data.available_until)
    if window:
        errors[NON_FIELD] = [window]
    return errors


def apply_variation(
    variation: ItemVariation, data: VariationIn, supplied: set[str], creating: bool
) -> None:
    for key in _VARIATION_COLUMNS[1:-1]:
        setattr(variation, key, getattr(data, key))
    apply_channels(variation, data, supplied)
    if writes_meta(supplied, creating):
        variation.meta_data = dict(data.meta_data)


# -- add-ons ----------------------------------------------------------------------------------


async def load_categories(
    session: AsyncSession, event_id: int, addons: Iterable[AddOnIn]
) -> dict[int, ItemCategory]:
    ids = [a.addon_category for a in addons]
    return await load_by_id(session, ItemCategory, ids, ItemCategory.event_id == event_id)


def addon_errors(data: AddOnIn, categories: Mapping[int, ItemCategory], taken: set[int]) -> Errors:
    """``taken``: categories the item already has an add-on for (besides this one)."""
    errors: Errors = {}
    category = categories.get(data.addon_category)
    if category is None:
        errors["addon_category"] = [invalid_pk(data.addon_category)]
    elif not category.is_addon:
        errors["addon_category"] = [
            "The add-on category must be a category marked as an add-on category (is_addon)."
        ]
    elif category.id in taken:
        errors["addon_category"] = ["The item already has an add-on of this category."]
    if data.max_count < data.min_count:
        errors[NON_FIELD] = [
            "The maximum count needs to be greater than or equal to the minimum count."
        ]
    return errors


async def taken_categories(session: AsyncSession, item_id: int, except_id: int | None) -> set[int]:
    query = select(ItemAddOn.addon_category_id).where(ItemAddOn.base_item_id == item_id)
    if except_id is not None:
        query = query.where(ItemAddOn.id != except_id)
    return set((await session.execute(query)).scalars())


def apply_addon(addon: ItemAddOn, data: AddOnIn) -> None:
    addon.addon_category_id = data.addon_category
    addon.min_count = data.min_count
    addon.max_count = data.max_count
    addon.position = data.position
    addon.multi_allowed = data.multi_allowed
    addon.price_included = data.price_included


# -- bundles ----------------------------------------------------------------------------------


@dataclass
class BundleRefs:
    """What bundle rules need about the referenced items, loaded in three queries."""

    items: dict[int, Item] = field(default_factory=dict)
    variations: dict[int, set[int]] = field(default_factory=dict)  # item id -> variation ids
    bundling: set[int] = field(default_factory=set)  # items that have bundles themselves


async def load_bundle_refs(
    session: AsyncSession, event_id: int, bundles: Iterable[BundleIn]
) -> BundleRefs:
    bundles = list(bundles)
    items = await load_by_id(
        session, Item, [b.bundled_item for b in bundles], Item.event_id == event_id
    )
    refs = BundleRefs(items=items)
    if items:
        rows = await session.execute(
            select(ItemVariation.item_id, ItemVariation.id).where(ItemVariation.item_id.in_(items))
        )
        for item_id, variation_id in rows:
            refs.variations.setdefault(item_id, set()).add(variation_id)
        rows = await session.execute(
            select(ItemBundle.base_item_id).where(ItemBundle.base_item_id.in_(items)).distinct()
        )
        refs.bundling = set(rows.scalars())
    return refs


def bundle_errors(data: BundleIn, refs: BundleRefs, base_item_id: int | None) -> Errors:
    errors: Errors = {}
    item = refs.items.get(data.bundled_item)
    if item is None:
        errors["bundled_item"] = [invalid_pk(data.bundled_item)]
        return errors
    if item.id == base_item_id:
        errors[NON_FIELD] = ["The bundled item must not be the same item as the bundling one."]
    elif item.id in refs.bundling:
        errors[NON_FIELD] = ["The bundled item must not have bundles on its own."]
    variations = refs.variations.get(item.id, set())
    chosen = data.bundled_variation
    if chosen is None and variations:
        errors["bundled_variation"] = ["A variation needs to be set for this item."]
    elif chosen is not None and chosen not in variations:
        errors["bundled_variation"] = (
            [invalid_pk(chosen)]
            if not in_range([chosen]) or not variations
            else ["The chosen variation does not belong to this item."]
        )
    return errors


def apply_bundle(bundle: ItemBundle, data: BundleIn) -> None:
    bundle.bundled_item_id = data.bundled_item
    bundle.bundled_variation_id = data.bundled_variation
    bundle.count = data.count
    bundle.designated_price = data.designated_price
