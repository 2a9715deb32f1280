"""Two writers holding the same current ETag race: exactly one writes, the other gets 412.

On PostgreSQL the two requests go through two application instances (as two server
processes would), so only the advisory lock can serialize them; on SQLite through one (the
embedded server is one process)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from admit.app import create_app
from tests.conditional.recipes import E, Env
from tests.conftest import asgi_client

ROUNDS = 8


@pytest.fixture
async def second_client(clean_app) -> AsyncIterator[httpx.AsyncClient]:
    """A client of another application instance on the same database (PostgreSQL), or of
    the same instance (SQLite)."""
    other = clean_app
    if not clean_app.state.db.is_sqlite:
        other = create_app(clean_app.state.settings)
    async with asgi_client(other) as c:
        yield c
    if other is not clean_app:
        await other.state.db.dispose()


async def test_same_if_match_racing_patches(client, second_client, world, factory):
    env = Env(client, world, factory)
    quota = await env.post(f"{E}/quotas/", {"name": "Hall", "size": 10})
    url = f"{E}/quotas/{quota['id']}/"
    for round_ in range(ROUNDS):
        etag = (await client.get(url, headers=env.h)).headers["etag"]
        headers = {**env.h, "If-Match": etag}
        sizes = (100 + 2 * round_, 101 + 2 * round_)
        answers = await asyncio.gather(
            client.patch(url, json={"size": sizes[0]}, headers=headers),
            second_client.patch(url, json={"size": sizes[1]}, headers=headers),
        )
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200, 412], [a.text for a in answers]
        winner = next(a for a in answers if a.status_code == 200)
        loser = next(a for a in answers if a.status_code == 412)
        assert loser.json()["detail"].startswith("The resource has changed")
        stored = (await client.get(url, headers=env.h)).json()
        assert stored["size"] == winner.json()["size"]


async def test_writers_without_if_match_are_not_held(client, second_client, world, factory):
    env = Env(client, world, factory)
    quota = await env.post(f"{E}/quotas/", {"name": "Hall", "size": 10})
    url = f"{E}/quotas/{quota['id']}/"
    answers = await asyncio.gather(
        client.patch(url, json={"size": 20}, headers=env.h),
        second_client.patch(url, json={"size": 21}, headers=env.h),
    )
    assert [a.status_code for a in answers] == [200, 200]


async def test_if_match_star_and_missing_resource(client, world, factory):
    env = Env(client, world, factory)
    quota = await env.post(f"{E}/quotas/", {"name": "Hall", "size": 10})
    url = f"{E}/quotas/{quota['id']}/"
    star = {**env.h, "If-Match": "*"}
    assert (await client.patch(url, json={"size": 11}, headers=star)).status_code == 200
    assert (await client.delete(url, headers=star)).status_code == 204
    response = await client.patch(url, json={"size": 12}, headers=star)
    assert response.status_code == 412
    # Credentials are checked as without the header.
    response = await client.patch(url, json={"size": 12}, headers={"If-Match": "*"})
    assert response.status_code == 401
    # Weak tags never match If-Match (strong comparison).
    quota = await env.post(f"{E}/quotas/", {"name": "Hall", "size": 10})
    url = f"{E}/quotas/{quota['id']}/"
    etag = (await client.get(url, headers=env.h)).headers["etag"]
    weak = {**env.h, "If-Match": f"W/{etag}"}
    assert (await client.patch(url, json={"size": 13}, headers=weak)).status_code == 412
    listed = {**env.h, "If-Match": f'"nope", {etag}'}
    assert (await client.patch(url, json={"size": 13}, headers=listed)).status_code == 200
