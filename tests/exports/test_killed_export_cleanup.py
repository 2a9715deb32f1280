"""A killed export leaves nothing behind for good (issue 35): SIGKILL mid-export left a 0-byte
``.partial`` in the shared file store and the spooled rows (130 MB) in the worker's temp
directory. Temporary files now live in a directory per job run, which a restarted worker
removes for processes that no longer run; the periodic file sweep removes partial files older
than any run may take. Real ``admit serve``, ``admit worker`` and ``admit scheduler``."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import httpx

from admit.jobs import sweep as jobsweep
from admit.jobs.storage import LocalFileStore
from tests.exports.test_live_exports import (  # noqa: F401
    Shop,
    api,
    exports_database,
    job_files,
    job_of,
    jobs_database,
    pytestmark,
    shop,
    start_export,
    wait_job,
)
from tests.factories import auth
from tests.jobs.conftest import LiveJobs, live_jobs  # noqa: F401


def run_dirs(tmp: Path, pid: int) -> list[Path]:
    return sorted((tmp / "admit-jobs" / f"w{pid}").glob("job-*"))


async def test_a_killed_export_is_cleaned_up_by_the_restart_and_the_sweep(
    live_jobs: LiveJobs,  # noqa: F811
    shop: Shop,  # noqa: F811
    api: str,  # noqa: F811
    tmp_path: Path,
):
    live = live_jobs
    tmp = tmp_path / "worker-tmp"
    tmp.mkdir()
    live.processes.env["TMPDIR"] = str(tmp)
    doomed = live.processes.start("worker", "--concurrency", "1", name="worker-1")
    live.processes.start("scheduler", name="scheduler")
    data = Path(live.processes.env["ADMIT_DATA_DIR"])
    async with httpx.AsyncClient(base_url=api, timeout=60) as client:
        started = await start_export(client, shop)  # XLSX: rows spool to temporary files
        assert started.status_code == 202, started.text
        url = started.json()["download"]
        deadline = time.monotonic() + 90
        while True:  # mid-write: under way, its partial in the store, rows spooled
            job = await job_of(live, url)
            spooled = [f for d in run_dirs(tmp, doomed.pid) for f in d.iterdir()]
            if job.status == "running" and (job.percentage or 0) >= 10 and spooled:
                break
            assert job.status in ("waiting", "running") and time.monotonic() < deadline
            await asyncio.sleep(0.02)
        partial, finals = job_files(data, job.uuid)
        assert partial and not finals, "the export is being written"
        assert sum(f.stat().st_size for f in spooled) > 0

        live.processes.kill(doomed)  # SIGKILL: no chance to clean up
        assert run_dirs(tmp, doomed.pid), "the killed worker's temporary files are left"
        assert all(p.exists() for p in partial), "and its partial file"

        # The restarted worker removes the dead one's directory, then runs the job again.
        live.processes.start("worker", "--concurrency", "1", name="worker-2")
        deadline = time.monotonic() + 60
        while (tmp / "admit-jobs" / f"w{doomed.pid}").exists():
            assert time.monotonic() < deadline, "the restarted worker did not clean up"
            await asyncio.sleep(0.05)
        job = await wait_job(live, url, ("finished", "failed"))
        assert job.status == "finished", job.message
        left, finals = job_files(data, job.uuid)
        assert set(partial) <= set(left), "the killed run's partial is still in the store"

        # The sweep removes partial files older than any run may take, nothing else.
        store = LocalFileStore(data / "files")
        assert await jobsweep.remove_partial_files(store, 3600) == 0  # too young yet
        past = time.time() - 2 * 3600
        for path in partial:
            os.utime(path, (past, past))
        assert await jobsweep.remove_partial_files(store, 3600) == len(partial)
        left, still = job_files(data, job.uuid)
        assert not left and still == finals
        response = await client.get(url, headers=auth(shop.world.admin))
        assert response.status_code == 200 and len(response.content) == job.result_size
    # The job's own run directories are gone once it ended.
    assert not [d for d in (tmp / "admit-jobs").glob("w*/job-*")]
