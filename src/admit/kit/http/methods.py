"""``HEAD`` and ``OPTIONS`` for every route, answered at the edge.

HTTP says a ``HEAD`` is a ``GET`` without the body: same status, same headers (the
``Content-Length`` a ``GET`` would send included). Rather than every route (and every fast
lane) learning a second method, this layer runs the request inward as a ``GET`` and sends the
answer's start as it is and its body empty, so the two cannot drift apart. The inner layers,
the fast lanes and the routes see a plain ``GET`` (a safe method: nothing is written).

``OPTIONS`` answers ``200`` with ``Allow`` naming the methods the path's routes take (``HEAD``
wherever ``GET`` is, ``OPTIONS`` everywhere), without credentials: the methods of a route are
the same for every caller and published in the OpenAPI document anyway. A path no route takes
goes inward and gets its usual 404.
"""

from __future__ import annotations

from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from admit.config import Settings


def allowed_methods(app: ASGIApp, path: str) -> list[str]:
    """The methods the application's routes take at ``path`` (empty: no route takes it).
    Where templates overlap (``carts/bulk_create/`` and ``carts/{id}/``), the route naming
    the path with the fewest parameters is the path's route."""
    by_params: dict[int, set[str]] = {}
    for route in getattr(getattr(app, "router", None), "routes", ()):
        regex = getattr(route, "path_regex", None)
        if regex is None:
            continue
        if isinstance(route, Mount):
            if path.startswith(route.path + "/"):
                by_params.setdefault(1, set()).update(("GET", "HEAD"))
            continue
        if regex.match(path) is not None:
            methods = getattr(route, "methods", None) or ("GET",)
            by_params.setdefault(len(route.param_convertors), set()).update(methods)
    if not by_params:
        return []
    methods = by_params[min(by_params)] | {"OPTIONS"}
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


def methods_layer(app: ASGIApp, _settings: Settings) -> ASGIApp:
    """The edge layer answering ``OPTIONS`` and turning ``HEAD`` into a bodiless ``GET``."""

    async def layer(scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"]
        if method == "HEAD":

            async def bodiless(message: Message) -> None:
                if message["type"] == "http.response.body":
                    message = {
                        "type": "http.response.body",
                        "body": b"",
                        "more_body": message.get("more_body", False),
                    }
                await send(message)

            # A copy: the server still sees HEAD in its own scope (and sends no body).
            await app({**scope, "method": "GET"}, receive, bodiless)
            return
        if method == "OPTIONS":
            allowed = allowed_methods(scope.get("app"), scope["path"])
            if allowed:
                headers = [(b"allow", ", ".join(allowed).encode()), (b"content-length", b"0")]
                await send({"type": "http.response.start", "status": 200, "headers": headers})
                await send({"type": "http.response.body", "body": b""})
                return
        await app(scope, receive, send)

    return layer
