"""Quotas ``E/quotas/`` (CRUD, ``with_availability``) and ``E/quotas/{id}/availability/``.

Reading needs event access only; writing needs ``event.items:write``. Importing this module
also registers the quota copier for event cloning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import Depends
from pydantic import BaseModel
from sqlalchemy import bindparam, select
from sqlalchemy.orm import load_only, selectinload
from starlette.responses import Response

from admit.events.cloning import extra_copiers
from admit.kit.http.context import EventAccess, EventContext, OrgContext, lane_context
from admit.kit.http.errors import FieldErrors, not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.lanes.fastlane import LaneRequest
from admit.kit.resources.crud import Resource, mount_crud
from admit.kit.resources.filtering import (
    Filter,
    FilterSet,
    Ordering,
    parse_bool,
    parse_int,
    parse_int_list,
    parse_pk,
)
from admit.kit.resources.pagination import paginate
from admit.kit.stamps.catalog import ModifiedSinceList
from admit.models import Item, ItemVariation, Quota, quota_items
from admit.notifications.notify import notify_in_event
from admit.notifications.types import QUOTA_ACTIONS
from admit.quotas import service
from admit.quotas.cloning import copy_quotas
from admit.quotas.rows import QUOTA_ROWS
from admit.quotas.schemas import AvailabilityOut, QuotaIn, QuotaOut

WRITE = "event.items:write"
QUOTA_ADDED, QUOTA_CHANGED, QUOTA_DELETED = QUOTA_ACTIONS
router = api_router()

FILTERS = FilterSet(
    (
        Filter.eq("subevent", Quota.subevent_id, parse_int),
        Filter.where("subevent__in", parse_int_list, lambda ids: Quota.subevent_id.in_(ids)),
        Filter.where(
            "items__in",
            parse_int_list,
            lambda ids: Quota.id.in_(
                select(quota_items.c.quota_id).where(quota_items.c.item_id.in_(ids))
            ),
        ),
        Filter("with_availability", parse_bool, lambda query, _value: query),
    )
)


def wants_availability(ctx: OrgContext) -> bool:
    raw = ctx.request.query_params.get("with_availability")
    if not raw:
        return False
    try:
        return parse_bool(raw)
    except ValueError as exc:
        raise FieldErrors.single("with_availability", str(exc)) from None


class QuotaResource(ModifiedSinceList, Resource[Quota]):
    name = "quotas"
    path = "/organizers/{organizer}/events/{event}/quotas"
    model = Quota
    read_schema = QuotaOut
    write_schema = QuotaIn
    write_permission = WRITE
    filters = FILTERS
    ordering = Ordering(
        fields={"id": Quota.id, "position": Quota.position}, default=("position",), pk=Quota.id
    )
    loader_options = (
        selectinload(Quota.items).options(load_only(Item.id)),
        selectinload(Quota.variations).options(load_only(ItemVariation.id)),
    )
    renderer = QUOTA_ROWS

    def renders(self, ctx: OrgContext) -> bool:
        # Availability comes from the counts: the read schema path answers it.
        return super().renders(ctx) and not wants_availability(ctx)

    def to_read(self, ctx: OrgContext, obj: Quota) -> Any:
        return service.quota_to_read(obj)

    def serialize(self, ctx: OrgContext, obj: Quota) -> dict[str, Any]:
        data = super().serialize(ctx, obj)
        numbers = ctx.extra.get("availability")
        if numbers is None:
            data.pop("available")
            data.pop("available_number")
        else:
            data["available"] = numbers[obj.id].available
            data["available_number"] = numbers[obj.id].available_number
        return data

    def serialize_many(self, ctx: OrgContext, objs: Sequence[Quota]) -> list[dict[str, Any]]:
        return [self.serialize(ctx, obj) for obj in objs]

    async def handle_list(self, ctx: OrgContext) -> Response:
        if not wants_availability(ctx):
            return await super().handle_list(ctx)  # the renderer's
        body = await paginate(
            ctx.request, ctx.session, self.list_query(ctx), list, options=self.loader_options
        )
        ctx.extra["availability"] = await service.availability(ctx.session, body["results"])
        body["results"] = self.serialize_many(ctx, body["results"])
        return JSONResponse(body)

    async def handle_retrieve(self, ctx: OrgContext, pk: str) -> Response:
        if self.renders(ctx):
            return await self.render_detail(ctx, pk)
        obj = await self.get_object(ctx, pk)
        if wants_availability(ctx):
            ctx.extra["availability"] = await service.availability(ctx.session, [obj])
        return JSONResponse(self.serialize(ctx, obj))

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: Quota | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, QuotaIn)
        ctx.extra["resolved"] = await service.validate_quota(ctx.session, ctx.event, data)  # type: ignore[attr-defined]

    def apply(self, ctx: OrgContext, obj: Quota, data: BaseModel, supplied: set[str]) -> None:
        assert isinstance(data, QuotaIn)
        service.apply_quota(obj, data, ctx.extra["resolved"])

    # Each write records its type (the quota's history names who made it).
    async def perform_create(self, ctx: OrgContext, data: BaseModel, supplied: set[str]) -> Quota:
        quota = await super().perform_create(ctx, data, supplied)
        await notify_in_event(ctx, QUOTA_ADDED, quota=quota.id)
        return quota

    async def perform_update(
        self, ctx: OrgContext, obj: Quota, data: BaseModel, supplied: set[str]
    ) -> None:
        await super().perform_update(ctx, obj, data, supplied)
        await notify_in_event(ctx, QUOTA_CHANGED, quota=obj.id)

    async def perform_delete(self, ctx: OrgContext, obj: Quota) -> Response:
        quota_id = obj.id
        response = await super().perform_delete(ctx, obj)
        await notify_in_event(ctx, QUOTA_DELETED, quota=quota_id)
        return response


quotas = QuotaResource()
mount_crud(router, quotas)


@router.get(
    "/organizers/{organizer}/events/{event}/quotas/{id}/availability/",
    response_model=AvailabilityOut,
    tags=["quotas"],
    name="quotas-availability",
)
async def quota_availability(
    ctx: Annotated[EventContext, Depends(EventAccess())], id: str
) -> Response:
    """Everything that takes from the quota, counted now; null sizes mean unlimited."""
    return await availability_of(ctx, id)


# The counts need the quota row only, not its item and variation links.
_QUOTA = select(Quota).where(Quota.event_id == bindparam("event"), Quota.id == bindparam("id"))


async def availability_of(ctx: EventContext, id: str) -> Response:
    quota = await ctx.session.scalar(_QUOTA, {"event": ctx.event.id, "id": parse_pk(id)})
    if quota is None:
        raise not_found()
    numbers = await service.availability(ctx.session, [quota])
    return JSONResponse(AvailabilityOut(**numbers[quota.id].as_dict()).model_dump(mode="json"))


_READ_ACCESS = EventAccess()


async def availability_lane(request: LaneRequest) -> Response | None:
    """The availability read in the fast lane (polled hard while a sale runs)."""
    async with lane_context(request.scope, _READ_ACCESS, request.params) as ctx:
        if ctx is None:
            return None
        assert isinstance(ctx, EventContext)
        return await availability_of(ctx, request.params["id"])


if copy_quotas not in extra_copiers:
    extra_copiers.append(copy_quotas)
