"""Rules shared by the catalog resources: references into the same event, meta data, sales
channels, availability windows; and the category rules.

Services raise :class:`FieldErrors` and only flush; they know nothing about HTTP routes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.items.schemas import CategoryIn
from admit.events.plugins import SALES_CHANNELS
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.filtering import PK_MAX
from admit.models import Item, ItemCategory

Errors = dict[str, Any]


def invalid_pk(value: object) -> str:
    """DRF's message for a reference to an object that does not exist (or is not visible)."""
    return f'Invalid pk "{value}" - object does not exist.'


def in_range(ids: Iterable[int]) -> list[int]:
    """Ids that can exist at all: others never reach a query (INTEGER columns)."""
    return [i for i in ids if 1 <= i <= PK_MAX]


async def load_by_id(
    session: AsyncSession, model: Any, ids: Iterable[int], *where: Any
) -> dict[int, Any]:
    """Objects of ``model`` with the given ids that satisfy ``where`` (the tenant's scope)."""
    wanted = sorted(set(in_range(ids)))
    if not wanted:
        return {}
    rows = await session.execute(select(model).where(model.id.in_(wanted), *where))
    return {obj.id: obj for obj in rows.scalars()}


def raise_if(errors: Errors) -> None:
    if errors:
        raise FieldErrors(errors)


# -- meta data and sales channels -----------------------------------------------------------


def meta_errors(values: Mapping[str, str], declared: Mapping[str, str]) -> list[str]:
    """Only properties declared on the event (``item_meta_properties``) may carry values."""
    return [
        f"Item meta data property '{key}' does not exist." for key in values if key not in declared
    ]


def meta_out(declared: Mapping[str, str] | None, *layers: Mapping[str, str] | None) -> dict:
    """Declared defaults overlaid with stored values (item, then variation), sorted by key."""
    merged: dict[str, str] = dict(declared or {})
    for layer in layers:
        merged.update(layer or {})
    return dict(sorted(merged.items()))


def channels_out(obj: Any) -> list[str]:
    """The deprecated ``sales_channels``: every channel when not limited."""
    return list(SALES_CHANNELS) if obj.all_sales_channels else list(obj.limit_sales_channels or [])


def apply_channels(obj: Any, data: Any, supplied: set[str]) -> None:
    """The limit fields, or the deprecated ``sales_channels`` when it is all a client sent."""
    all_channels = data.all_sales_channels
    limit = list(data.limit_sales_channels)
    if (
        "sales_channels" in supplied
        and data.sales_channels is not None
        and not ({"all_sales_channels", "limit_sales_channels"} & supplied)
    ):
        all_channels = set(data.sales_channels) >= set(SALES_CHANNELS)
        limit = [] if all_channels else list(data.sales_channels)
    obj.all_sales_channels = all_channels
    obj.limit_sales_channels = limit


def window_error(start: dt.datetime | None, end: dt.datetime | None) -> str | None:
    if start is not None and end is not None and end < start:
        return "The item's availability cannot end before it starts."
    return None


def writes_meta(supplied: set[str], creating: bool) -> bool:
    """An update (PUT or PATCH) touches meta data only when sent; a create always sets it
    (default: none). Meta data is left out of the merged state, so this decides alone."""
    return creating or "meta_data" in supplied


# -- categories -------------------------------------------------------------------------------


def category_to_read(category: ItemCategory) -> dict[str, Any]:
    return {
        "id": category.id,
        "name": category.name,
        "internal_name": category.internal_name or None,  # null when unset, as the reference
        "description": category.description,
        "position": category.position,
        "is_addon": category.is_addon,
        "cross_selling_mode": category.cross_selling_mode,
        "cross_selling_condition": category.cross_selling_condition,
        "cross_selling_match_products": sorted(i.id for i in category.cross_selling_match_products),
    }


async def validate_category(session: AsyncSession, event_id: int, data: CategoryIn) -> list[Item]:
    """The matched products, all of this event; required when the condition is "products"."""
    errors: Errors = {}
    ids = list(dict.fromkeys(data.cross_selling_match_products))
    if data.cross_selling_condition == "products" and not ids:
        errors["cross_selling_match_products"] = [
            'At least one product is required when the cross-selling condition is "products".'
        ]
    found = await load_by_id(session, Item, ids, Item.event_id == event_id)
    missing = [invalid_pk(i) for i in ids if i not in found]
    if missing:
        errors["cross_selling_match_products"] = missing
    raise_if(errors)
    return [found[i] for i in ids]


def apply_category(category: ItemCategory, data: CategoryIn, products: list[Item]) -> None:
    category.name = data.name
    category.internal_name = data.internal_name or ""
    category.description = data.description
    category.position = data.position
    category.is_addon = data.is_addon
    category.cross_selling_mode = data.cross_selling_mode
    category.cross_selling_condition = data.cross_selling_condition
    category.cross_selling_match_products = products
