"""Schemas of categories, variations, add-ons and bundles (items are in ``item_schemas``).

Inputs ignore unknown and read-only fields, as the reference does; cross-field and database
rules live in the services, which see the merged state on PATCH.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field

from admit.events.plugins import SALES_CHANNELS
from admit.kit.resources.filtering import PK_MAX
from admit.kit.resources.schema import (
    DateTime,
    I18n,
    LongText,
    Money,
    ReadModel,
    WriteModel,
    i18n_name,
)


def _check_channels(values: list[str]) -> list[str]:
    for value in values:
        if value not in SALES_CHANNELS:
            raise ValueError(f'"{value}" is not a valid choice.')
    return list(dict.fromkeys(values))


# Sales channel identifiers; duplicates collapse.
Channels = Annotated[list[str], AfterValidator(_check_channels)]
# Non-negative integers that fit the INTEGER columns (positions, counts).
Position = Annotated[int, Field(ge=0, le=PK_MAX)]
Count = Annotated[int, Field(ge=0, le=PK_MAX)]


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("Incorrect type. Expected pk value, received bool.")
    return value


# A reference to another object by id; existence (and range) is checked by the service.
Ref = Annotated[int, BeforeValidator(_no_bool)]
InternalName = Annotated[str, Field(max_length=190)]
# Product, category and variation names: 255 characters a translation, as the reference.
ProductName = i18n_name(255)
MetaData = dict[str, Annotated[str, Field(max_length=2000)]]


# -- categories -------------------------------------------------------------------------------


class CategoryOut(ReadModel):
    id: int
    name: dict[str, str]
    internal_name: str | None
    description: dict[str, str] | None
    position: int
    is_addon: bool
    cross_selling_mode: str | None
    cross_selling_condition: str | None
    cross_selling_match_products: list[int]


class CategoryIn(WriteModel):
    name: ProductName
    internal_name: InternalName | None = None
    description: I18n | None = None
    position: Position = 0
    is_addon: bool = False
    cross_selling_mode: Literal["only", "both"] | None = None
    cross_selling_condition: Literal["always", "discounts", "products"] | None = None
    cross_selling_match_products: list[Ref] = []


# -- variations -------------------------------------------------------------------------------


class VariationOut(ReadModel):
    id: int
    value: dict[str, str]
    default_price: Money | None
    price: Money
    active: bool
    description: dict[str, str] | None
    position: int
    original_price: Money | None
    free_price_suggestion: Money | None
    require_approval: bool
    checkin_attention: bool
    checkin_text: str | None
    available_from: dt.datetime | None
    available_until: dt.datetime | None
    hide_without_voucher: bool
    all_sales_channels: bool
    limit_sales_channels: list[str]
    sales_channels: list[str]
    meta_data: dict[str, str]


class VariationIn(WriteModel):
    value: ProductName
    default_price: Money | None = None
    active: bool = True
    description: I18n | None = None
    position: Position = 0
    original_price: Money | None = None
    free_price_suggestion: Money | None = None
    require_approval: bool = False
    checkin_attention: bool = False
    checkin_text: LongText | None = None
    available_from: DateTime | None = None
    available_until: DateTime | None = None
    hide_without_voucher: bool = False
    all_sales_channels: bool = True
    limit_sales_channels: Channels = []
    sales_channels: Channels | None = None  # deprecated: sets the limit when sent alone
    meta_data: MetaData = {}


# -- add-ons ----------------------------------------------------------------------------------


class AddOnOut(ReadModel):
    id: int
    addon_category: int
    min_count: int
    max_count: int
    position: int
    multi_allowed: bool
    price_included: bool


class AddOnIn(WriteModel):
    addon_category: Ref
    min_count: Count = 0
    max_count: Count = 1
    position: Position = 0
    multi_allowed: bool = False
    price_included: bool = False


# -- bundles ----------------------------------------------------------------------------------


class BundleOut(ReadModel):
    id: int
    bundled_item: int
    bundled_variation: int | None
    count: int
    designated_price: Money


class BundleIn(WriteModel):
    bundled_item: Ref
    bundled_variation: Ref | None = None
    count: Annotated[int, Field(ge=1, le=PK_MAX)] = 1
    designated_price: Money = Decimal("0.00")
