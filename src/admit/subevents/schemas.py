"""Dates of an event series (with per-date overrides) and organizer meta properties."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from admit.kit.resources.schema import (
    DateTime,
    I18n,
    I18nName,
    Money,
    Number,
    ReadModel,
    WriteModel,
)

MetaValue = Annotated[str, Field(max_length=2000)]


class ItemOverrideOut(ReadModel):
    item: int
    price: Money | None
    disabled: bool
    available_from: dt.datetime | None
    available_until: dt.datetime | None


class VariationOverrideOut(ReadModel):
    variation: int
    price: Money | None
    disabled: bool
    available_from: dt.datetime | None
    available_until: dt.datetime | None


class SubEventOut(ReadModel):
    id: int
    name: dict[str, str]
    event: str
    active: bool
    is_public: bool
    date_from: dt.datetime
    date_to: dt.datetime | None
    date_admission: dt.datetime | None
    presale_start: dt.datetime | None
    presale_end: dt.datetime | None
    frontpage_text: dict[str, str] | None
    location: dict[str, str] | None
    geo_lat: float | None
    geo_lon: float | None
    item_price_overrides: list[ItemOverrideOut]
    variation_price_overrides: list[VariationOverrideOut]
    meta_data: dict[str, str]
    seating_plan: int | None
    seat_category_mapping: dict[str, Any]
    last_modified: dt.datetime


class ItemOverrideIn(WriteModel):
    item: int
    price: Money | None = None
    disabled: bool = False
    available_from: DateTime | None = None
    available_until: DateTime | None = None


class VariationOverrideIn(WriteModel):
    variation: int
    price: Money | None = None
    disabled: bool = False
    available_from: DateTime | None = None
    available_until: DateTime | None = None


class SubEventIn(WriteModel):
    name: I18nName
    active: bool = False
    is_public: bool = True
    date_from: DateTime
    date_to: DateTime | None = None
    date_admission: DateTime | None = None
    presale_start: DateTime | None = None
    presale_end: DateTime | None = None
    frontpage_text: I18n | None = None
    location: I18n | None = None
    geo_lat: Annotated[Number, Field(ge=-90, le=90)] | None = None
    geo_lon: Annotated[Number, Field(ge=-180, le=180)] | None = None
    meta_data: dict[str, MetaValue] = {}
    seating_plan: int | None = None
    seat_category_mapping: dict[str, int | None] = {}
    item_price_overrides: list[ItemOverrideIn] = []
    variation_price_overrides: list[VariationOverrideIn] = []


# -- meta properties ---------------------------------------------------------------------------

META_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")


def _check_meta_name(value: str) -> str:
    if not META_NAME_RE.match(value):
        raise ValueError("The name may only contain letters, digits, underscores and dashes.")
    return value


def _check_allowed_values(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    if not values:
        raise ValueError("List at least one value, or send null to allow any value.")
    if any(not v for v in values):
        raise ValueError("Allowed values may not be blank.")
    return list(dict.fromkeys(values))


class MetaPropertyOut(ReadModel):
    id: int
    name: str
    default: str
    required: bool
    allowed_values: list[str] | None


class MetaPropertyIn(WriteModel):
    name: Annotated[str, Field(min_length=1, max_length=50), AfterValidator(_check_meta_name)]
    default: MetaValue = ""
    required: bool = False
    allowed_values: Annotated[
        list[Annotated[str, Field(max_length=2000)]] | None,
        AfterValidator(_check_allowed_values),
    ] = None
