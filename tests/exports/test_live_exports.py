"""Exports on real processes (PostgreSQL, Redis, ``admit serve`` and ``admit worker``): two
slow exports running and a third refused with 429; a worker killed mid-export, and a
download that never serves a partial file."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openpyxl
import pytest
from bench.seed import populate
from sqlalchemy import func, select

from admit.db import create_database
from admit.models import Job, Order, OrderPosition
from tests.factories import Factory, World, auth, build_world
from tests.jobs.conftest import LiveJobs, fresh_jobs_database, live_jobs  # noqa: F401
from tests.live import _wait_until_serving, free_port

# Enough rows that an XLSX export takes a few seconds on the 2-core machine.
POSITIONS = 40_000


@dataclass
class Shop:
    world: World
    positions: int
    orders: int


# Both modules of live exports read one shop, built once (it takes a while): on one worker
# (``TOGETHER`` in tests/scheduling.py; the mark says so to xdist versions that read it).
pytestmark = pytest.mark.xdist_group("live-exports")


@pytest.fixture(scope="session")
async def exports_database() -> AsyncIterator[str]:
    async with fresh_jobs_database() as url:
        yield url


@pytest.fixture(scope="module")
def jobs_database(exports_database: str) -> str:
    """The job processes of the export tests work on the shop's database."""
    return exports_database


@pytest.fixture(scope="session")
async def shop(exports_database: str) -> AsyncIterator[Shop]:
    """One event with many orders for the export tests (the exports only read it)."""
    db = create_database(exports_database, pool_size=2)
    try:
        world = await build_world(Factory(db.sessionmaker))
    finally:
        await db.dispose()
    counts = await populate(exports_database, world.org.slug, world.event.slug, POSITIONS)
    yield Shop(world, counts["positions"], counts["orders"])


