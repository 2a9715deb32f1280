"""``GET E/`` (the event detail) in the fast lane: one statement, nothing rendered twice.

Integrations and scanner apps read the event before nearly everything else, so this GET
comes at the rate of all their other requests together. The framework's path spends most of
its CPU on routing, dependency solving and middleware for an answer that is one row. The
lane runs the same access check (``EventAccess``: the credential and the event in one
statement, as every GET of an event URL) and the same rendering (``service.event_to_read``),
and declines whatever the access check refuses, so 401/403 answers keep their framework shape.

The credential is always read from the database here, never from the worker's short
credential cache the other lanes use: that cache would serve a snapshot of the event up to
its lifetime old from another worker after a write, and this answer *is* the event.

What can be done once is: a worker keeps each event's body with the row it was rendered from
(per public base URL and organizer slug) and answers it again while the row read for the
request is equal, ``last_modified`` included (moved by every write of the event): the same
row renders the same bytes, so the kept body is never stale. Row equality alone would not
do for JSONB numbers (``1`` equals ``1.0`` in Python); a write that changes one moves
``last_modified``, which the row holds. Only on PostgreSQL (the lane's only database), where
JSONB gives each object's keys in one order.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

from admit.events import service
from admit.kit.http.context import EVENT_ROW_COLUMNS, EventAccess, public_base_url
from admit.kit.http.errors import APIError
from admit.kit.http.responses import JSONResponse
from admit.kit.lanes.fastlane import ROUTE_TEMPLATE, LaneRequest

PATH = "/organizers/{organizer}/events/{event}/"
_ACCESS = EventAccess()
_NAMES = tuple(c.key for c in EVENT_ROW_COLUMNS)
# (event id, base URL, organizer slug) -> (the row rendered, its body); bounded.
_kept: dict[tuple[int, str, str], tuple[tuple[Any, ...], bytes]] = {}
_MAX_KEPT = 2048


def kept_body(event: Any, base_url: str, organizer_slug: str) -> bytes:
    """The event's JSON (``event_to_read`` as ``JSONResponse`` writes it), rendered once per
    distinct row."""
    row = tuple(map(event.__dict__.get, _NAMES))
    key = (row[0], base_url, organizer_slug)
    hit = _kept.get(key)
    if hit is not None and hit[0] == row:
        return hit[1]
    body = bytes(JSONResponse(service.event_to_read(event, base_url, organizer_slug)).body)
    if len(_kept) >= _MAX_KEPT:
        _kept.clear()
    _kept[key] = (row, body)
    return body


def _route(app: Any, template: str) -> Any:
    """The framework's route of the event detail: set in the scope, so that the layers
    outside see the request as that route's (its ETag, a device's allowed endpoints)."""
    route = getattr(app.state, "event_detail_route", None)
    if route is None:
        route = next(
            r
            for r in app.router.routes
            if getattr(r, "path", None) == template and "GET" in (getattr(r, "methods", ()) or ())
        )
        app.state.event_detail_route = route
    return route


async def event_detail_lane(request: LaneRequest) -> ASGIApp | None:
    """The event as ``routes.event_detail`` answers it; None (the framework's path) for
    anything the access check refuses."""
    scope = request.scope
    app = scope["app"]
    scope["route"] = _route(app, scope[ROUTE_TEMPLATE])
    scope["path_params"] = request.params
    http = Request(scope)
    db = app.state.db
    session: AsyncSession = db.read_sessionmaker()
    session.info["fast"] = db.fast
    try:
        params = request.params
        try:
            ctx = await _ACCESS(http, session, params["organizer"], params["event"])
        except APIError:
            return None
        body = kept_body(ctx.event, public_base_url(http), ctx.organizer_slug)
    finally:
        if session.in_transaction() or session.identity_map:
            await session.close()
    return Response(body, media_type="application/json")
