"""At most two running exports per caller: a third request answers 429 with Retry-After,
also when the requests come at the same time (PostgreSQL: an advisory lock per owner)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt

from sqlalchemy import func, select, update

from admit.db import utcnow
from admit.exports import routes
from admit.exports.limits import reserve_slot, retry_after
from admit.jobs.queue import enqueue
from admit.models import Job
from tests.exports.shop import exporters_url
from tests.factories import auth

BODY = {"_format": "orders:default"}


async def run(client, world, token: str, organizer_level: bool = False):
    base = exporters_url(world, organizer_level=organizer_level)
    return await client.post(f"{base}orderlist/run/", json=BODY, headers=auth(token))


async def live_jobs(app) -> int:
    async with app.state.db.sessionmaker() as session:
        query = select(func.count()).where(Job.status.in_(("waiting", "running")))
        return int(await session.scalar(query.select_from(Job)))


async def test_a_third_export_is_429_until_one_ended(client, factory, world, clean_app):
    # No engine runs here: accepted exports stay waiting (they count as running).
    assert (await run(client, world, world.admin)).status_code == 202
    assert (await run(client, world, world.admin, organizer_level=True)).status_code == 202
    refused = await run(client, world, world.admin)
    assert refused.status_code == 429
    assert set(refused.json()) == {"detail"} and "at most 2 exports" in refused.json()["detail"]
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert (await run(client, world, world.admin, organizer_level=True)).status_code == 429
    assert await live_jobs(clean_app) == 2

    # Another caller has slots of its own.
    other = await factory.admin_token(world.org)
    assert (await run(client, world, other)).status_code == 202

    # An ended export (finished or failed) frees its slot.
    async with clean_app.state.db.sessionmaker() as session:
        first = await session.scalar(select(func.min(Job.id)))
        await session.execute(update(Job).where(Job.id == first).values(status="finished"))
        await session.commit()
    assert (await run(client, world, world.admin)).status_code == 202
    assert (await run(client, world, world.admin)).status_code == 429


async def test_bad_input_is_still_400_at_the_limit(client, world):
    for _ in range(2):
        assert (await run(client, world, world.admin)).status_code == 202
    base = exporters_url(world)
    response = await client.post(
        f"{base}orderlist/run/", json={"_format": "nope"}, headers=auth(world.admin)
    )
    assert response.status_code == 400


async def test_concurrent_requests_cannot_share_the_last_slot(
    client, world, clean_app, monkeypatch
):
    assert (await run(client, world, world.admin)).status_code == 202
    requests = 12
    arrived = 0
    all_arrived = asyncio.Event()

    async def counted_reserve(session, owner):
        nonlocal arrived
        arrived += 1
        if arrived == requests:
            all_arrived.set()
        await reserve_slot(session, owner)

    async def late_enqueue(*args, **kwargs):
        # The first request to get a slot inserts its job only once every request has
        # arrived at the slot check: without the lock, each would see one slot free.
        # (SQLite: a request's first statement takes the write lock, so the others wait
        # before they arrive; there is nothing to wait for.)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(all_arrived.wait(), 0.1 if clean_app.state.db.is_sqlite else 3)
        return await enqueue(*args, **kwargs)

    monkeypatch.setattr(routes, "reserve_slot", counted_reserve)
    monkeypatch.setattr(routes, "enqueue", late_enqueue)
    answers = await asyncio.gather(*(run(client, world, world.admin) for _ in range(requests)))
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [202] + [429] * (requests - 1), statuses
    assert await live_jobs(clean_app) == 2


def test_retry_after_extrapolates_the_running_exports():
    now = utcnow()
    started = now - dt.timedelta(seconds=10)
    assert retry_after([("waiting", None, None), ("running", 50, started)]) == 10
    assert retry_after([("running", 80, started), ("running", 10, started)]) in (2, 3)
    assert retry_after([("running", 1, now - dt.timedelta(hours=1))]) == 60
    assert retry_after([("waiting", None, None), ("running", None, started)]) == 5
    assert retry_after([("running", 99, now)]) == 1
