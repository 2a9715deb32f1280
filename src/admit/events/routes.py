"""Events: list with filters, detail, create, PUT/PATCH, delete."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends
from sqlalchemy import select
from starlette.responses import Response

from admit.events import availability, cloning, service
from admit.events.plugins import SALES_CHANNELS
from admit.events.schemas import EventDetailOut, EventIn, EventListOut
from admit.kit.http.body import read_object
from admit.kit.http.context import (
    EventAccess,
    EventContext,
    OrganizerAccess,
    OrgContext,
    public_base_url,
)
from admit.kit.http.errors import forbidden
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import Page, flush_guard, parse_update, validate_input
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
from admit.models import Event
from admit.notifications.notify import notify, notify_all

router = api_router(tags=["events"])

SETTINGS_WRITE = "event.settings.general:write"
# Flags whose change is its own notification type (besides ``service.event.changed``).
FLAG_NOTICES = {
    "live": ("service.event.live.activated", "service.event.live.deactivated"),
    "testmode": ("service.event.testmode.activated", "service.event.testmode.deactivated"),
}


def _channel(raw: str) -> str:
    if raw not in SALES_CHANNELS:
        raise ValueError(f'"{raw}" is not a valid choice.')
    return raw


FILTERS = FilterSet(
    (
        Filter.boolean("is_public", Event.is_public),
        Filter.boolean("live", Event.live),
        Filter.boolean("testmode", Event.testmode),
        Filter.boolean("has_subevents", Event.has_subevents),
        Filter.where("is_future", parse_bool, service.is_future),
        Filter.where("is_past", parse_bool, service.is_past),
        *date_range("date_from", Event.date_from),
        *date_range("date_to", Event.date_to),
        Filter.where("ends_after", parse_datetime, service.ends_after),
        Filter.where("sales_channel", _channel, service.in_sales_channel),
        Filter("with_availability_for", _channel, lambda q, _v: q),
        Filter.where("search", parse_str, service.search),
    )
)
ORDERING = Ordering(
    fields={"date_from": Event.date_from, "slug": Event.slug}, default=("slug",), pk=Event.id
)


def _serialize(ctx: OrgContext, event: Event, schema: Any) -> dict[str, Any]:
    data = service.event_to_read(event, public_base_url(ctx.request), ctx.organizer_slug)
    return schema.model_validate(data).model_dump(mode="json")


@router.get("/organizers/{organizer}/events/", response_model=Page[EventListOut])
async def list_events(ctx: Annotated[OrgContext, Depends(OrganizerAccess())]) -> Response:
    """List events

    Lists the organizer's events the caller has access to, 50 a page, filtered by the query
    parameters (live, public, dates, series, sales channel); `ordering` sorts them (unknown
    names are ignored).
    """
    query = select(Event).where(Event.organizer_id == ctx.organizer_id)
    visible = ctx.accessible_event_ids()
    if visible is not None:
        query = query.where(Event.id.in_(visible))
    query = FILTERS.apply(query, ctx.request.query_params)
    params = ctx.request.query_params
    if service.attr_params(params):
        properties = await service.load_meta_properties(ctx.session, ctx.organizer_id)
        defaults = {name: prop.default for name, prop in properties.items()}
        for clause in service.meta_filters(params, defaults):
            query = query.where(clause)
    query = ORDERING.apply(query, ctx.request)
    channel = ctx.request.query_params.get("with_availability_for")
    body = await paginate(ctx.request, ctx.session, query, list)
    states: dict[int, int | None] = {}
    if channel:
        states = await availability.event_states(ctx.session, body["results"], channel)
    out = []
    for event in body["results"]:
        data = _serialize(ctx, event, EventListOut)
        if channel is not None:
            # From the quotas of the page's events; null when nothing can be known.
            data["best_availability_state"] = states.get(event.id)
        else:
            data.pop("best_availability_state")
        out.append(data)
    body["results"] = out
    return JSONResponse(body)


@router.get("/organizers/{organizer}/events/{event}/", response_model=EventDetailOut)
async def event_detail(ctx: Annotated[EventContext, Depends(EventAccess())]) -> Response:
    """Get an event

    Answers the event with its dates, location, currency, plugins, sales channels and metadata.
    """
    # The hottest read: the plain dict goes straight to orjson (same JSON as EventDetailOut
    # renders, which tests/events/test_event_detail_fast.py holds it to).
    data = service.event_to_read(ctx.event, public_base_url(ctx.request), ctx.organizer_slug)
    return JSONResponse(data)


@router.post(
    "/organizers/{organizer}/events/",
    status_code=201,
    response_model=EventDetailOut,
    openapi_extra=json_body(EventIn),
)
async def create_event(
    ctx: Annotated[OrgContext, Depends(OrganizerAccess("organizer.events:create"))],
) -> Response:
    """Creates an event; with ``?clone_from=<event>`` or ``<organizer>/<event>`` a copy."""
    source = None
    clone_from = ctx.request.query_params.get("clone_from")
    if clone_from is not None:
        source = await _readable_event(ctx, clone_from)
    return await _create(ctx, source)


@router.post(
    "/organizers/{organizer}/events/{event}/clone/",
    status_code=201,
    response_model=EventDetailOut,
    openapi_extra=json_body(EventIn),
)
async def clone_event(
    ctx: Annotated[
        EventContext, Depends(EventAccess(organizer_permission="organizer.events:create"))
    ],
) -> Response:
    """Creates an event from the body with the catalog and configuration of this one."""
    return await _create(ctx, ctx.event)


async def _readable_event(ctx: OrgContext, reference: str) -> Event:
    """The event named by ``clone_from``: 403 unless the caller may read it."""
    org_slug, _, slug = reference.rpartition("/")
    grants = ctx.principal.grants_for(org_slug or ctx.organizer_slug)
    if not grants or not slug:
        raise forbidden()
    event = (
        await ctx.session.execute(
            select(Event).where(Event.organizer_id == grants[0].organizer_id, Event.slug == slug)
        )
    ).scalar_one_or_none()
    if event is None or not any(g.covers_event(event.id) for g in grants):
        raise forbidden()
    return event


async def _create(ctx: OrgContext, source: Event | None) -> Response:
    raw = await read_object(ctx.request)
    if source is not None:
        copied = _serialize(ctx, source, EventDetailOut)
        raw = {**{f: copied[f] for f in cloning.INHERITED_FIELDS}, **raw}
    data = validate_input(EventIn, raw)
    assert isinstance(data, EventIn)
    organizer = await ctx.organizer()
    await service.validate_event(ctx.session, organizer, data, None)
    grant = ctx.grants[0]
    event = await flush_guard(
        service.create_event(ctx.session, organizer, data, ctx.principal.team_id, grant.all_events)
    )
    if source is not None:
        await flush_guard(cloning.clone_event_data(ctx.session, source, event))
    await notify(
        ctx.session, "service.event.added", organizer_id=event.organizer_id, event_id=event.id
    )
    # Answer with what was stored (datetimes in UTC), exactly as a following GET shows it.
    await ctx.session.refresh(event)
    return JSONResponse(_serialize(ctx, event, EventDetailOut), status_code=201)


async def _update(ctx: EventContext, partial: bool) -> Response:
    raw = await read_object(ctx.request)
    current = _serialize(ctx, ctx.event, EventDetailOut)
    data, supplied = parse_update(EventIn, current, raw, partial)
    assert isinstance(data, EventIn)
    organizer = await ctx.organizer()
    check_meta = "meta_data" in supplied
    await service.validate_event(ctx.session, organizer, data, ctx.event, check_meta=check_meta)
    flags = {name: getattr(ctx.event, name) for name in FLAG_NOTICES}
    service.apply_event(ctx.event, data, supplied)
    await flush_guard(ctx.session.flush())
    actions = ["service.event.changed"]
    for name, (on, off) in FLAG_NOTICES.items():
        now = getattr(ctx.event, name)
        if now != flags[name]:
            actions.append(on if now else off)
    await notify_all(ctx.session, actions, organizer_id=ctx.organizer_id, event_id=ctx.event.id)
    await ctx.session.refresh(ctx.event)
    return JSONResponse(_serialize(ctx, ctx.event, EventDetailOut))


@router.patch(
    "/organizers/{organizer}/events/{event}/",
    response_model=EventDetailOut,
    openapi_extra=json_body(EventIn),
)
async def patch_event(
    ctx: Annotated[EventContext, Depends(EventAccess(SETTINGS_WRITE))],
) -> Response:
    """Update an event

    Changes the fields given in the JSON body; the others keep their values. The slug and
    currency cannot change once the event has orders; going live needs a quota and a product,
    as the shop would need them.
    """
    return await _update(ctx, partial=True)


@router.put(
    "/organizers/{organizer}/events/{event}/",
    response_model=EventDetailOut,
    openapi_extra=json_body(EventIn),
)
async def put_event(ctx: Annotated[EventContext, Depends(EventAccess(SETTINGS_WRITE))]) -> Response:
    """Replace an event

    Replaces the event: every required field must be in the body (a 400 names each missing
    one); an optional field left out keeps its stored value.
    """
    return await _update(ctx, partial=False)


@router.delete("/organizers/{organizer}/events/{event}/", status_code=204)
async def delete_event(
    ctx: Annotated[EventContext, Depends(EventAccess(SETTINGS_WRITE))],
) -> Response:
    """Delete an event

    Deletes the event and everything in it; 204 without a body. An event that already has
    orders cannot be deleted (400): take it offline by setting it not live instead.
    """
    await service.delete_event(ctx.session, ctx.event)
    # Not tied to the event row, which is gone (the row would go with it): the slug says which.
    await notify(
        ctx.session, "service.event.deleted", organizer_id=ctx.organizer_id, event=ctx.event.slug
    )
    return no_content()
