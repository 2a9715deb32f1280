"""``admit jobs list|show|retry`` and ``admit worker`` without a broker, on the test database."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import update
from typer.testing import CliRunner

from admit import cli as cli_module
from admit.cli import app as cli_app
from admit.models import Job
from tests.jobs.helpers import job_row, start_job


@pytest.fixture
def invoke(database_url, monkeypatch):
    monkeypatch.setenv("ADMIT_DATABASE_URL", database_url)
    monkeypatch.delenv("ADMIT_REDIS_URL", raising=False)
    monkeypatch.delenv("ADMIT_BROKER_URL", raising=False)
    # Wide enough for whole messages: the console took its width when it was imported
    # (80 in an xdist worker).
    monkeypatch.setattr(cli_module.console, "width", 200)
    runner = CliRunner()

    async def run(*args: str):
        return await asyncio.to_thread(runner.invoke, cli_app, list(args))

    return run


async def test_list_show_and_retry(clean_app, invoke):
    done, _ = await start_job(clean_app, "noop")
    failed, failed_uuid = await start_job(clean_app, "noop", {"fail": "x"})
    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(update(Job).where(Job.id == done).values(status="finished"))
        await session.execute(
            update(Job)
            .where(Job.id == failed)
            .values(status="failed", attempts=3, message="The disk is full.")
        )
        await session.commit()

    listed = await invoke("jobs", "list")
    assert listed.exit_code == 0, listed.output
    assert "The disk is full." in listed.output
    assert "waiting: 0, running: 0, finished: 1, failed: 1" in listed.output
    only_failed = await invoke("jobs", "list", "--status", "failed")
    assert failed_uuid in only_failed.output and str(done) not in only_failed.output.split()[:20]
    assert (await invoke("jobs", "list", "--status", "bogus")).exit_code != 0

    shown = await invoke("jobs", "show", failed_uuid)
    assert shown.exit_code == 0 and "message: The disk is full." in shown.output
    row = await job_row(clean_app, failed)
    assert row.secret not in shown.output  # the download secret is never printed
    assert (await invoke("jobs", "show", "nope")).exit_code == 1

    assert (await invoke("jobs", "retry", str(done))).exit_code == 1  # not failed
    retried = await invoke("jobs", "retry", str(failed))
    assert retried.exit_code == 0, retried.output
    row = await job_row(clean_app, failed)
    assert (row.status, row.attempts, row.message, row.enqueued_at) == ("waiting", 0, None, None)


async def test_worker_needs_a_broker(invoke):
    result = await invoke("worker")
    assert result.exit_code == 1
    assert "No broker is configured" in result.output
