"""The base of the catalog resources: event scoped, ``event.items:write`` to change anything.

PUT and PATCH validate the merged state like every resource, but fields that are only written
when sent (meta data) or never written through this endpoint (nested lists, ignored in the body
of an update as the reference ignores them) are left out of the current state, so stale values
there cannot fail an unrelated change.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel
from sqlalchemy import select
from starlette.responses import Response

from admit.kit.http.body import read_object
from admit.kit.http.context import OrgContext
from admit.kit.http.errors import not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.resources.crud import Resource, flush_guard, parse_update
from admit.kit.resources.filtering import parse_pk
from admit.models import Item
from admit.notifications.notify import ITEM_CHANGED, notify_in_event

WRITE = "event.items:write"
EVENT_PATH = "/organizers/{organizer}/events/{event}"


class CatalogResource(Resource[Any]):
    scope = "event"
    write_permission = WRITE
    read_permission = None
    # Left out of the current state / out of the body on PUT and PATCH.
    current_exclude: ClassVar[frozenset[str]] = frozenset({"meta_data"})
    body_exclude: ClassVar[frozenset[str]] = frozenset()

    def current_state(self, ctx: OrgContext, obj: Any, raw: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in self.serialize(ctx, obj).items() if k not in self.current_exclude}

    async def handle_update(self, ctx: OrgContext, pk: str, partial: bool) -> Response:
        assert self.write_schema is not None
        obj = await self.get_object(ctx, pk)
        raw = await read_object(ctx.request)
        raw = {k: v for k, v in raw.items() if k not in self.body_exclude}
        current = self.current_state(ctx, obj, raw)
        data, supplied = parse_update(self.write_schema, current, raw, partial)
        await self.validate(ctx, data, obj, supplied)
        await flush_guard(self.perform_update(ctx, obj, data, supplied))
        obj = await self.reload(ctx, obj)
        return JSONResponse(self.serialize(ctx, obj))


async def notify_item(ctx: OrgContext, action: str, item_id: int) -> None:
    """Records an ``service.event.item.*`` notification in the request's transaction."""
    await notify_in_event(ctx, action, item=item_id)


class ItemChild(CatalogResource):
    """Resources under ``items/{item}/``: 404 when the item is not one of this event's.
    A variation, add-on or bundle is part of its item: writing one changes the item
    (``service.event.item.changed``)."""

    parent_param = "item"
    tag = "items"

    async def resolve_parent(self, ctx: OrgContext, value: str) -> Item:
        query = select(Item).where(Item.id == parse_pk(value), Item.event_id == ctx.event.id)  # type: ignore[attr-defined]
        item = (await ctx.session.execute(query)).scalar_one_or_none()
        if item is None:
            raise not_found()
        return item

    def item(self, ctx: OrgContext) -> Item:
        return ctx.extra["parent"]

    def new_object(self, ctx: OrgContext) -> Any:
        return self.model()

    async def perform_create(self, ctx: OrgContext, data: BaseModel, supplied: set[str]) -> Any:
        obj = await super().perform_create(ctx, data, supplied)
        await notify_item(ctx, ITEM_CHANGED, self.item(ctx).id)
        return obj

    async def perform_update(
        self, ctx: OrgContext, obj: Any, data: BaseModel, supplied: set[str]
    ) -> None:
        await super().perform_update(ctx, obj, data, supplied)
        await notify_item(ctx, ITEM_CHANGED, self.item(ctx).id)

    async def perform_delete(self, ctx: OrgContext, obj: Any) -> Response:
        response = await super().perform_delete(ctx, obj)
        await notify_item(ctx, ITEM_CHANGED, self.item(ctx).id)
        return response
