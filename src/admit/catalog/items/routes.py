"""Categories, items and the item's variations, add-ons and bundles (``event.items:write``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from sqlalchemy.orm import selectinload
from starlette.responses import Response

from admit.catalog.items import item_service, service
from admit.catalog.items.item_json import ITEM_SHAPE, item_params
from admit.catalog.items.item_schemas import NESTED, ItemIn, ItemOut
from admit.catalog.items.nested_routes import AddOnResource, BundleResource, VariationResource
from admit.catalog.items.program_times import ProgramTimeResource
from admit.catalog.items.resource import EVENT_PATH, CatalogResource, notify_item
from admit.catalog.items.rows import CATEGORY_ROWS, ITEM_ROWS
from admit.catalog.items.schemas import CategoryIn, CategoryOut
from admit.kit.http.context import EventContext, OrgContext, public_base_url
from admit.kit.http.errors import APIError
from admit.kit.http.routing import api_router
from admit.kit.resources.crud import mount_crud
from admit.kit.resources.filtering import Filter, FilterSet, Ordering, parse_int, parse_str
from admit.kit.stamps.catalog import ModifiedSinceList
from admit.models import Item, ItemCategory
from admit.notifications.notify import ITEM_ADDED, ITEM_CHANGED, ITEM_DELETED
from admit.uploads.pictures import apply_picture, picture_url, resolve_picture

router = api_router()


class CategoryResource(ModifiedSinceList, CatalogResource):
    name = "categories"
    path = f"{EVENT_PATH}/categories"
    model = ItemCategory
    read_schema = CategoryOut
    write_schema = CategoryIn
    filters = FilterSet((Filter.boolean("is_addon", ItemCategory.is_addon),))
    ordering = Ordering(
        fields={"id": ItemCategory.id, "position": ItemCategory.position},
        default=("position",),
        pk=ItemCategory.id,
    )
    loader_options = (selectinload(ItemCategory.cross_selling_match_products),)
    renderer = CATEGORY_ROWS

    def to_read(self, ctx: OrgContext, obj: ItemCategory) -> Any:
        return service.category_to_read(obj)

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: Any, supplied: set[str]
    ) -> None:
        assert isinstance(data, CategoryIn) and isinstance(ctx, EventContext)
        ctx.extra["products"] = await service.validate_category(ctx.session, ctx.event.id, data)

    def apply(
        self, ctx: OrgContext, obj: ItemCategory, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, CategoryIn)
        service.apply_category(obj, data, ctx.extra["products"])


class ItemResource(ModifiedSinceList, CatalogResource):
    name = "items"
    path = f"{EVENT_PATH}/items"
    model = Item
    read_schema = ItemOut
    write_schema = ItemIn
    current_exclude = frozenset({"meta_data", *NESTED})
    # Variations, add-ons and bundles change through their own endpoints only.
    body_exclude = frozenset(NESTED)
    filters = FilterSet(
        (
            Filter.boolean("active", Item.active),
            Filter.where("category", parse_int, item_service.category_clause),
            Filter.boolean("admission", Item.admission),
            Filter.where("tax_rate", item_service.parse_tax_rate, item_service.tax_rate_clause),
            Filter.boolean("free_price", Item.free_price),
            Filter.where("search", parse_str, item_service.search_clause),
        )
    )
    ordering = Ordering(
        fields={"id": Item.id, "position": Item.position}, default=("position",), pk=Item.id
    )
    loader_options = (
        selectinload(Item.variations),
        selectinload(Item.addons),
        selectinload(Item.bundles),
        selectinload(Item.require_membership_types),
    )

    renderer = ITEM_ROWS
    json_shape = ITEM_SHAPE

    def json_params(self, ctx: OrgContext) -> dict[str, Any]:
        assert isinstance(ctx, EventContext)
        return item_params(public_base_url(ctx.request), ctx.event.item_meta_properties)

    async def prepare(self, ctx: OrgContext, params: dict[str, str]) -> None:
        assert isinstance(ctx, EventContext)
        ctx.extra["tax_rates"] = await item_service.tax_rates(ctx.session, ctx.event.id)

    async def prepare_read(self, ctx: OrgContext, params: dict[str, str]) -> None:
        if not self.renders(ctx):  # the renderer selects each item's rate itself
            await self.prepare(ctx, params)

    def render_extra(self, ctx: OrgContext) -> dict[str, Any]:
        assert isinstance(ctx, EventContext)
        return {
            "declared": ctx.event.item_meta_properties,
            "base_url": public_base_url(ctx.request),
        }

    def to_read(self, ctx: OrgContext, obj: Item) -> Any:
        assert isinstance(ctx, EventContext)
        data = item_service.item_to_read(
            obj, ctx.event.item_meta_properties, ctx.extra["tax_rates"]
        )
        data["picture"] = picture_url(public_base_url(ctx.request), obj)
        return data

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: Any, supplied: set[str]
    ) -> None:
        assert isinstance(data, ItemIn) and isinstance(ctx, EventContext)
        ctx.extra["refs"] = await item_service.validate_item(
            ctx.session, ctx.event, data, creating=obj is None, supplied=supplied, item=obj
        )
        ctx.extra["picture"] = await resolve_picture(
            ctx.session, ctx.principal, data.picture, obj, public_base_url(ctx.request)
        )

    def apply(self, ctx: OrgContext, obj: Item, data: BaseModel, supplied: set[str]) -> None:
        assert isinstance(data, ItemIn)
        item_service.apply_item(obj, data, ctx.extra["refs"], supplied, creating=obj.id is None)
        apply_picture(obj, ctx.extra["picture"])

    async def perform_create(self, ctx: OrgContext, data: BaseModel, supplied: set[str]) -> Item:
        item = await super().perform_create(ctx, data, supplied)
        await notify_item(ctx, ITEM_ADDED, item.id)
        return item

    async def perform_update(
        self, ctx: OrgContext, obj: Item, data: BaseModel, supplied: set[str]
    ) -> None:
        await super().perform_update(ctx, obj, data, supplied)
        await notify_item(ctx, ITEM_CHANGED, obj.id)

    async def perform_delete(self, ctx: OrgContext, obj: Item) -> Response:
        item_id = obj.id
        if await item_service.ordered(ctx.session, item_id=item_id):
            raise APIError(403, item_service.ITEM_ORDERED)
        response = await super().perform_delete(ctx, obj)
        await notify_item(ctx, ITEM_DELETED, item_id)
        return response


for resource in (
    CategoryResource(),
    ItemResource(),
    VariationResource(),
    AddOnResource(),
    BundleResource(),
    ProgramTimeResource(),
):
    mount_crud(router, resource)
