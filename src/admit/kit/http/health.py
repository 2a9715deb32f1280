"""``GET /healthz`` and ``GET /readyz`` for load balancers and orchestrators.

``/healthz`` answers whenever the process can run a request at all (no database: a database
outage must not get every server process restarted). ``/readyz`` answers 200 only when the
database is reachable and its schema is at this code's migration head, so a new release is not
sent traffic before ``admit migrate`` ran, and a server that lost its database is taken out of
rotation; otherwise 503 with the reason. Both sit in an edge layer, outside ``/api/v1``,
without authentication and without rate limits.
"""

from __future__ import annotations

import asyncio
import logging

import orjson
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from starlette.types import ASGIApp, Receive, Scope, Send

from admit.config import Settings
from admit.db import Database

HEALTH = "/healthz"
READY = "/readyz"
PATHS = frozenset((HEALTH, READY))
# Longer than a healthy database ever takes, shorter than load balancers' probe timeouts.
READY_TIMEOUT_SECONDS = 3.0

log = logging.getLogger("admit.health")
_heads: frozenset[str] | None = None


def _code_heads() -> frozenset[str]:
    from alembic.script import ScriptDirectory

    from admit.migrate import alembic_config

    return frozenset(ScriptDirectory.from_config(alembic_config()).get_heads())


async def migration_heads() -> frozenset[str]:
    """This code's migration heads (read from the migration files once per process)."""
    global _heads
    if _heads is None:
        _heads = await asyncio.to_thread(_code_heads)
    return _heads


async def readiness(db: Database) -> str | None:
    """None when the database is reachable and migrated to the heads, else the reason."""
    engine = db.engine
    heads = await migration_heads()
    try:
        async with asyncio.timeout(READY_TIMEOUT_SECONDS), engine.connect() as conn:
            try:
                result = await conn.execute(text("SELECT version_num FROM alembic_version"))
                current = frozenset(result.scalars().all())
            except SQLAlchemyError:
                return "database schema missing: run `admit migrate`"
    except (SQLAlchemyError, OSError, TimeoutError) as exc:
        log.warning("readiness: database unreachable (%s)", type(exc).__name__)
        return "database unreachable"
    if current == heads:
        return None
    if not current:
        return "database schema missing: run `admit migrate`"
    return (
        f"migrations not current: database at {', '.join(sorted(current))}, "
        f"code at {', '.join(sorted(heads))}"
    )


async def _answer(send: Send, status: int, body: dict[str, str], head: bool) -> None:
    payload = orjson.dumps(body)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        (b"cache-control", b"no-store"),
    ]
    if status == 405:
        headers.append((b"allow", b"GET, HEAD"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else payload})


def health_layer(app: ASGIApp, settings: Settings) -> ASGIApp:
    """The edge layer answering the two probes (one set lookup for every other request)."""

    async def layer(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if path not in PATHS:
            await app(scope, receive, send)
            return
        method = scope["method"]
        if method not in ("GET", "HEAD"):
            await _answer(send, 405, {"detail": f'Method "{method}" not allowed.'}, False)
            return
        reason = None if path == HEALTH else await readiness(scope["app"].state.db)
        if reason is None:
            await _answer(send, 200, {"status": "ok"}, method == "HEAD")
        else:
            await _answer(send, 503, {"status": "unavailable", "detail": reason}, method == "HEAD")

    return layer
