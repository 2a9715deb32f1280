"""``E/ticketlayouts/`` (CRUD) and ``E/ticketlayoutitems/`` (the assignments, a list).

Reading needs access to the event only (layouts hold no personal data; printing clients and
the catalog readers see them, like items); writing needs ``event.settings.general:write``, the
permission the reference asks for to change ticket layouts. The rules are in
:mod:`admit.tickets.layouts`. Importing this module also makes event cloning copy layouts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import Request
from sqlalchemy import Select, select
from starlette.responses import Response

from admit.events.cloning import extra_copiers
from admit.kit.http.body import read_object
from admit.kit.http.context import EventContext, OrgContext, public_base_url
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.http.routing import api_router
from admit.kit.resources.crud import Resource, flush_guard, mount_crud, parse_update, validate_input
from admit.kit.resources.pagination import paginate
from admit.models import TicketLayout, TicketLayoutItem
from admit.tickets import layouts as service
from admit.tickets.layout_format import MAX_LAYOUT_BYTES
from admit.tickets.layout_schemas import TicketLayoutIn, TicketLayoutItemOut, TicketLayoutOut

EVENT_PATH = "/organizers/{organizer}/events/{event}"

router = api_router(tags=["tickets"])


async def read_layout_body(request: Request) -> dict[str, Any]:
    """The JSON body; one too large to read at all (past ``ADMIT_MAX_BODY_BYTES``) is a
    layout too large, answered as the layout's 400 rather than a bare 413."""
    try:
        return await read_object(request)
    except APIError as exc:
        if exc.status != 413:
            raise
        raise FieldErrors(
            {"layout": [f"A layout may hold at most {MAX_LAYOUT_BYTES:,} bytes of JSON; this "
                        "request is larger than the server accepts at all."]}
        ) from None  # fmt: skip


class TicketLayouts(Resource[TicketLayout]):
    name = "ticketlayouts"
    path = f"{EVENT_PATH}/ticketlayouts"
    model = TicketLayout
    read_schema = TicketLayoutOut
    write_schema = TicketLayoutIn
    read_permission = None
    write_permission = service.WRITE_PERMISSION
    tag = "tickets"

    def list_query(self, ctx: OrgContext) -> Select[Any]:
        return self.base_query(ctx).order_by(TicketLayout.id)

    async def load_extras(self, ctx: OrgContext, layouts: Sequence[TicketLayout]) -> None:
        ctx.extra["assignments"] = await service.assignments_of(
            ctx.session, [layout.id for layout in layouts]
        )
        ctx.extra["backgrounds"] = await service.uploads_by_id(
            ctx.session, [layout.background_id for layout in layouts]
        )

    def serialize(self, ctx: OrgContext, obj: TicketLayout) -> dict[str, Any]:
        background = ctx.extra["backgrounds"].get(obj.background_id)
        assignments = ctx.extra["assignments"].get(obj.id, [])
        return service.layout_to_read(obj, background, assignments, public_base_url(ctx.request))

    async def handle_list(self, ctx: OrgContext) -> Response:
        body = await paginate(ctx.request, ctx.session, self.list_query(ctx), list)
        await self.load_extras(ctx, body["results"])
        body["results"] = [self.serialize(ctx, layout) for layout in body["results"]]
        return JSONResponse(body)

    async def get_object(self, ctx: OrgContext, raw_pk: str) -> TicketLayout:
        layout = await super().get_object(ctx, raw_pk)
        await self.load_extras(ctx, [layout])
        return layout

    async def _save(
        self, ctx: OrgContext, obj: TicketLayout | None, raw: dict[str, Any], partial: bool
    ) -> TicketLayout:
        assert isinstance(ctx, EventContext)
        if obj is None:
            data, supplied = validate_input(TicketLayoutIn, raw), set(raw)
        else:
            data, supplied = parse_update(TicketLayoutIn, self.serialize(ctx, obj), raw, partial)
        assert isinstance(data, TicketLayoutIn)
        return await flush_guard(
            service.save_layout(
                ctx.session,
                ctx.event.id,
                obj,
                data,
                supplied & set(TicketLayoutIn.model_fields),
                principal=ctx.principal,
                base_url=public_base_url(ctx.request),
                store=ctx.request.app.state.background.store,
            )
        )

    async def handle_create(self, ctx: OrgContext) -> Response:
        raw = await read_layout_body(ctx.request)
        layout = await self._save(ctx, None, raw, partial=False)
        layout = await self.reload(ctx, layout)
        return JSONResponse(self.serialize(ctx, layout), status_code=201)

    async def handle_update(self, ctx: OrgContext, pk: str, partial: bool) -> Response:
        layout = await self.get_object(ctx, pk)
        raw = await read_layout_body(ctx.request)
        layout = await self._save(ctx, layout, raw, partial)
        layout = await self.reload(ctx, layout)
        return JSONResponse(self.serialize(ctx, layout))

    async def perform_delete(self, ctx: OrgContext, obj: TicketLayout) -> Response:
        assert isinstance(ctx, EventContext)
        await service.delete_layout(ctx.session, ctx.event.id, obj)
        return no_content()


class TicketLayoutItems(Resource[TicketLayoutItem]):
    """Which layout each product uses per sales channel (written through the layouts)."""

    name = "ticketlayoutitems"
    path = f"{EVENT_PATH}/ticketlayoutitems"
    model = TicketLayoutItem
    read_schema = TicketLayoutItemOut
    read_permission = None
    actions = frozenset({"list"})
    tag = "tickets"

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        assert isinstance(ctx, EventContext)
        return (
            select(TicketLayoutItem)
            .join(TicketLayout, TicketLayout.id == TicketLayoutItem.layout_id)
            .where(TicketLayout.event_id == ctx.event.id)
        )

    def list_query(self, ctx: OrgContext) -> Select[Any]:
        return self.base_query(ctx).order_by(TicketLayoutItem.id)

    def serialize(self, ctx: OrgContext, obj: TicketLayoutItem) -> dict[str, Any]:
        return {
            "id": obj.id,
            "layout": obj.layout_id,
            "item": obj.item_id,
            "sales_channel": obj.sales_channel,
        }


mount_crud(router, TicketLayouts())
mount_crud(router, TicketLayoutItems())
if service.copy_layouts not in extra_copiers:
    extra_copiers.append(service.copy_layouts)
