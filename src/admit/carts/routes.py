"""Cart positions: list, detail, create (with add-ons), bulk create, delete.

Reading needs ``event.orders:read``, writing ``event.orders:write``. Only API-created carts
(``cart_id`` ending in ``@api``) are visible here.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends
from sqlalchemy import Select
from starlette.responses import Response

from admit.carts import service
from admit.carts.render import render_many
from admit.carts.schemas import BulkResponse, CartPositionIn, CartPositionOut
from admit.db import utcnow
from admit.kit.http.body import read_list, read_object
from admit.kit.http.context import EventAccess, EventContext, OrgContext
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import Resource, mount_crud, validate_input
from admit.kit.resources.filtering import Ordering
from admit.kit.resources.pagination import paginate
from admit.models import CartPosition

READ = "event.orders:read"
WRITE = "event.orders:write"
PATH = "/organizers/{organizer}/events/{event}/cartpositions"

router = api_router()


class CartPositionResource(Resource[CartPosition]):
    name = "cartpositions"
    tag = "cart positions"
    path = PATH
    model = CartPosition
    read_schema = CartPositionOut
    write_schema = CartPositionIn
    read_permission = READ
    write_permission = WRITE
    actions = frozenset({"list", "retrieve", "create", "delete"})
    ordering = Ordering(fields={"id": CartPosition.id}, default=("id",), pk=CartPosition.id)

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        return super().base_query(ctx).where(CartPosition.cart_id.endswith("@api"))

    async def handle_list(self, ctx: OrgContext) -> Response:
        generated = utcnow()
        body = await paginate(ctx.request, ctx.session, self.list_query(ctx), list)
        body["results"] = await render_many(ctx.session, body["results"])
        return JSONResponse(body, headers={"X-Page-Generated": generated.isoformat()})

    async def handle_retrieve(self, ctx: OrgContext, pk: str) -> Response:
        [body] = await render_many(ctx.session, [await self.get_object(ctx, pk)])
        return JSONResponse(body)

    async def handle_create(self, ctx: OrgContext) -> Response:
        assert isinstance(ctx, EventContext)
        data = validate_input(CartPositionIn, await read_object(ctx.request))
        assert isinstance(data, CartPositionIn)
        body = await service.create(ctx.session, ctx.event, data)
        return JSONResponse(body, status_code=201)

    async def perform_delete(self, ctx: OrgContext, obj: CartPosition) -> Response:
        await service.delete_position(ctx.session, obj)
        return no_content()


# The most cart positions one bulk_create takes (each is a quota check and a write).
BULK_LIMIT = 1000


@router.post(
    f"{PATH}/bulk_create/",
    name="cartpositions-bulk-create",
    tags=["cart positions"],
    response_model=BulkResponse,
    openapi_extra=json_body(CartPositionIn, many=True),
)
async def bulk_create(ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]) -> Response:
    """Not atomic: every entry succeeds or fails on its own (see ``results``)."""
    entries = await read_list(ctx.request, BULK_LIMIT)
    results = await service.bulk_create(ctx.session, ctx.event, entries)
    return JSONResponse({"results": results})


mount_crud(router, CartPositionResource())
