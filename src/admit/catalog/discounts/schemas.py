"""Discount input and output shapes; cross-field rules live in the service."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from admit.events.schemas import Channels
from admit.kit.resources.schema import DateTime, Money, Percent, ReadModel, WriteModel

INT_MAX = 2**31 - 1  # INTEGER columns
SUBEVENT_MODES = ("mixed", "same", "distinct")


def _null_to_empty(value: Any) -> Any:
    return "" if value is None else value


Count = Annotated[int, Field(ge=0, le=INT_MAX)]
ItemIds = list[Annotated[int, Field(ge=1, le=INT_MAX)]]


class DiscountOut(ReadModel):
    id: int
    active: bool
    internal_name: str
    position: int
    all_sales_channels: bool
    limit_sales_channels: list[str]
    sales_channels: list[str]
    available_from: dt.datetime | None
    available_until: dt.datetime | None
    subevent_mode: str
    subevent_date_from: dt.datetime | None
    subevent_date_until: dt.datetime | None
    condition_all_products: bool
    condition_limit_products: list[int]
    condition_apply_to_addons: bool
    condition_ignore_voucher_discounted: bool
    condition_min_count: int
    condition_min_value: Money
    benefit_discount_matching_percent: Percent
    benefit_only_apply_to_cheapest_n_matches: int | None
    benefit_same_products: bool
    benefit_limit_products: list[int]
    benefit_apply_to_addons: bool
    benefit_ignore_voucher_discounted: bool


class DiscountIn(WriteModel):
    active: bool = True
    internal_name: Annotated[str, BeforeValidator(_null_to_empty), Field(max_length=190)] = ""
    position: Count = 0
    all_sales_channels: bool = True
    limit_sales_channels: Channels = []
    sales_channels: Channels | None = None  # deprecated: sets the limit when sent alone
    available_from: DateTime | None = None
    available_until: DateTime | None = None
    subevent_mode: Literal["mixed", "same", "distinct"] = "mixed"
    subevent_date_from: DateTime | None = None
    subevent_date_until: DateTime | None = None
    condition_all_products: bool = True
    condition_limit_products: ItemIds = []
    condition_apply_to_addons: bool = True
    condition_ignore_voucher_discounted: bool = False
    condition_min_count: Count = 0
    condition_min_value: Annotated[Money, Field(ge=0)] = Decimal("0.00")
    benefit_discount_matching_percent: Annotated[Percent, Field(ge=0, le=100)] = Decimal("0.00")
    benefit_only_apply_to_cheapest_n_matches: Annotated[int, Field(ge=1, le=INT_MAX)] | None = None
    benefit_same_products: bool = True
    benefit_limit_products: ItemIds = []
    benefit_apply_to_addons: bool = True
    benefit_ignore_voucher_discounted: bool = False
