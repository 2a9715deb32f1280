"""Discount rules: which field combinations make sense, item references inside the event,
and the deprecated ``sales_channels`` field."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.discounts.schemas import DiscountIn
from admit.events.plugins import SALES_CHANNELS
from admit.kit.http.errors import NON_FIELD, FieldErrors
from admit.models import Discount, Item

_SCALARS = tuple(
    name
    for name in DiscountIn.model_fields
    if name not in ("sales_channels", "condition_limit_products", "benefit_limit_products")
)


def effective_channels(discount: Discount) -> list[str]:
    if discount.all_sales_channels:
        return list(SALES_CHANNELS)
    return list(discount.limit_sales_channels)


def discount_to_read(discount: Discount) -> dict[str, Any]:
    data = {name: getattr(discount, name) for name in _SCALARS}
    data["id"] = discount.id
    data["sales_channels"] = effective_channels(discount)
    data["condition_limit_products"] = [i.id for i in discount.condition_limit_products]
    data["benefit_limit_products"] = [i.id for i in discount.benefit_limit_products]
    return data


def validate_discount(data: DiscountIn) -> None:
    """Rules across fields, checked on the whole (for PATCH: merged) state."""
    errors: dict[str, list[str]] = {}

    def add(key: str, message: str) -> None:
        errors.setdefault(key, []).append(message)

    if data.condition_min_value > 0 and data.condition_min_count > 0:
        add(NON_FIELD, "condition_min_value and condition_min_count cannot be combined.")
    if data.subevent_mode == "distinct" and data.condition_min_value > 0:
        add("condition_min_value", "A minimum value cannot be combined with distinct dates.")
    if data.subevent_mode == "distinct" and not data.benefit_same_products:
        add("subevent_mode", "Distinct dates require the benefit to apply to the same products.")
    if data.benefit_only_apply_to_cheapest_n_matches is not None and data.condition_min_count < 1:
        add(
            "benefit_only_apply_to_cheapest_n_matches",
            "Applying the benefit to the cheapest matches requires a minimum number of products.",
        )
    if not data.benefit_same_products and not data.benefit_limit_products:
        add(
            "benefit_limit_products",
            "Choose the products the benefit applies to, or apply it to the same products.",
        )
    if data.available_from and data.available_until and data.available_until < data.available_from:
        add("available_until", "The end of the availability period must be after its start.")
    if (
        data.subevent_date_from
        and data.subevent_date_until
        and data.subevent_date_until < data.subevent_date_from
    ):
        add("subevent_date_until", "The end of the date range must be after its start.")
    if errors:
        raise FieldErrors(errors)


async def resolve_items(
    session: AsyncSession, event_id: int, fields: dict[str, Sequence[int]]
) -> dict[str, list[Item]]:
    """Items named by each field, all in one query; 400 on ids outside the event."""
    wanted = {i for ids in fields.values() for i in ids}
    found: dict[int, Item] = {}
    if wanted:
        rows = await session.execute(
            select(Item).where(Item.event_id == event_id, Item.id.in_(wanted))
        )
        found = {item.id: item for item in rows.scalars()}
    errors: dict[str, list[str]] = {}
    result: dict[str, list[Item]] = {}
    for name, ids in fields.items():
        unique = list(dict.fromkeys(ids))
        missing = [i for i in unique if i not in found]
        if missing:
            errors[name] = [f'Invalid pk "{i}" - object does not exist.' for i in missing]
        result[name] = [found[i] for i in unique if i in found]
    if errors:
        raise FieldErrors(errors)
    return result


def apply_discount(
    discount: Discount, data: DiscountIn, supplied: set[str], items: dict[str, list[Item]]
) -> None:
    values = {name: getattr(data, name) for name in _SCALARS}
    if (
        "sales_channels" in supplied
        and data.sales_channels is not None
        and not ({"all_sales_channels", "limit_sales_channels"} & supplied)
    ):
        # The deprecated field, when it is all a client sends, sets the limit.
        channels = data.sales_channels
        values["all_sales_channels"] = set(channels) >= set(SALES_CHANNELS)
        values["limit_sales_channels"] = [] if values["all_sales_channels"] else channels
    for name, value in values.items():
        setattr(discount, name, value)
    discount.condition_limit_products = items["condition_limit_products"]
    discount.benefit_limit_products = items["benefit_limit_products"]
