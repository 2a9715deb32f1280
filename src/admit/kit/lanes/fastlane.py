"""A lane past the framework for the few requests that come in rushes.

At a sale opening or at the doors, one or two endpoints take nearly all requests, and the
framework's own work per request (middleware, routing over every route, dependency solving,
an ORM session) costs more CPU than the database does. A lane handler sees the raw ASGI
request with its body read and answers the plain, common case itself; for anything else
(bad input, unusual options, errors) it returns None and the request goes through the normal
application unchanged, which gives every error its usual shape. So a lane handler only ever
adds speed, never a second set of rules: it runs the same access check and the same services
as the route, and declines whatever it does not handle exactly as the route would. It may
decline only before it has written anything; once it has, it answers (an APIError or
FieldErrors it raises is answered in the application's shape).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from admit.kit.http.body import too_deep
from admit.kit.http.errors import APIError, FieldErrors, error_response, server_error

# The template of the route a lane request took (e.g. for device security profiles).
ROUTE_TEMPLATE = "admit.route_template"

# Slugs as the API accepts them; anything else goes the normal way (and gets its 404/400).
_SLUG = r"([A-Za-z0-9][A-Za-z0-9._-]*)"


@dataclass
class LaneRequest:
    scope: Scope
    params: dict[str, str]
    body: bytes

    def header(self, name: bytes) -> bytes | None:
        for key, value in self.scope["headers"]:
            if key == name:
                return value
        return None

    def json_object(self) -> dict[str, Any] | None:
        """The body as a JSON object when it is a plain one (the normal path's reader
        answers everything else: wrong media type, malformed JSON, escaped NULs, ...)."""
        if b"\\u0000" in self.body:
            return None
        content_type = self.header(b"content-type")
        if content_type and b"json" not in content_type.split(b";")[0].lower():
            return None
        try:
            data = orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return None
        if too_deep(self.body, data):  # the reader's 400
            return None
        return data if isinstance(data, dict) else None


# A handler answers (a Response, or any ASGI app: a kept page, or the application run with its
# answer captured, see kit/stamps/pagecache.py), or returns None to leave the request to the
# application. It may raise APIError / FieldErrors as route handlers do (answered the same way).
Handler = Callable[[LaneRequest], Awaitable[ASGIApp | None]]


@dataclass
class _Route:
    method: str
    template: str
    pattern: re.Pattern[str]
    names: tuple[str, ...]
    handler: Handler
    # Whether requests with a query string come this way (the handler reads it through the
    # same parsers as the route); a NUL in it always goes the normal way (its 400).
    query: bool = False


class FastLane:
    """Routes ``METHOD /path/{name}/`` templates (slug parameters only) to lane handlers."""

    def __init__(self) -> None:
        self.routes: list[_Route] = []

    def add(self, method: str, template: str, handler: Handler, *, query: bool = False) -> None:
        names = tuple(re.findall(r"{(\w+)}", template))
        regex = re.sub(r"{\w+}", _SLUG, re.escape(template).replace(r"\{", "{").replace(r"\}", "}"))
        route = _Route(method, template, re.compile(f"^{regex}$"), names, handler, query)
        self.routes.append(route)

    def match(self, scope: Scope) -> tuple[_Route, dict[str, str]] | None:
        if scope["type"] != "http":
            return None
        query = scope["query_string"]
        if b"%00" in query:
            return None
        method, path = scope["method"], scope["path"]
        for route in self.routes:
            if (
                route.method == method
                and (route.query or not query)
                and (found := route.pattern.match(path))
            ):
                return route, dict(zip(route.names, found.groups(), strict=True))
        return None


async def read_body(receive: Receive, limit: int) -> tuple[bytes | None, list[Message]]:
    """The whole body (None when it is not a plain one) and the messages read."""
    chunks: list[bytes] = []
    size = 0
    messages: list[Message] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return None, messages
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None, messages
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), messages


def replay(messages: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that hands out the messages already read, then the real ones."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


async def serve(
    lane: FastLane, scope: Scope, receive: Receive, send: Send, app: ASGIApp, body_limit: int
) -> None:
    """Tries ``lane`` for the requests it routes; everything else (and whatever a handler
    declines) goes to ``app`` with the body replayed."""
    found = lane.match(scope)
    if found is None:
        await app(scope, receive, send)
        return
    route, params = found
    body, messages = await read_body(receive, body_limit)
    if body is not None:
        scope[ROUTE_TEMPLATE] = route.template
        try:
            answer = await route.handler(LaneRequest(scope, params, body))
        except (APIError, FieldErrors) as exc:
            answer = error_response(exc)
        except Exception as exc:  # a lost database: 503 + Retry-After, as on the framework path
            from admit.kit.http.errors import database_error_response

            answer = database_error_response(exc) or server_error(scope["method"], scope["path"])
        if answer is not None:
            await answer(scope, replay(messages, receive), send)
            return
    await app(scope, replay(messages, receive), send)
