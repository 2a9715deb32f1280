"""Every writing API route, generated from ``admit.app.API_ROUTERS``: the same keyed request
twice makes at most one change and gets identical answers (status and body bytes, the
second marked as a replay); the key with another body is 409.

"One change" is checked on the whole database: a fingerprint of every table (its rows,
hashed) is the same before and after the repeat. Routes get an all-powerful token and the
access tests' placeholder URLs, so most answer a 4xx (stored too, as validation errors are
in the reference); ``REAL`` adds requests that succeed, where the first must change the
database and the repeat must not.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from sqlalchemy import text

from admit.kit.idempotency_secret import REFUSED as SECRET_REFUSED
from admit.kit.idempotency_secret import bears_secret
from tests.factories import World, auth
from tests.test_access_generated import ROUTES

WRITES = [(m, p) for m, p, _ in ROUTES if m in ("POST", "PUT", "PATCH", "DELETE")]
SKIPPED_TABLES = {"idempotency_keys", "alembic_version"}


async def fingerprint(app: Any) -> str:
    """A hash of every row of every table (the idempotency keys aside)."""
    digest = hashlib.sha256()
    async with app.state.db.engine.connect() as conn:
        for name in app.state.test_tables:
            if name in SKIPPED_TABLES:
                continue
            rows = (await conn.execute(text(f'SELECT * FROM "{name}"'))).all()
            digest.update(name.encode())
            for row in sorted(repr(tuple(r)) for r in rows):
                digest.update(row.encode())
    return digest.hexdigest()


def _stable(headers: Any) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers if k != "x-request-id"]


def _url(path: str, world: World) -> str:
    for name, value in {
        "{organizer}": world.org.slug,
        "{event}": world.event.slug,
        "{code}": "ABC12",
        "{identifier}": "x",
        "{call}": "redeem",
    }.items():
        path = path.replace(name, value)
    for name in ("{team}", "{id}", "{id1}", "{id2}", "{item}", "{local_id}", "{question}"):
        path = path.replace(name, "1")
    return path.replace("{subevent_id}", "1")


async def _twice(
    client: Any, app: Any, world: World, method: str, url: str, body: Any, key: str
) -> Any:
    headers = {**auth(world.admin), "X-Idempotency-Key": key}
    first = await client.request(method, url, json=body, headers=headers)
    before = await fingerprint(app)
    second = await client.request(method, url, json=body, headers=headers)
    assert await fingerprint(app) == before, f"the repeat of {method} {url} changed data"
    assert second.status_code == first.status_code
    assert second.content == first.content
    assert second.headers.get("idempotent-replayed") == "true", second.headers
    assert "idempotent-replayed" not in first.headers
    replayed = [(k, v) for k, v in second.headers.items() if k != "idempotent-replayed"]
    assert _stable(replayed) == _stable(first.headers.items())
    other = await client.request(method, url, json={"other": [body]}, headers=headers)
    assert other.status_code == 409, other.text
    assert other.json()["detail"].endswith("the body differs.")
    return first


@pytest.mark.parametrize(("method", "path"), WRITES, ids=[f"{m} {p}" for m, p in WRITES])
async def test_every_writing_route_replays_and_changes_once(client, clean_app, world, method, path):
    body = None if method == "DELETE" else {}
    url = _url(path, world)
    if bears_secret(method, url):
        # Its answer carries a secret, never stored: the key is refused, nothing runs.
        before = await fingerprint(clean_app)
        headers = {**auth(world.admin), "X-Idempotency-Key": f"{method}{path}"}
        response = await client.request(method, url, json=body, headers=headers)
        assert response.status_code == 400 and response.json() == {"detail": SECRET_REFUSED}
        assert await fingerprint(clean_app) == before
        return
    await _twice(client, clean_app, world, method, url, body, f"{method}{path}")


E = "/api/v1/organizers/acme/events/summit"
REAL = [
    ("POST", "/api/v1/organizers/acme/teams/", {"name": "Door staff"}),
    ("PATCH", f"{E}/", {"name": {"en": "Summit 2030"}}),
    ("POST", f"{E}/items/", {"name": {"en": "Ticket"}, "default_price": "10.00"}),
    ("POST", f"{E}/quotas/", {"name": "All", "size": 10, "items": []}),
    ("POST", f"{E}/categories/", {"name": {"en": "Tickets"}}),
    ("POST", f"{E}/taxrules/", {"name": {"en": "VAT"}, "rate": "19.00"}),
]


@pytest.mark.parametrize(("method", "path", "body"), REAL, ids=[f"{m} {p}" for m, p, _ in REAL])
async def test_real_changes_happen_once(client, clean_app, world, method, path, body):
    before = await fingerprint(clean_app)
    first = await _twice(client, clean_app, world, method, path, body, "real")
    assert 200 <= first.status_code < 300, first.text
    assert await fingerprint(clean_app) != before
