"""Item schemas: the item with its inline variations, add-ons and bundles."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field

from admit.catalog.items.item_parity import ItemParityIn, ProgramTimeOut
from admit.catalog.items.schemas import (
    AddOnIn,
    AddOnOut,
    BundleIn,
    BundleOut,
    Channels,
    InternalName,
    MetaData,
    Position,
    ProductName,
    Ref,
    VariationIn,
    VariationOut,
)
from admit.kit.resources.filtering import PK_MAX
from admit.kit.resources.schema import (
    DateTime,
    I18n,
    LongText,
    Money,
    Percent,
    ReadModel,
    WriteModel,
)

PerOrder = Annotated[int, Field(ge=1, le=PK_MAX)]


class ItemOut(ReadModel):
    id: int
    name: dict[str, str]
    internal_name: str | None
    default_price: Money
    category: int | None
    tax_rule: int | None
    tax_rate: Percent
    active: bool
    description: dict[str, str] | None
    free_price: bool
    free_price_suggestion: Money | None
    original_price: Money | None
    admission: bool
    personalized: bool
    position: int
    picture: str | None
    available_from: dt.datetime | None
    available_until: dt.datetime | None
    require_voucher: bool
    hide_without_voucher: bool
    allow_cancel: bool
    min_per_order: int | None
    max_per_order: int | None
    checkin_attention: bool
    checkin_text: str | None
    require_approval: bool
    require_bundling: bool
    generate_tickets: bool | None
    allow_waitinglist: bool
    show_quota_left: bool | None
    issue_giftcard: bool
    all_sales_channels: bool
    limit_sales_channels: list[str]
    sales_channels: list[str]
    meta_data: dict[str, str]
    has_variations: bool
    variations: list[VariationOut]
    addons: list[AddOnOut]
    bundles: list[BundleOut]
    available_from_mode: str
    available_until_mode: str
    hidden_if_available: int | None
    hidden_if_item_available: int | None
    hidden_if_item_available_mode: str
    require_membership: bool
    require_membership_types: list[int]
    require_membership_hidden: bool
    grant_membership_type: int | None
    grant_membership_duration_like_event: bool
    grant_membership_duration_days: int
    grant_membership_duration_months: int
    media_policy: str | None
    media_type: str | None
    validity_mode: str | None
    validity_fixed_from: dt.datetime | None
    validity_fixed_until: dt.datetime | None
    validity_dynamic_duration_minutes: int | None
    validity_dynamic_duration_hours: int | None
    validity_dynamic_duration_days: int | None
    validity_dynamic_duration_months: int | None
    validity_dynamic_start_choice: bool
    validity_dynamic_start_choice_day_limit: int | None
    program_times: list[ProgramTimeOut]


class ItemIn(ItemParityIn, WriteModel):
    name: ProductName
    internal_name: InternalName | None = None
    default_price: Money  # required, as the reference has it
    category: Ref | None = None
    tax_rule: Ref | None = None
    active: bool = True
    description: I18n | None = None
    free_price: bool = False
    free_price_suggestion: Money | None = None
    original_price: Money | None = None
    admission: bool = False
    personalized: bool = False
    position: Position = 0
    # file:<uuid> of an image upload, its current URL, or null
    picture: Annotated[str, Field(max_length=255)] | None = None
    available_from: DateTime | None = None
    available_until: DateTime | None = None
    require_voucher: bool = False
    hide_without_voucher: bool = False
    allow_cancel: bool = True
    min_per_order: PerOrder | None = None
    max_per_order: PerOrder | None = None
    checkin_attention: bool = False
    checkin_text: LongText | None = None
    require_approval: bool = False
    require_bundling: bool = False
    generate_tickets: bool | None = None
    allow_waitinglist: bool = True
    show_quota_left: bool | None = None
    issue_giftcard: bool = False
    all_sales_channels: bool = True
    limit_sales_channels: Channels = []
    sales_channels: Channels | None = None  # deprecated: sets the limit when sent alone
    meta_data: MetaData = {}
    # Only read on creation; the nested endpoints change them afterwards.
    variations: list[VariationIn] = []
    addons: list[AddOnIn] = []
    bundles: list[BundleIn] = []


# Keys of ItemIn that are not plain columns of Item.
NESTED = ("variations", "addons", "bundles")
