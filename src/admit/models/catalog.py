"""What an event sells: tax rules, categories, items with variations, add-ons and bundles."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy import Boolean, Column, ForeignKey, Integer, String, Table, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from admit.db import Base, JSONType, Money, Percent, UTCDateTime, utcnow

if TYPE_CHECKING:
    from admit.models.customers import MembershipType

category_cross_selling_items = Table(
    "category_cross_selling_items",
    Base.metadata,
    Column("category_id", ForeignKey("item_categories.id", ondelete="CASCADE"), primary_key=True),
    Column("item_id", ForeignKey("items.id", ondelete="CASCADE"), primary_key=True, index=True),
)

# The membership types of which a customer must hold one to buy an item (``require_membership``).
item_required_membership_types = Table(
    "item_required_membership_types",
    Base.metadata,
    Column("item_id", ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
    Column(
        "membership_type_id",
        ForeignKey("membership_types.id", ondelete="CASCADE"),
        primary_key=True,
        index=True,
    ),
)


class TaxRule(Base):
    __tablename__ = "tax_rules"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    name: Mapped[dict[str, str]] = mapped_column(JSONType)
    internal_name: Mapped[str] = mapped_column(String(190), default="")
    rate: Mapped[Decimal] = mapped_column(Percent)
    code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    price_includes_tax: Mapped[bool] = mapped_column(Boolean, default=True)
    default: Mapped[bool] = mapped_column(Boolean, default=False)
    eu_reverse_charge: Mapped[bool] = mapped_column(Boolean, default=False)
    home_country: Mapped[str] = mapped_column(String(2), default="")
    keep_gross_if_rate_changes: Mapped[bool] = mapped_column(Boolean, default=False)
    custom_rules: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType, nullable=True)


class ItemCategory(Base):
    __tablename__ = "item_categories"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    name: Mapped[dict[str, str]] = mapped_column(JSONType)
    internal_name: Mapped[str] = mapped_column(String(190), default="")
    description: Mapped[dict[str, str] | None] = mapped_column(JSONType, nullable=True)
    position: Mapped[int] = mapped_column(Integer, default=0)
    is_addon: Mapped[bool] = mapped_column(Boolean, default=False)
    cross_selling_mode: Mapped[str | None] = mapped_column(String(16), nullable=True)
    cross_selling_condition: Mapped[str | None] = mapped_column(String(16), nullable=True)

    cross_selling_match_products: Mapped[list[Item]] = relationship(
        secondary=category_cross_selling_items, lazy="raise", passive_deletes=True
    )


class Item(Base):
    __tablename__ = "items"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    category_id: Mapped[int | None] = mapped_column(
        ForeignKey("item_categories.id", ondelete="SET NULL"), nullable=True, index=True
    )
    tax_rule_id: Mapped[int | None] = mapped_column(
        ForeignKey("tax_rules.id"), nullable=True, index=True
    )
    name: Mapped[dict[str, str]] = mapped_column(JSONType)
    internal_name: Mapped[str] = mapped_column(String(190), default="")
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    description: Mapped[dict[str, str] | None] = mapped_column(JSONType, nullable=True)
    default_price: Mapped[Decimal] = mapped_column(Money, default=Decimal("0.00"))
    original_price: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    free_price: Mapped[bool] = mapped_column(Boolean, default=False)
    free_price_suggestion: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    admission: Mapped[bool] = mapped_column(Boolean, default=False)
    personalized: Mapped[bool] = mapped_column(Boolean, default=False)
    position: Mapped[int] = mapped_column(Integer, default=0)
    picture: Mapped[str | None] = mapped_column(String(255), nullable=True)
    available_from: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    available_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    require_voucher: Mapped[bool] = mapped_column(Boolean, default=False)
    hide_without_voucher: Mapped[bool] = mapped_column(Boolean, default=False)
    allow_cancel: Mapped[bool] = mapped_column(Boolean, default=True)
    min_per_order: Mapped[int | None] = mapped_column(Integer, nullable=True)
    max_per_order: Mapped[int | None] = mapped_column(Integer, nullable=True)
    checkin_attention: Mapped[bool] = mapped_column(Boolean, default=False)
    checkin_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    require_approval: Mapped[bool] = mapped_column(Boolean, default=False)
    require_bundling: Mapped[bool] = mapped_column(Boolean, default=False)
    generate_tickets: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    allow_waitinglist: Mapped[bool] = mapped_column(Boolean, default=True)
    show_quota_left: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    issue_giftcard: Mapped[bool] = mapped_column(Boolean, default=False)
    all_sales_channels: Mapped[bool] = mapped_column(Boolean, default=True)
    limit_sales_channels: Mapped[list[str]] = mapped_column(JSONType, default=list)
    meta_data: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # What the shop shows outside the sale window: "hide" the item or show it as "info".
    available_from_mode: Mapped[str] = mapped_column(String(16), default="hide")
    available_until_mode: Mapped[str] = mapped_column(String(16), default="hide")
    hidden_if_available_id: Mapped[int | None] = mapped_column(
        ForeignKey("quotas.id", ondelete="SET NULL"), nullable=True, index=True
    )
    hidden_if_item_available_id: Mapped[int | None] = mapped_column(
        ForeignKey("items.id", ondelete="SET NULL"), nullable=True, index=True
    )
    hidden_if_item_available_mode: Mapped[str] = mapped_column(String(16), default="hide")
    require_membership: Mapped[bool] = mapped_column(Boolean, default=False)
    require_membership_hidden: Mapped[bool] = mapped_column(Boolean, default=False)
    # A type still granted by an item cannot be deleted (the API answers 403).
    grant_membership_type_id: Mapped[int | None] = mapped_column(
        ForeignKey("membership_types.id", ondelete="RESTRICT"), nullable=True, index=True
    )
    grant_membership_duration_like_event: Mapped[bool] = mapped_column(Boolean, default=True)
    grant_membership_duration_days: Mapped[int] = mapped_column(Integer, default=0)
    grant_membership_duration_months: Mapped[int] = mapped_column(Integer, default=0)
    media_policy: Mapped[str | None] = mapped_column(String(16), nullable=True)
    media_type: Mapped[str | None] = mapped_column(String(100), nullable=True)
    # null: the event decides; "fixed": the two dates; "dynamic": from the sale on.
    validity_mode: Mapped[str | None] = mapped_column(String(16), nullable=True)
    validity_fixed_from: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    validity_fixed_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    validity_dynamic_duration_minutes: Mapped[int | None] = mapped_column(Integer, nullable=True)
    validity_dynamic_duration_hours: Mapped[int | None] = mapped_column(Integer, nullable=True)
    validity_dynamic_duration_days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    validity_dynamic_duration_months: Mapped[int | None] = mapped_column(Integer, nullable=True)
    validity_dynamic_start_choice: Mapped[bool] = mapped_column(Boolean, default=False)
    validity_dynamic_start_choice_day_limit: Mapped[int | None] = mapped_column(
        Integer, nullable=True
    )
    # Time slots shown besides the event's times: [{"start": ..., "end": ...}], UTC ISO 8601
    # as the API renders datetimes (written by ``item_parity.apply_parity`` only).
    program_times: Mapped[list[dict[str, str]]] = mapped_column(
        JSONType, default=list, server_default="[]"
    )

    require_membership_types: Mapped[list[MembershipType]] = relationship(
        secondary=item_required_membership_types,
        lazy="raise",
        passive_deletes=True,
        order_by="MembershipType.id",
    )

    variations: Mapped[list[ItemVariation]] = relationship(
        lazy="raise",
        order_by="(ItemVariation.position, ItemVariation.id)",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )
    addons: Mapped[list[ItemAddOn]] = relationship(
        lazy="raise",
        foreign_keys="ItemAddOn.base_item_id",
        order_by="(ItemAddOn.position, ItemAddOn.id)",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )
    bundles: Mapped[list[ItemBundle]] = relationship(
        lazy="raise",
        foreign_keys="ItemBundle.base_item_id",
        order_by="ItemBundle.id",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )


class ItemVariation(Base):
    __tablename__ = "item_variations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    value: Mapped[dict[str, str]] = mapped_column(JSONType)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    description: Mapped[dict[str, str] | None] = mapped_column(JSONType, nullable=True)
    position: Mapped[int] = mapped_column(Integer, default=0)
    default_price: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    original_price: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    free_price_suggestion: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    require_approval: Mapped[bool] = mapped_column(Boolean, default=False)
    checkin_attention: Mapped[bool] = mapped_column(Boolean, default=False)
    checkin_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    available_from: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    available_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    hide_without_voucher: Mapped[bool] = mapped_column(Boolean, default=False)
    all_sales_channels: Mapped[bool] = mapped_column(Boolean, default=True)
    limit_sales_channels: Mapped[list[str]] = mapped_column(JSONType, default=list)
    meta_data: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)


class ItemAddOn(Base):
    __tablename__ = "item_addons"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    base_item_id: Mapped[int] = mapped_column(
        ForeignKey("items.id", ondelete="CASCADE"), index=True
    )
    addon_category_id: Mapped[int] = mapped_column(
        ForeignKey("item_categories.id", ondelete="CASCADE"), index=True
    )
    min_count: Mapped[int] = mapped_column(Integer, default=0)
    max_count: Mapped[int] = mapped_column(Integer, default=1)
    position: Mapped[int] = mapped_column(Integer, default=0)
    multi_allowed: Mapped[bool] = mapped_column(Boolean, default=False)
    price_included: Mapped[bool] = mapped_column(Boolean, default=False)


class ItemBundle(Base):
    __tablename__ = "item_bundles"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    base_item_id: Mapped[int] = mapped_column(
        ForeignKey("items.id", ondelete="CASCADE"), index=True
    )
    bundled_item_id: Mapped[int] = mapped_column(
        ForeignKey("items.id", ondelete="CASCADE"), index=True
    )
    bundled_variation_id: Mapped[int | None] = mapped_column(
        ForeignKey("item_variations.id", ondelete="CASCADE"), nullable=True, index=True
    )
    count: Mapped[int] = mapped_column(Integer, default=1)
    designated_price: Mapped[Decimal] = mapped_column(Money, default=Decimal("0.00"))
