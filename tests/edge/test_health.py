"""``/healthz`` (alive, no database) and ``/readyz`` (database reachable, schema current)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from admit.kit.http.health import migration_heads
from admit.migrate import upgrade
from tests.edge.helpers import client_for, edge_app


async def test_both_answer_ok_without_credentials(client):
    for path in ("/healthz", "/readyz"):
        response = await client.get(path)
        assert response.status_code == 200, response.text
        assert response.json() == {"status": "ok"}
        assert response.headers["cache-control"] == "no-store"
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-request-id"]
        head = await client.head(path)
        assert head.status_code == 200 and head.content == b""


async def test_other_methods_are_405(client):
    response = await client.post("/readyz")
    assert response.status_code == 405
    assert response.json() == {"detail": 'Method "POST" not allowed.'}
    assert response.headers["allow"] == "GET, HEAD"
    # Not under the API prefix.
    assert (await client.get("/api/v1/healthz")).status_code == 404


async def test_database_unreachable(tmp_path: Path):
    # A port nothing listens on: healthz stays 200 (no restart loop), readyz says why not.
    unreachable = "postgresql+asyncpg://postgres@127.0.0.1:1/nothing"
    async with edge_app(unreachable, tmp_path) as app, client_for(app, checked=False) as client:
        assert (await client.get("/healthz")).status_code == 200
        response = await client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "detail": "database unreachable"}


async def test_schema_missing_and_migrations_behind(tmp_path: Path):
    url = f"sqlite+aiosqlite:///{tmp_path / 'behind.sqlite3'}"
    async with edge_app(url, tmp_path) as app, client_for(app, checked=False) as client:
        missing = await client.get("/readyz")
        assert missing.status_code == 503
        assert missing.json()["detail"] == "database schema missing: run `admit migrate`"

        await asyncio.to_thread(upgrade, url, "0015")
        behind = await client.get("/readyz")
        assert behind.status_code == 503
        heads = ", ".join(sorted(await migration_heads()))
        assert behind.json() == {
            "status": "unavailable",
            "detail": f"migrations not current: database at 0015, code at {heads}",
        }

        await asyncio.to_thread(upgrade, url)
        assert (await client.get("/readyz")).json() == {"status": "ok"}
