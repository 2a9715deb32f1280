"""How categories and items (with variations, add-ons and bundles) render for GETs, declared
against their read schemas (see ``kit/resources/render.py``): the same JSON as ``category_to_read``
/ ``item_to_read`` through the schemas, without ORM objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, select

from admit.catalog.items.item_parity import public_slots
from admit.catalog.items.item_schemas import ItemOut
from admit.catalog.items.schemas import AddOnOut, BundleOut, CategoryOut, VariationOut
from admit.catalog.items.service import meta_out
from admit.events.plugins import SALES_CHANNELS
from admit.kit.resources.render import Nested, Rows
from admit.models import Item, ItemAddOn, ItemBundle, ItemCategory, ItemVariation, TaxRule
from admit.uploads.service import media_url

_ALL_CHANNELS = list(SALES_CHANNELS)


def _channels(row: dict[str, Any]) -> None:
    limit = row["limit_sales_channels"] = list(row["limit_sales_channels"] or [])
    row["sales_channels"] = list(_ALL_CHANNELS) if row["all_sales_channels"] else list(limit)


def _finish_variation(
    row: dict[str, Any], item: dict[str, Any] | None, extra: Mapping[str, Any]
) -> None:
    if item is None:  # listed on their own (``items/{item}/variations/``): the URL's item
        item = extra["item"]
    price = row["default_price"]
    row["price"] = price if price is not None else item["default_price"]
    _channels(row)
    # A variation inherits the item's meta data (its stored values: the item is not finished
    # yet) and overrides single values.
    row["meta_data"] = meta_out(extra.get("declared"), item["meta_data"], row["meta_data"])


def _finish_item(row: dict[str, Any], _parent: Any, extra: Mapping[str, Any]) -> None:
    row["internal_name"] = row["internal_name"] or None
    row["program_times"] = public_slots(row["program_times"])  # the slots' ids stay inside
    row["picture"] = media_url(extra["base_url"], row["picture"])
    _channels(row)
    row["meta_data"] = meta_out(extra.get("declared"), row["meta_data"])
    row["has_variations"] = bool(row["variations"])


VARIATION_ROWS = Rows(
    VariationOut,
    ItemVariation,
    computed=("price", "sales_channels"),
    finish=_finish_variation,
)
ADDON_ROWS = Rows(AddOnOut, ItemAddOn)
BUNDLE_ROWS = Rows(BundleOut, ItemBundle)

_RATE = (
    select(func.coalesce(TaxRule.rate, 0))
    .where(TaxRule.id == Item.tax_rule_id)
    .correlate(Item)
    .scalar_subquery()
)

ITEM_ROWS = Rows(
    ItemOut,
    Item,
    columns={"tax_rate": func.coalesce(_RATE, 0)},
    computed=("sales_channels", "has_variations"),
    children=(
        # Most items have none of these: each statement runs only for items that have some.
        Nested.of(Item.variations, VARIATION_ROWS, probe=True),
        Nested.of(Item.addons, ADDON_ROWS, probe=True),
        Nested.of(Item.bundles, BUNDLE_ROWS, probe=True),
        Nested.of(Item.require_membership_types, probe=True),
    ),
    finish=_finish_item,
)


def _finish_category(row: dict[str, Any], _parent: Any, _extra: Mapping[str, Any]) -> None:
    row["internal_name"] = row["internal_name"] or None


CATEGORY_ROWS = Rows(
    CategoryOut,
    ItemCategory,
    children=(Nested.of(ItemCategory.cross_selling_match_products, probe=True),),
    finish=_finish_category,
)
