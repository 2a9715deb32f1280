"""The in-process periodic runner runs its jobs and stops them cleanly."""

from __future__ import annotations

import asyncio

from admit.kit import periodic


async def test_jobs_run_repeatedly_and_stop(clean_app):
    runs: list[int] = []

    async def job(session) -> None:
        runs.append(1)

    jobs = [periodic.PeriodicJob("count", 0.01, job)]
    async with periodic.running(clean_app.state.db, jobs):
        await asyncio.sleep(0.2)
    done = len(runs)
    assert done >= 3
    await asyncio.sleep(0.05)
    assert len(runs) == done  # cancelled with the context


async def test_a_failing_job_keeps_running(clean_app):
    runs: list[int] = []

    async def job(session) -> None:
        runs.append(1)
        raise RuntimeError("boom")

    async with periodic.running(clean_app.state.db, [periodic.PeriodicJob("f", 0.01, job)]):
        await asyncio.sleep(0.1)
    assert len(runs) >= 2
