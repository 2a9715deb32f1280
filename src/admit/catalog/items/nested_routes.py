"""Variations, add-ons and bundles of one item, under ``items/{item}/``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from sqlalchemy import Select, func, select
from starlette.responses import Response

from admit.catalog.items import item_service
from admit.catalog.items import nested_service as nested
from admit.catalog.items.resource import EVENT_PATH, ItemChild
from admit.catalog.items.rows import ADDON_ROWS, BUNDLE_ROWS, ITEM_ROWS, VARIATION_ROWS
from admit.catalog.items.schemas import (
    AddOnIn,
    AddOnOut,
    BundleIn,
    BundleOut,
    VariationIn,
    VariationOut,
)
from admit.kit.http.context import EventContext, OrgContext
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.resources.filtering import Filter, FilterSet, Ordering, parse_str
from admit.kit.resources.i18n_search import i18n_contains
from admit.models import ItemAddOn, ItemBundle, ItemVariation

ITEM_PATH = f"{EVENT_PATH}/items/{{item}}"


async def _variation_count(ctx: OrgContext, item_id: int) -> int:
    query = select(func.count()).select_from(ItemVariation).where(ItemVariation.item_id == item_id)
    return int(await ctx.session.scalar(query) or 0)


def _value_contains(term: str) -> Any:
    return i18n_contains(ItemVariation.value, term.lower())


class VariationResource(ItemChild):
    name = "item-variations"
    path = f"{ITEM_PATH}/variations"
    model = ItemVariation
    read_schema = VariationOut
    write_schema = VariationIn
    filters = FilterSet(
        (
            Filter.boolean("active", ItemVariation.active),
            Filter.where("search", parse_str, _value_contains),
        )
    )
    ordering = Ordering(
        fields={"id": ItemVariation.id, "position": ItemVariation.position},
        default=("id",),
        pk=ItemVariation.id,
    )

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        return select(ItemVariation).where(ItemVariation.item_id == self.item(ctx).id)

    renderer = VARIATION_ROWS

    def to_read(self, ctx: OrgContext, obj: ItemVariation) -> Any:
        assert isinstance(ctx, EventContext)
        return nested.variation_to_read(obj, self.item(ctx), ctx.event.item_meta_properties)

    def render_extra(self, ctx: OrgContext) -> dict[str, Any]:
        assert isinstance(ctx, EventContext)
        item = self.item(ctx)
        # What a variation inherits, as the item's own row would show it.
        price = ITEM_ROWS.convert("default_price", item.default_price)
        parent = {"default_price": price, "meta_data": item.meta_data}
        return {"declared": ctx.event.item_meta_properties, "item": parent}

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: Any, supplied: set[str]
    ) -> None:
        assert isinstance(data, VariationIn) and isinstance(ctx, EventContext)
        if obj is None and not await _variation_count(ctx, self.item(ctx).id):
            # An item has variations from its creation on, or never (as the reference).
            raise APIError(
                403,
                "This variation cannot be created because the item does not have variations. "
                "Changing a product without variations to a product with variations is not "
                "allowed.",
            )
        errors = nested.variation_errors(data, ctx.event.item_meta_properties)
        if errors:
            raise FieldErrors(errors)

    def new_object(self, ctx: OrgContext) -> ItemVariation:
        return ItemVariation(item_id=self.item(ctx).id)

    def apply(
        self, ctx: OrgContext, obj: ItemVariation, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, VariationIn)
        nested.apply_variation(obj, data, supplied, creating=obj.id is None)

    async def perform_delete(self, ctx: OrgContext, obj: ItemVariation) -> Response:
        if await item_service.ordered(ctx.session, item_id=obj.item_id, variation_id=obj.id):
            raise APIError(403, item_service.VARIATION_ORDERED)
        if await _variation_count(ctx, obj.item_id) <= 1:
            raise APIError(
                403,
                "This variation cannot be deleted because it is the only variation. Changing a "
                "product with variations to a product without variations is not allowed.",
            )
        return await super().perform_delete(ctx, obj)


class AddOnResource(ItemChild):
    name = "item-addons"
    path = f"{ITEM_PATH}/addons"
    model = ItemAddOn
    read_schema = AddOnOut
    write_schema = AddOnIn
    current_exclude = frozenset()
    ordering = Ordering(
        fields={"id": ItemAddOn.id, "position": ItemAddOn.position},
        default=("id",),
        pk=ItemAddOn.id,
    )

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        return select(ItemAddOn).where(ItemAddOn.base_item_id == self.item(ctx).id)

    renderer = ADDON_ROWS

    def to_read(self, ctx: OrgContext, obj: ItemAddOn) -> Any:
        return nested.addon_to_read(obj)

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: Any, supplied: set[str]
    ) -> None:
        assert isinstance(data, AddOnIn) and isinstance(ctx, EventContext)
        categories = await nested.load_categories(ctx.session, ctx.event.id, [data])
        taken = await nested.taken_categories(
            ctx.session, self.item(ctx).id, obj.id if obj is not None else None
        )
        errors = nested.addon_errors(data, categories, taken)
        if errors:
            raise FieldErrors(errors)

    def new_object(self, ctx: OrgContext) -> ItemAddOn:
        return ItemAddOn(base_item_id=self.item(ctx).id)

    def apply(self, ctx: OrgContext, obj: ItemAddOn, data: BaseModel, supplied: set[str]) -> None:
        assert isinstance(data, AddOnIn)
        nested.apply_addon(obj, data)


class BundleResource(ItemChild):
    name = "item-bundles"
    path = f"{ITEM_PATH}/bundles"
    model = ItemBundle
    read_schema = BundleOut
    write_schema = BundleIn
    current_exclude = frozenset()
    ordering = Ordering(fields={"id": ItemBundle.id}, default=("id",), pk=ItemBundle.id)

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        return select(ItemBundle).where(ItemBundle.base_item_id == self.item(ctx).id)

    renderer = BUNDLE_ROWS

    def to_read(self, ctx: OrgContext, obj: ItemBundle) -> Any:
        return nested.bundle_to_read(obj)

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: Any, supplied: set[str]
    ) -> None:
        assert isinstance(data, BundleIn) and isinstance(ctx, EventContext)
        refs = await nested.load_bundle_refs(ctx.session, ctx.event.id, [data])
        errors = nested.bundle_errors(data, refs, self.item(ctx).id)
        if errors:
            raise FieldErrors(errors)

    def new_object(self, ctx: OrgContext) -> ItemBundle:
        return ItemBundle(base_item_id=self.item(ctx).id)

    def apply(self, ctx: OrgContext, obj: ItemBundle, data: BaseModel, supplied: set[str]) -> None:
        assert isinstance(data, BundleIn)
        nested.apply_bundle(obj, data)
