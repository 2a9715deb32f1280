"""Conditional requests on detail resources: ``ETag`` / ``If-None-Match`` and ``If-Match``.

Every 200 answer of a detail GET (a route whose template ends in an ``{…}/`` parameter after a
literal segment, file downloads aside) carries a strong ETag: a hash of the exact body bytes,
so it changes exactly when the representation does, with nothing to keep in sync. A GET whose
``If-None-Match`` names it gets 304 with no body.

A PUT, PATCH or DELETE of a detail resource with ``If-Match`` first reads the resource's
current representation (an internal GET of the same URL with the same credentials) and
answers 412 ``{"detail": …}`` without writing when no listed ETag matches, so two back-office
users cannot overwrite each other blindly. Check and write of one resource are serialized
(``kit/lanes/writelock.py``): of two writers holding the same current ETag, the second sees the
first one's change and gets 412. Writers without ``If-Match`` are not involved.

This is the innermost edge layer. Requests it has nothing to do for pay a method test (and,
for GETs, a look at the matched route when the answer starts): the fast lane's availability
GET matches no route, cart and redeem POSTs are not looked at.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from admit.kit.http.captured import Captured
from admit.kit.lanes.writelock import Busy, WriteLocks

WRITES = frozenset({"PUT", "PATCH", "DELETE"})
PRECONDITION_FAILED = (
    "The resource has changed since you read it: If-Match does not match its current ETag."
)
BUSY = "The resource is busy right now. Please try again."
# Not part of the representation the internal GET reads.
_DROPPED_FOR_GET = frozenset(
    {
        b"content-length",
        b"content-type",
        b"transfer-encoding",
        b"if-match",
        b"if-none-match",
        b"if-modified-since",
        b"if-unmodified-since",
        b"x-idempotency-key",
    }
)


def is_detail_path(path: str) -> bool:
    """Whether a route template names one object: ``…/literal/{param}/``, not a download."""
    segments = path.split("/")
    return (
        len(segments) >= 4
        and segments[-1] == ""
        and segments[-2].startswith("{")
        and not segments[-3].startswith("{")
        and "download" not in segments
    )


def make_etag(body: bytes) -> bytes:
    return b'"' + hashlib.blake2b(body, digest_size=16).hexdigest().encode() + b'"'


def _tags(raw: bytes) -> list[bytes]:
    return [tag.strip() for tag in raw.split(b",") if tag.strip()]


def none_match_holds(raw: bytes, etag: bytes) -> bool:
    """``If-None-Match`` compares weakly: ``W/"x"`` names the same as ``"x"``."""
    for tag in _tags(raw):
        if tag == b"*" or tag.removeprefix(b"W/") == etag:
            return True
    return False


def if_match_holds(raw: bytes, etag: bytes | None) -> bool:
    """``If-Match`` compares strongly; ``*`` holds for any existing resource."""
    if etag is None:
        return False
    return any(tag == b"*" or tag == etag for tag in _tags(raw))


def header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return value
    return None


class _Routes:
    """The application's detail routes, found once from its route table."""

    def __init__(self, app: Any) -> None:
        self.routes = list(app.router.routes)
        gets = [
            r
            for r in self.routes
            if "GET" in (getattr(r, "methods", None) or ()) and is_detail_path(r.path)
        ]
        self.detail_gets = {id(r) for r in gets}  # routes compare by value: by identity here
        self.detail_paths = {r.path for r in gets}
        # The literal before the parameter: a request path whose segment there is none of
        # these (``…/quotas/7/availability/``) is no detail GET, and is not looked at again.
        self.parents = {r.path.rsplit("/", 3)[-3] for r in gets}

    def may_be_detail(self, path: str) -> bool:
        parts = path.rsplit("/", 3)
        return len(parts) == 4 and parts[3] == "" and parts[1] in self.parents

    def is_detail_get(self, route: Any) -> bool:
        return id(route) in self.detail_gets

    def write_is_detail(self, scope: Scope) -> bool:
        for route in self.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return getattr(route, "path", None) in self.detail_paths
        return False


