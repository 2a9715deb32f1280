"""Jobs written the way a request writes them, and waiting for their end."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqlalchemy import select

from admit.auth.credentials import hash_token
from admit.jobs.queue import enqueue
from admit.kit.http.transaction import commit_and_notify
from admit.models import Job, TeamAPIToken


async def token_owner(app: Any, secret: str) -> tuple[str, int]:
    async with app.state.db.sessionmaker() as session:
        token_id = await session.scalar(
            select(TeamAPIToken.id).where(TeamAPIToken.token_hash == hash_token(secret))
        )
    return "token", token_id


async def start_job(
    app: Any, kind: str = "noop", input: dict | None = None, **kw: Any
) -> tuple[int, str]:
    """A job enqueued in a committed transaction, handed to the broker after the commit."""
    async with app.state.db.sessionmaker() as session:
        job = await enqueue(session, kind, input or {}, **kw)
        await commit_and_notify(session)
    return job


async def job_row(app: Any, job_id: int) -> Job:
    async with app.state.db.sessionmaker() as session:
        return await session.get(Job, job_id)


async def wait_for(app: Any, job_id: int, *statuses: str, seconds: float = 10) -> Job:
    statuses = statuses or ("finished", "failed")
    deadline = time.monotonic() + seconds
    while True:
        job = await job_row(app, job_id)
        if job is not None and job.status in statuses:
            return job
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} is {job and job.status}, not {statuses}")
        await asyncio.sleep(0.02)
