"""Every writing API route, generated from ``admit.app.API_ROUTERS``: the same keyed request
twice makes at most one change and gets identical answers (status and body bytes, the
second marked as a replay); the key with another body is 409.

"One change" is checked on the whole database: a fingerprint of every table (its rows,
hashed) is the same before and after the repeat. Every route has a request that succeeds
(``tests/idempotency/cases.py``: real objects in the URL, a valid body), so what is replayed
is a change made, not a refusal; the first request must change the database. A route without
a case fails :func:`test_every_writing_route_has_a_case` unless it is listed with its reason.
Refusals are replayed too (``test_a_refusal_is_replayed``), as the reference stores them.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from sqlalchemy import text

from admit.db import Base
from admit.kit.idempotency.secret import REFUSED as SECRET_REFUSED
from admit.kit.idempotency.secret import bears_secret
from tests.factories import World, auth
from tests.idempotency.cases import (
    CANNOT_REPLAY,
    CASES,
    Scene,
)
from tests.test_access_generated import ROUTES

WRITES = [(m, p) for m, p, _ in ROUTES if m in ("POST", "PUT", "PATCH", "DELETE")]
SKIPPED_TABLES = {"idempotency_keys", "alembic_version"}


async def fingerprint(app: Any) -> str:
    """A hash of every row of every table (the idempotency keys aside).

    The database renders each table's rows as text, sorted, in one statement for all tables:
    a statement per table cost a round trip (on SQLite a thread hop) each, hundreds a test."""
    names = [n for n in app.state.test_tables if n not in SKIPPED_TABLES]
    if app.state.db.is_sqlite:

        def rows_of(name: str) -> str:
            columns = " || ',' || ".join(
                f'quote("{c.name}")' for c in Base.metadata.tables[name].columns
            )
            return (
                f"SELECT group_concat(line, '|') FROM "
                f'(SELECT {columns} AS line FROM "{name}" ORDER BY line)'
            )
    else:

        def rows_of(name: str) -> str:
            return f"""SELECT string_agg(r::text, '|' ORDER BY r::text) FROM "{name}" r"""

    per_table = " UNION ALL ".join(f"SELECT '{name}', ({rows_of(name)})" for name in names)
    digest = hashlib.sha256()
    async with app.state.db.engine.connect() as conn:
        for name, rows in (await conn.execute(text(per_table))).all():
            digest.update(f"{name}:{rows}|".encode())
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
    client: Any,
    app: Any,
    world: World,
    method: str,
    url: str,
    body: Any,
    key: str,
    credentials: dict[str, str] | None = None,
) -> Any:
    headers = {**(credentials or auth(world.admin)), "X-Idempotency-Key": key}
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


def test_every_writing_route_has_a_case():
    listed = set(CASES) | set(CANNOT_REPLAY)
    missing = [f"{m} {p}" for m, p in WRITES if (m, p) not in listed]
    assert not missing, f"writing routes without a succeeding request (cases.py): {missing}"
    assert not listed - set(WRITES), f"cases of routes that do not exist: {listed - set(WRITES)}"
    assert not set(CASES) & set(CANNOT_REPLAY)


SUCCEEDING = sorted(CASES)


@pytest.mark.parametrize(("method", "path"), SUCCEEDING, ids=[f"{m} {p}" for m, p in SUCCEEDING])
async def test_a_change_is_made_once_and_replayed_byte_for_byte(
    client, clean_app, world, method, path
):
    scene = Scene(client, world)
    url, body, *credentials = await CASES[(method, path)](scene)
    before = await fingerprint(clean_app)
    if bears_secret(method, url):
        # Its answer carries a secret, never stored: the key is refused, nothing runs.
        headers = {**auth(world.admin), "X-Idempotency-Key": "secret"}
        refused = await client.request(method, url, json=body, headers=headers)
        assert refused.status_code == 400, refused.text
        assert refused.json() == {"detail": SECRET_REFUSED}
        assert await fingerprint(clean_app) == before
        return
    first = await _twice(
        client, clean_app, world, method, url, body, f"{method}{path}", *credentials
    )
    assert 200 <= first.status_code < 300, f"{method} {url} {body}: {first.text}"
    assert await fingerprint(clean_app) != before, f"{method} {url} changed nothing"


# A settings object takes an empty change as nothing to change (200), as the reference does.
ACCEPT_EMPTY = {("PATCH", "/api/v1/organizers/{organizer}/settings/")}
REFUSING = [w for w in WRITES if w not in ACCEPT_EMPTY][:12]


@pytest.mark.parametrize(("method", "path"), REFUSING, ids=[f"{m} {p}" for m, p in REFUSING])
async def test_a_refusal_is_replayed(client, clean_app, world, method, path):
    body = None if method == "DELETE" else {}
    first = await _twice(client, clean_app, world, method, _url(path, world), body, path)
    assert 400 <= first.status_code < 500