def _json(status: int, detail: str, extra: list[tuple[bytes, bytes]] = ()) -> list[Message]:  # type: ignore[assignment]
    body = orjson.dumps({"detail": detail})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *extra,
    ]
    return [
        {"type": "http.response.start", "status": status, "headers": headers},
        {"type": "http.response.body", "body": body},
    ]


def _is_json(headers: list[tuple[bytes, bytes]]) -> bool:
    for key, value in headers:
        if key == b"content-type":
            return value.startswith(b"application/json")
    return False


def conditional_layer(app: ASGIApp, _settings: Any) -> ASGIApp:
    """The edge layer (see ``admit.app.EDGE_LAYERS``)."""
    routes: _Routes | None = None
    locks = WriteLocks()

    def known(scope: Scope) -> _Routes:
        nonlocal routes
        if routes is None:
            routes = _Routes(scope["app"])
        return routes

    async def detail_get(scope: Scope, receive: Receive, send: Send) -> None:
        start: Message | None = None
        chunks: list[bytes] = []
        passing = False

        async def capture(message: Message) -> None:
            nonlocal start, passing
            if passing:
                await send(message)
                return
            if start is None:
                if (
                    message["status"] != 200
                    or not known(scope).is_detail_get(scope.get("route"))
                    or not _is_json(message.get("headers", []))
                ):
                    passing = True
                    await send(message)
                    return
                start = message
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = b"".join(chunks)
            etag = make_etag(body)
            headers = [*start.get("headers", []), (b"etag", etag)]
            wanted = header(scope, b"if-none-match")
            if wanted is not None and none_match_holds(wanted, etag):
                kept = [h for h in headers if h[0] not in (b"content-length", b"content-type")]
                await send({"type": "http.response.start", "status": 304, "headers": kept})
                await send({"type": "http.response.body", "body": b""})
                return
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await app(scope, receive, capture)

    async def current_etag(scope: Scope) -> tuple[int, bytes | None]:
        """The status and ETag of a GET of the write's URL, made with its credentials."""
        inner = {k: v for k, v in scope.items() if k not in ("route", "path_params", "endpoint")}
        inner["method"] = "GET"
        inner["headers"] = [h for h in scope["headers"] if h[0] not in _DROPPED_FOR_GET]
        inner["state"] = dict(scope.get("state") or {})
        captured = Captured()
        asked = False

        async def receive() -> Message:
            nonlocal asked
            if asked:
                return {"type": "http.disconnect"}
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}

        await app(inner, receive, captured.send)
        status = captured.status or 0
        if status != 200 or not known(scope).is_detail_get(inner.get("route")):
            return status, None
        return status, make_etag(captured.body)

    async def guarded_write(scope: Scope, receive: Receive, send: Send, wanted: bytes) -> None:
        engine = scope["app"].state.db.engine
        try:
            async with locks.hold(engine, scope["path"]):
                status, etag = await current_etag(scope)
                if status == 200 or status == 404:
                    if not if_match_holds(wanted, etag):
                        for message in _json(412, PRECONDITION_FAILED):
                            await send(message)
                        return
                # Any other answer (401, 403, ...) is the write's own to give.
                await app(scope, receive, send)
        except Busy:
            for message in _json(409, BUSY, [(b"retry-after", b"1")]):
                await send(message)

    async def layer(scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"]
        if method == "GET":
            if known(scope).may_be_detail(scope["path"]):
                await detail_get(scope, receive, send)
            else:
                await app(scope, receive, send)
            return
        if method in WRITES:
            wanted = header(scope, b"if-match")
            if wanted is not None and known(scope).write_is_detail(scope):
                await guarded_write(scope, receive, send, wanted)
                return
        await app(scope, receive, send)

    return layer
