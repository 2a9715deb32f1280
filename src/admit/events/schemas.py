from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from admit.events.plugins import SALES_CHANNELS, canonical_plugin
from admit.kit.resources.schema import (
    DateTime,
    I18n,
    I18nName,
    LongText,
    Number,
    ReadModel,
    Slug,
    TimeZoneName,
    WriteModel,
)

CURRENCY_RE = re.compile(r"^[A-Z]{3}$")


def _check_currency(value: str) -> str:
    if not CURRENCY_RE.match(value):
        raise ValueError("Enter a three-letter ISO 4217 currency code, e.g. EUR.")
    return value


def _canonical_plugins(values: Any) -> Any:
    if isinstance(values, list):
        return [canonical_plugin(v) if isinstance(v, str) else v for v in values]
    return values


def _check_channels(values: list[str]) -> list[str]:
    for value in values:
        if value not in SALES_CHANNELS:
            raise ValueError(f'"{value}" is not a valid choice.')
    return list(dict.fromkeys(values))


Channels = Annotated[list[str], AfterValidator(_check_channels)]
Currency = Annotated[str, AfterValidator(_check_currency)]


class EventOut(ReadModel):
    name: dict[str, str]
    slug: str
    live: bool
    testmode: bool
    currency: str
    date_from: dt.datetime
    date_to: dt.datetime | None
    date_admission: dt.datetime | None
    is_public: bool
    presale_start: dt.datetime | None
    presale_end: dt.datetime | None
    location: dict[str, str] | None
    geo_lat: float | None
    geo_lon: float | None
    has_subevents: bool
    meta_data: dict[str, str]
    plugins: list[str]
    seating_plan: int | None
    seat_category_mapping: dict[str, Any]
    timezone: str
    item_meta_properties: dict[str, str]
    all_sales_channels: bool
    limit_sales_channels: list[str]
    sales_channels: list[str]
    public_url: str


class EventListOut(EventOut):
    best_availability_state: int | None = None


class EventDetailOut(EventOut):
    valid_keys: dict[str, list[str]]


class EventIn(WriteModel):
    name: I18nName
    slug: Annotated[Slug, Field(min_length=1, max_length=50)]
    live: bool = False
    testmode: bool = False
    currency: Currency = "EUR"
    date_from: DateTime
    date_to: DateTime | None = None
    date_admission: DateTime | None = None
    is_public: bool = True
    presale_start: DateTime | None = None
    presale_end: DateTime | None = None
    location: I18n | None = None
    geo_lat: Annotated[Number, Field(ge=-90, le=90)] | None = None
    geo_lon: Annotated[Number, Field(ge=-180, le=180)] | None = None
    has_subevents: bool = False
    meta_data: dict[str, Annotated[str, Field(max_length=2000)]] = {}
    plugins: Annotated[
        list[Annotated[str, Field(max_length=190)]], BeforeValidator(_canonical_plugins)
    ] = []
    seating_plan: int | None = None
    seat_category_mapping: dict[str, int | None] = {}
    timezone: TimeZoneName = "UTC"
    item_meta_properties: dict[str, LongText] = {}
    all_sales_channels: bool = True
    limit_sales_channels: Channels = []
    sales_channels: Channels | None = None
