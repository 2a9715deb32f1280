"""Export → shred → status with a real ``admit worker`` process (PostgreSQL and Redis)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy import select

from admit.app import create_app
from admit.models import Job, Order
from tests.factories import Factory, auth, build_world
from tests.jobs.conftest import LiveJobs, jobs_database, live_jobs  # noqa: F401
from tests.live import RetryUnavailable
from tests.orders import helpers as h
from tests.shredders import helpers as sh


@pytest.fixture
async def api(live_jobs: LiveJobs) -> AsyncIterator[httpx.AsyncClient]:  # noqa: F811
    """The API on the workers' database and queue; it only hands jobs to the broker."""
    settings = live_jobs.settings.model_copy(update={"base_url": "http://testserver"})
    app = create_app(settings)
    await app.state.background.engine.start()
    try:
        # A 503 for want of a database connection (the suite's PostgreSQL is shared with the
        # other test process and its servers) is asked again, as a client would.
        transport = RetryUnavailable(httpx.ASGITransport(app=app))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client
    finally:
        await app.state.background.engine.stop()
        await app.state.db.dispose()


async def test_a_worker_exports_and_shreds(live_jobs: LiveJobs, api: httpx.AsyncClient):  # noqa: F811
    live = live_jobs
    worker = live.processes.start("worker", name="worker")
    factory = Factory(live.db.sessionmaker)
    world = await build_world(factory)
    item = await h.item(factory, world.event, "25.00")
    created = await api.post(
        f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/orders/",
        json={
            "email": "ada@example.org",
            "phone": "+442071234567",
            "positions": [{"item": item.id, "attendee_name": "Ada Lovelace"}],
        },
        headers=auth(world.admin),
    )
    assert created.status_code == 201, created.text
    await sh.end_event(factory, world.event)

    started = await api.post(
        sh.url(world, "export/"),
        json={"shredders": ["order_emails", "phone_numbers", "attendee_info"]},
        headers=auth(world.admin),
    )
    assert started.status_code == 202, started.text
    links = started.json()
    download = await sh.poll(api, sh.path_of(links["download"]), world.admin, seconds=60)
    assert download.status_code == 200, download.text
    files = sh.unzip(download.content)
    assert b"ada@example.org" in files["order_emails/orders.json"]
    assert b"Ada Lovelace" in files["attendee_info/attendees.json"]

    shred = await api.post(sh.path_of(links["shred"]), headers=auth(world.admin))
    assert shred.status_code == 202, shred.text
    status = await sh.poll(api, sh.path_of(shred.json()["status"]), world.admin, seconds=60)
    assert status.status_code == 200, status.text

    async with live.db.sessionmaker() as session:
        order = (await session.execute(select(Order))).scalar_one()
        workers = set((await session.scalars(select(Job.worker))).all())
    assert (order.email, order.phone, order.total) == (None, None, order.total)
    assert str(order.total) == "25.00"
    assert {w.split(":")[1] for w in workers} == {str(worker.pid)}  # run by the worker process
    gone = await api.get(sh.path_of(links["download"]), headers=auth(world.admin))
    assert gone.status_code == 404
    assert "Traceback" not in live.processes.log("worker")
