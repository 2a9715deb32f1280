"""Dates of an event series: ``E/subevents/`` CRUD and the organizer-wide ``O/subevents/`` list.

Dates exist only on events with ``has_subevents``: on a single event the list is empty and a
create is refused with 400. Lists load price overrides with two extra queries whatever the page
size; the organizer-wide list adds one for the events' slugs.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from sqlalchemy import Select, select
from sqlalchemy.orm import selectinload
from starlette.responses import Response

from admit.events import availability
from admit.events.service import attr_params, load_meta_properties
from admit.kit.http.context import OrgContext
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.resources.crud import Resource, mount_crud
from admit.kit.resources.filtering import (
    Filter,
    FilterSet,
    Ordering,
    date_range,
    parse_bool,
    parse_datetime,
    parse_str,
)
from admit.kit.resources.pagination import paginate
from admit.kit.stamps.catalog import ModifiedSinceList
from admit.models import Event, SubEvent
from admit.notifications.notify import notify_in_event
from admit.seating import sync as seating_sync
from admit.subevents import service
from admit.subevents.meta import MetaPropertyResource
from admit.subevents.rows import ORGANIZER_SUBEVENT_ROWS, SUBEVENT_ROWS
from admit.subevents.schemas import SubEventIn, SubEventOut

router = api_router()

WRITE = "event.subevents:write"
ADDED = "service.subevent.added"
CHANGED = "service.subevent.changed"
DELETED = "service.subevent.deleted"


async def _notify(ctx: OrgContext, action: str, subevent_id: int) -> None:
    await notify_in_event(ctx, action, subevent=subevent_id)


_COMMON = (
    Filter.boolean("active", SubEvent.active),
    Filter.boolean("is_public", SubEvent.is_public),
    Filter.where("is_future", parse_bool, service.is_future),
    Filter.where("is_past", parse_bool, service.is_past),
    *date_range("date_from", SubEvent.date_from),
    *date_range("date_to", SubEvent.date_to),
    Filter.where("ends_after", parse_datetime, service.ends_after),
    Filter.where("modified_since", parse_datetime, lambda v: SubEvent.last_modified >= v),
    # Adds best_availability_state (from quotas: admit.events.availability asks the quotas package).
    Filter("with_availability_for", parse_str, lambda q, _v: q),
)
EVENT_FILTERS = FilterSet((*_COMMON, Filter.where("search", parse_str, service.search)))
ORGANIZER_FILTERS = FilterSet(
    (
        *_COMMON,
        Filter.boolean("event__live", Event.live),
        Filter.where("search", parse_str, service.search_with_event),
    )
)
ORDERING = Ordering(
    fields={
        "date_from": SubEvent.date_from,
        "id": SubEvent.id,
        "last_modified": SubEvent.last_modified,
    },
    default=("date_from",),
    pk=SubEvent.id,
)
LOAD = (selectinload(SubEvent.item_overrides), selectinload(SubEvent.variation_overrides))


class _SubEvents(Resource[SubEvent]):
    model = SubEvent
    read_schema = SubEventOut
    write_schema = SubEventIn
    write_permission = WRITE
    ordering = ORDERING
    loader_options = LOAD
    tag = "subevents"
    renderer = SUBEVENT_ROWS

    def event_slug(self, ctx: OrgContext, obj: SubEvent) -> str:
        raise NotImplementedError

    def to_read(self, ctx: OrgContext, obj: SubEvent) -> Any:
        return service.subevent_to_read(obj, self.event_slug(ctx, obj))

    def serialize_many(self, ctx: OrgContext, objs: Any) -> list[dict[str, Any]]:
        out = super().serialize_many(ctx, objs)
        if "with_availability_for" in ctx.request.query_params:
            states = ctx.extra.get("availability", {})
            for obj, data in zip(objs, out, strict=True):
                data["best_availability_state"] = states.get(obj.id)
        return out

    async def prepare_rows(self, ctx: OrgContext, rows: list[SubEvent]) -> None:
        """Async work a page needs before it is serialised (availability from quotas)."""
        channel = ctx.request.query_params.get("with_availability_for")
        if channel:
            ctx.extra["availability"] = await availability.subevent_states(
                ctx.session, rows, channel
            )

    async def load_properties(self, ctx: OrgContext) -> dict[str, Any]:
        if "properties" not in ctx.extra:
            ctx.extra["properties"] = await load_meta_properties(ctx.session, ctx.organizer_id)
        return ctx.extra["properties"]

    async def handle_list(self, ctx: OrgContext) -> Response:
        if attr_params(ctx.request.query_params):
            await self.load_properties(ctx)
        # Availability comes from the quotas' counts: the read schema path answers it.
        if self.renders(ctx) and "with_availability_for" not in ctx.request.query_params:
            return await self.render_list(ctx)
        body = await paginate(
            ctx.request, ctx.session, self.list_query(ctx), list, options=self.loader_options
        )
        await self.prepare_rows(ctx, body["results"])
        body["results"] = self.serialize_many(ctx, body["results"])
        return JSONResponse(body)


class SubEventResource(ModifiedSinceList, _SubEvents):
    """``E/subevents/``: the dates of one event series."""

    name = "subevents"
    path = "/organizers/{organizer}/events/{event}/subevents"
    filters = EVENT_FILTERS

    def render_extra(self, ctx: OrgContext) -> dict[str, Any]:
        return {"event_slug": ctx.event.slug}  # type: ignore[attr-defined]

    def conditional_list(self, ctx: OrgContext) -> bool:
        return "with_availability_for" not in ctx.request.query_params  # sales change it

    def plain_base(self) -> bool:
        return True  # ``list_query`` adds only the ``attr[...]`` clauses (see static_list)

    def static_list(self, ctx: OrgContext) -> bool:
        return not attr_params(ctx.request.query_params) and super().static_list(ctx)

    def event_slug(self, ctx: OrgContext, obj: SubEvent) -> str:
        return ctx.event.slug  # type: ignore[attr-defined]

    def list_query(self, ctx: OrgContext) -> Select[Any]:
        query = super().list_query(ctx)
        properties = ctx.extra.get("properties", {})
        for clause in service.meta_clauses(ctx.request.query_params, properties, ctx.event):  # type: ignore[attr-defined]
            query = query.where(clause)
        return query

    async def handle_create(self, ctx: OrgContext) -> Response:
        if not ctx.event.has_subevents:  # type: ignore[attr-defined]
            raise FieldErrors.general(service.NOT_A_SERIES)
        return await super().handle_create(ctx)

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: SubEvent | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, SubEventIn)
        # PATCH leaves stored meta data alone unless it names it (properties may have changed).
        check_meta = ctx.request.method != "PATCH" or "meta_data" in supplied
        properties = await self.load_properties(ctx) if check_meta else {}
        await service.validate_subevent(
            ctx.session,
            ctx.event,  # type: ignore[attr-defined]
            data,
            properties,
            check_meta=check_meta,
            current=obj,
        )

    def apply(self, ctx: OrgContext, obj: SubEvent, data: BaseModel, supplied: set[str]) -> None:
        assert isinstance(data, SubEventIn)
        service.apply_subevent(obj, data, new=obj.id is None)

    async def perform_create(self, ctx: OrgContext, data: BaseModel, supplied: set[str]) -> Any:
        obj = await super().perform_create(ctx, data, supplied)
        await seating_sync.sync_subevent(ctx.session, obj, None)  # the date's seats, if any
        await _notify(ctx, ADDED, obj.id)
        return obj

    async def perform_update(
        self, ctx: OrgContext, obj: SubEvent, data: BaseModel, supplied: set[str]
    ) -> None:
        before = (obj.seating_plan, dict(obj.seat_category_mapping or {}))
        await super().perform_update(ctx, obj, data, supplied)
        await seating_sync.sync_subevent(ctx.session, obj, before)  # seats follow the plan
        await _notify(ctx, CHANGED, obj.id)

    async def perform_delete(self, ctx: OrgContext, obj: SubEvent) -> Response:
        reason = await service.deletion_refusal(ctx.session, obj)
        if reason:
            raise APIError(403, reason)
        subevent_id = obj.id
        response = await super().perform_delete(ctx, obj)
        await _notify(ctx, DELETED, subevent_id)
        return response


class OrganizerSubEventResource(_SubEvents):
    """``O/subevents/``: the dates of every event series the caller can see."""

    name = "organizer-subevents"
    path = "/organizers/{organizer}/subevents"
    scope = "organizer"
    actions = frozenset({"list"})
    filters = ORGANIZER_FILTERS
    renderer = ORGANIZER_SUBEVENT_ROWS

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        query = (
            select(SubEvent)
            .join(Event, Event.id == SubEvent.event_id)
            .where(Event.organizer_id == ctx.organizer_id)
        )
        visible = ctx.accessible_event_ids()
        if visible is not None:
            query = query.where(SubEvent.event_id.in_(visible))
        return query

    def list_query(self, ctx: OrgContext) -> Select[Any]:
        query = super().list_query(ctx)
        properties = ctx.extra.get("properties", {})
        for clause in service.meta_clauses(ctx.request.query_params, properties, None):
            query = query.where(clause)
        return query

    def event_slug(self, ctx: OrgContext, obj: SubEvent) -> str:
        return ctx.extra["slugs"][obj.event_id]

    async def prepare_rows(self, ctx: OrgContext, rows: list[SubEvent]) -> None:
        event_ids = {r.event_id for r in rows}
        slugs = {}
        if event_ids:
            found = await ctx.session.execute(
                select(Event.id, Event.slug).where(Event.id.in_(event_ids))
            )
            slugs = {event_id: slug for event_id, slug in found.all()}
        ctx.extra["slugs"] = slugs
        await super().prepare_rows(ctx, rows)


for resource in (SubEventResource(), OrganizerSubEventResource(), MetaPropertyResource()):
    mount_crud(router, resource)