@pytest.fixture
async def api(live_jobs: LiveJobs, shop: Shop) -> AsyncIterator[str]:  # noqa: F811
    """``admit serve`` on the live database, handing jobs to the test's Redis queue."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    live_jobs.processes.env["ADMIT_BASE_URL"] = base
    process = live_jobs.processes.start(
        "serve", "--port", str(port), "--workers", "1", name="server"
    )
    await asyncio.to_thread(_wait_until_serving, base, process)
    yield base


def exporters(shop: Shop) -> str:
    return f"/api/v1/organizers/{shop.world.org.slug}/events/{shop.world.event.slug}/exporters"


async def job_of(live: LiveJobs, url: str) -> Job:
    job_uuid = url.rstrip("/").split("/")[-2]
    async with live.db.sessionmaker() as session:
        return (await session.execute(select(Job).where(Job.uuid == job_uuid))).scalar_one()


async def wait_job(live: LiveJobs, url: str, statuses: tuple[str, ...], seconds: float = 90):
    deadline = time.monotonic() + seconds
    while True:
        job = await job_of(live, url)
        if job.status in statuses:
            return job
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job.uuid} is {job.status}, not {statuses}")
        await asyncio.sleep(0.05)


async def start_export(client: httpx.AsyncClient, shop: Shop, fmt: str = "xlsx"):
    return await client.post(
        f"{exporters(shop)}/orderlist/run/", json={"_format": fmt}, headers=auth(shop.world.admin)
    )


def job_files(root: Path, job_uuid: str) -> tuple[list[Path], list[Path]]:
    """The job's files in the store: partial ones (being written, or left by a killed
    writer) and complete ones (under their key)."""
    found = list(root.rglob(f"jobs/{job_uuid}/*"))
    partial = [p for p in found if p.name.startswith(".") and p.name.endswith(".partial")]
    return partial, [p for p in found if not p.name.startswith(".")]


def check_xlsx(data: bytes, shop: Shop) -> None:
    book = openpyxl.load_workbook(io.BytesIO(data), read_only=True)
    assert book.sheetnames == ["Orders", "Order positions", "Fees"]
    assert book["Orders"].max_row == shop.orders + 1
    assert book["Order positions"].max_row == shop.positions + 1


async def test_two_running_exports_and_a_third_is_429(live_jobs: LiveJobs, shop: Shop, api: str):  # noqa: F811
    live = live_jobs
    live.processes.start("worker", "--concurrency", "2", name="worker")
    async with httpx.AsyncClient(base_url=api, timeout=60) as client:
        first = await start_export(client, shop)
        second = await start_export(client, shop, "positions:default")
        assert first.status_code == second.status_code == 202, first.text
        urls = [first.json()["download"], second.json()["download"]]
        for url in urls:
            await wait_job(live, url, ("running",), seconds=60)
        third = await start_export(client, shop)
        running = [(await job_of(live, url)).status for url in urls]
        assert third.status_code == 429, third.text
        assert "at most 2 exports" in third.json()["detail"]
        assert 1 <= int(third.headers["retry-after"]) <= 60
        assert running == ["running", "running"], "the exports ended before the third request"

        for url in urls:
            job = await wait_job(live, url, ("finished", "failed"))
            assert job.status == "finished", job.message
        data = (await client.get(urls[0], headers=auth(shop.world.admin))).content
        check_xlsx(data, shop)
        lines = (await client.get(urls[1], headers=auth(shop.world.admin))).content.splitlines()
        assert len(lines) == shop.positions + 1
        # Both ended: slots are free again.
        again = await start_export(client, shop, "fees:default")
        assert again.status_code == 202
        assert (await wait_job(live, again.json()["download"], ("finished",))).result_size


async def test_a_worker_killed_mid_export_never_leaves_a_partial_download(
    live_jobs: LiveJobs,  # noqa: F811
    shop: Shop,
    api: str,
):
    live = live_jobs
    doomed = live.processes.start("worker", "--concurrency", "1", name="worker-1")
    live.processes.start("scheduler", name="scheduler")
    files = Path(live.processes.env["ADMIT_DATA_DIR"])
    async with httpx.AsyncClient(base_url=api, timeout=60) as client:
        started = await start_export(client, shop)
        assert started.status_code == 202
        url = started.json()["download"]
        deadline = time.monotonic() + 60
        while True:  # mid-export: under way, its file not complete
            job = await job_of(live, url)
            if job.status == "running" and job.percentage and job.percentage >= 10:
                break
            assert job.status in ("waiting", "running") and time.monotonic() < deadline
            await asyncio.sleep(0.02)
        partial, finals = job_files(files, job.uuid)
        assert partial, "the export writes next to its final name"
        assert not finals
        response = await client.get(url, headers=auth(shop.world.admin))
        assert response.status_code == 409 and response.json()["status"] == "running"

        live.processes.kill(doomed)  # SIGKILL: no chance to clean up or give the job back
        response = await client.get(url, headers=auth(shop.world.admin))
        assert response.status_code == 409, "a killed export is never served"
        live.processes.start("worker", "--concurrency", "1", name="worker-2")
        job = await wait_job(live, url, ("finished", "failed"))
        response = await client.get(url, headers=auth(shop.world.admin))
        if job.status == "failed":
            assert response.status_code == 410 and response.json()["message"]
            return
        assert job.attempts == 2, "the second worker ran it again"
        assert response.status_code == 200
        assert int(response.headers["content-length"]) == len(response.content)
        assert len(response.content) == job.result_size
        check_xlsx(response.content, shop)
        # The killed run's partial file stayed where it was written, never under a key.
        left, finals = job_files(files, job.uuid)
        assert set(partial) <= set(left)
        assert [p.name for p in finals] == [job.result_key.rsplit("/", 1)[1]]
    async with live.db.sessionmaker() as session:
        counted = await session.scalar(
            select(func.count()).select_from(OrderPosition).join(Order)
            .where(Order.event_id == shop.world.event.id)
        )  # fmt: skip
    assert counted == shop.positions
