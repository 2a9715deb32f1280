"""Discounts ``E/discounts/``: declared CRUD, written with ``event.items:write``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from sqlalchemy.orm import selectinload

from admit.catalog.discounts import service
from admit.catalog.discounts.rows import DISCOUNT_ROWS
from admit.catalog.discounts.schemas import DiscountIn, DiscountOut
from admit.kit.http.context import OrgContext
from admit.kit.http.routing import api_router
from admit.kit.resources.crud import Resource, mount_crud
from admit.kit.resources.filtering import Filter, FilterSet, Ordering
from admit.models import Discount

router = api_router()


class DiscountResource(Resource[Discount]):
    name = "discounts"
    path = "/organizers/{organizer}/events/{event}/discounts"
    model = Discount
    read_schema = DiscountOut
    write_schema = DiscountIn
    write_permission = "event.items:write"
    filters = FilterSet((Filter.boolean("active", Discount.active),))
    renderer = DISCOUNT_ROWS
    ordering = Ordering(
        fields={"id": Discount.id, "position": Discount.position},
        default=("position",),
        pk=Discount.id,
    )
    loader_options = (
        selectinload(Discount.condition_limit_products),
        selectinload(Discount.benefit_limit_products),
    )

    def to_read(self, ctx: OrgContext, obj: Discount) -> Any:
        return service.discount_to_read(obj)

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: Discount | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, DiscountIn)
        service.validate_discount(data)
        ctx.extra["items"] = await service.resolve_items(
            ctx.session,
            ctx.event.id,
            {
                "condition_limit_products": data.condition_limit_products,
                "benefit_limit_products": data.benefit_limit_products,
            },
        )

    def apply(self, ctx: OrgContext, obj: Discount, data: BaseModel, supplied: set[str]) -> None:
        assert isinstance(data, DiscountIn)
        service.apply_discount(obj, data, supplied, ctx.extra["items"])


mount_crud(router, DiscountResource())
