"""The job engine in the embedded mode, on SQLite and PostgreSQL: rows first, broker second;
leases, retries and the sweep; download semantics."""

from __future__ import annotations

import asyncio
import datetime as dt

from sqlalchemy import func, select, update

from admit.db import utcnow
from admit.jobs import sweep as jobsweep
from admit.jobs.queue import KINDS, JobContext, RetryLater, enqueue, job_kind
from admit.models import Job
from tests.factories import auth
from tests.jobs.helpers import job_row, start_job, token_owner, wait_for


async def _sweep(app, now=None):
    parts = app.state.background
    return await jobsweep.run_in_session(
        app.state.db,
        lambda s: jobsweep.sweep(s, now or utcnow(), parts.settings, parts.store),
    )


async def test_a_committed_job_runs_and_its_result_downloads(client, background, world):
    owner = await token_owner(client._transport.app, world.admin)
    app = background.engine.db and client._transport.app
    job_id, uuid = await start_job(
        app, "noop", {"result": "hello ✓"}, organizer_id=world.org.id, owner=owner
    )
    job = await wait_for(app, job_id)
    assert (job.status, job.percentage, job.attempts) == ("finished", 100, 1)
    status = await client.get(f"/api/v1/organizers/acme/jobs/{uuid}/", headers=auth(world.admin))
    assert status.status_code == 200
    body = status.json()
    assert body["id"] == uuid and body["status"] == "finished" and body["kind"] == "noop"
    assert body["download"].startswith(f"http://testserver/api/v1/organizers/acme/jobs/{uuid}/")
    got = await client.get(body["download"], headers=auth(world.admin))
    assert got.status_code == 200
    assert got.content == "hello ✓".encode()
    assert got.headers["content-type"].startswith("text/plain")
    assert got.headers["content-disposition"].startswith("attachment;")
    assert 'filename="result.txt"' in got.headers["content-disposition"]


async def test_a_rolled_back_request_leaves_no_job_and_runs_nothing(clean_app, background):
    ran = background.engine.ran
    async with clean_app.state.db.sessionmaker() as session:
        await enqueue(session, "noop")
        await session.rollback()
    await background.engine.broker.wait_all()
    async with clean_app.state.db.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(Job)) == 0
    assert background.engine.ran == ran


async def test_a_job_nobody_handed_to_the_broker_is_sent_by_the_sweep(clean_app):
    # No engine running: the commit hands the id to nobody (a crash right after commit).
    job_id, _ = await start_job(clean_app, "noop")
    assert (await job_row(clean_app, job_id)).status == "waiting"
    later = utcnow() + dt.timedelta(seconds=clean_app.state.settings.job_redeliver_seconds + 1)
    assert (await _sweep(clean_app, utcnow()))["sent"] == 0  # handed over just now: not yet
    parts = clean_app.state.background
    async with parts.serving(scheduler=False):
        counts = await _sweep(clean_app, later)
        assert counts["sent"] == 1
        job = await wait_for(clean_app, job_id)
    assert job.status == "finished"


async def test_download_while_waiting_running_failed(client, background, world):
    app = client._transport.app
    owner = await token_owner(app, world.admin)
    job_id, uuid = await start_job(
        app, "noop", {"seconds": 2}, organizer_id=world.org.id, owner=owner
    )
    await wait_for(app, job_id, "running")
    job = await job_row(app, job_id)
    url = f"/api/v1/organizers/acme/jobs/{uuid}/download/{job.secret}/"
    running = await client.get(url, headers=auth(world.admin))
    assert running.status_code == 409
    assert running.json()["status"] == "running"
    assert "percentage" in running.json()
    assert running.headers["retry-after"] == "1"
    await wait_for(app, job_id)
    no_file = await client.get(url, headers=auth(world.admin))
    assert no_file.status_code == 404  # finished, but this job made no file

    failed_id, failed_uuid = await start_job(
        app, "noop", {"fail": "The export is too large."}, organizer_id=world.org.id, owner=owner
    )
    failed = await wait_for(app, failed_id)
    assert (failed.status, failed.attempts) == ("failed", 1)  # a JobFailed is not retried
    answer = await client.get(
        f"/api/v1/organizers/acme/jobs/{failed_uuid}/download/{failed.secret}/",
        headers=auth(world.admin),
    )
    assert answer.status_code == 410
    assert answer.json() == {"status": "failed", "message": "The export is too large."}


async def test_waiting_job_answers_409_waiting(client, world):
    app = client._transport.app
    owner = await token_owner(app, world.admin)
    _, uuid = await start_job(app, "noop", organizer_id=world.org.id, owner=owner)
    job = (await _jobs(app))[0]
    answer = await client.get(
        f"/api/v1/organizers/acme/jobs/{uuid}/download/{job.secret}/", headers=auth(world.admin)
    )
    assert answer.status_code == 409
    assert answer.json() == {"status": "waiting", "percentage": None}


async def _jobs(app):
    async with app.state.db.sessionmaker() as session:
        return list((await session.execute(select(Job).order_by(Job.id))).scalars())


async def test_unknown_foreign_or_expired_downloads_are_404(client, background, world, factory):
    app = client._transport.app
    owner = await token_owner(app, world.admin)
    job_id, uuid = await start_job(
        app, "noop", {"result": "x"}, organizer_id=world.org.id, owner=owner
    )
    job = await wait_for(app, job_id)
    base = "/api/v1/organizers/acme/jobs"
    good = f"{base}/{uuid}/download/{job.secret}/"
    assert (await client.get(good, headers=auth(world.admin))).status_code == 200
    colleague = await factory.admin_token(world.org)  # same organizer, another credential
    bad = [
        (f"{base}/{uuid}/download/{job.secret}x/", world.admin),
        (f"{base}/{uuid}/download/{'A' * 500}/", world.admin),
        (f"{base}/{'0' * 32}/download/{job.secret}/", world.admin),
        (f"{base}/{'é' * 40}/download/x/", world.admin),
        (f"{base}/{uuid}/", colleague),
        (good, colleague),
    ]
    for url, token in bad:
        answer = await client.get(url, headers=auth(token))
        assert answer.status_code == 404, (url, answer.text)
        assert answer.json() == {"detail": "Not found."}
    other = await client.get(
        f"/api/v1/organizers/rival/jobs/{uuid}/download/{job.secret}/", headers=auth(world.outsider)
    )
    assert other.status_code == 404
    async with app.state.db.sessionmaker() as session:
        await session.execute(update(Job).values(expires=utcnow() - dt.timedelta(seconds=1)))
        await session.commit()
    assert (await client.get(good, headers=auth(world.admin))).status_code == 404
    # The sweep deletes the expired row and its file.
    key = job.result_key
    assert await background.store.size(key) is not None
    assert (await _sweep(app))["deleted"] == 1
    assert await background.store.size(key) is None
    assert await _jobs(app) == []


async def test_a_dead_workers_job_runs_again_and_a_used_up_one_fails(clean_app, background):
    engine = background.engine
    job_id, _ = await start_job(clean_app, "noop", {"seconds": 60})
    await wait_for(clean_app, job_id, "running")
    # The worker "dies": its heartbeats stop and the lease runs out.
    job = await job_row(clean_app, job_id)
    assert job.worker == engine.worker and job.attempts == 1
    past = job.lease_until + dt.timedelta(seconds=1)
    counts = await _sweep(clean_app, past)
    assert counts["reaped"] == 1
    job = await job_row(clean_app, job_id)
    assert (job.status, job.worker, job.lease_until) == ("waiting", None, None)
    assert "runs again" in job.message
    # (The sweep ran at a simulated later time: make the job due now, and quick.)
    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(
            update(Job).where(Job.id == job_id).values(input={}, attempts=3, run_after=utcnow())
        )
        await session.commit()
    await engine.run(job_id)
    job = await job_row(clean_app, job_id)
    assert (job.status, job.attempts) == ("finished", 4)

    used_id, _ = await start_job(clean_app, "noop", {"seconds": 60})
    await wait_for(clean_app, used_id, "running")
    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(update(Job).where(Job.id == used_id).values(max_attempts=1))
        await session.commit()
    counts = await _sweep(clean_app, utcnow() + dt.timedelta(hours=1))
    job = await job_row(clean_app, used_id)
    assert job.status == "failed" and "no attempts are left" in job.message
    assert job.finished is not None and job.expires is not None


async def test_a_worker_that_lost_its_lease_cannot_overwrite_the_next_run(clean_app, background):
    job_id, _ = await start_job(clean_app, "noop", {"seconds": 1})
    await wait_for(clean_app, job_id, "running")
    async with clean_app.state.db.sessionmaker() as session:  # another worker took it over
        await session.execute(
            update(Job).where(Job.id == job_id).values(worker="elsewhere", attempts=2)
        )
        await session.commit()
    await background.engine.broker.wait_all()
    job = await job_row(clean_app, job_id)
    assert (job.status, job.worker) == ("running", "elsewhere")


_calls: list[int] = []


@job_kind("test.flaky", max_attempts=3)
async def _flaky(ctx: JobContext) -> str | None:
    _calls.append(ctx.attempt)
    if ctx.input.get("crash") and ctx.attempt < 3:
        raise RuntimeError("boom")
    if ctx.attempt < ctx.input.get("ok_at", 1):
        raise RetryLater(f"try later ({ctx.attempt})", delay=0)
    return f"done at {ctx.attempt}"


async def _drive(app, job_id):
    """Runs a job's retries as the scheduler would: the sweep sends what is due."""
    for _ in range(500):
        job = await job_row(app, job_id)
        if job.status in ("finished", "failed"):
            return job
        if job.status == "waiting" and job.enqueued_at is None:
            async with app.state.db.sessionmaker() as session:  # backoff over: due now
                await session.execute(
                    update(Job).where(Job.id == job_id).values(run_after=utcnow())
                )
                await session.commit()
            await _sweep(app)
        await asyncio.sleep(0.02)
    raise AssertionError("job did not end")


async def test_retry_later_and_unexpected_errors_are_bounded(clean_app, background):
    assert "test.flaky" in KINDS
    job_id, _ = await start_job(clean_app, "test.flaky", {"ok_at": 3})
    job = await _drive(clean_app, job_id)
    assert (job.status, job.attempts, job.message) == ("finished", 3, "done at 3")

    job_id, _ = await start_job(clean_app, "test.flaky", {"ok_at": 9})
    job = await _drive(clean_app, job_id)
    assert (job.status, job.attempts, job.message) == ("failed", 3, "try later (3)")

    job_id, _ = await start_job(clean_app, "test.flaky", {"crash": True})
    for _ in range(500):  # until its first run ended
        job = await job_row(clean_app, job_id)
        if job.message is not None:
            break
        await asyncio.sleep(0.02)
    assert job.status == "waiting"
    assert job.run_after > utcnow() + dt.timedelta(seconds=5)  # backs off
    assert job.message == "The job failed unexpectedly (RuntimeError)."
    job = await _drive(clean_app, job_id)
    assert (job.status, job.attempts) == ("finished", 3)


async def test_unknown_kind_fails_with_a_message(clean_app, background):
    KINDS["test.gone"] = KINDS["noop"]
    try:
        job_id, _ = await start_job(clean_app, "test.gone")
    finally:
        del KINDS["test.gone"]
    job = await wait_for(clean_app, job_id)
    assert job.status == "failed" and "Unknown job kind" in job.message


async def test_progress_is_reported(clean_app, background):
    job_id, _ = await start_job(clean_app, "noop", {"seconds": 3})
    seen = set()
    while (job := await job_row(clean_app, job_id)).status != "finished":
        seen.add(job.percentage)
        await asyncio.sleep(0.1)
    assert {33, 66} & seen, seen


async def test_a_job_sent_twice_at_once_runs_once(clean_app, background):
    job_id, _ = await start_job(clean_app, "test.flaky", {"ok_at": 1}, hand_over=False)
    _calls.clear()
    await asyncio.gather(*(background.engine.run(job_id) for _ in range(5)))
    await background.engine.broker.wait_all()
    job = await wait_for(clean_app, job_id)
    assert (job.status, job.attempts) == ("finished", 1)
    assert _calls == [1]


async def test_hand_offs_are_shared_and_soon_ones_gathered(clean_app, background, monkeypatch):
    """Jobs committed while a hand-off is under way go in the next one together; jobs handed
    off "soon" (invoice PDFs) wait a moment for others, urgent ones never wait for them; a
    stopping engine sends what it gathered at once."""
    from admit.jobs import runner

    engine = background.engine
    sent: list[list[int]] = []

    async def send(ids: list[int]) -> None:
        sent.append(sorted(ids))
        await asyncio.sleep(0.05)  # the broker's round trip

    monkeypatch.setattr(engine, "send", send)
    monkeypatch.setattr(engine, "embedded", False)  # a broker elsewhere
    monkeypatch.setattr(runner, "SOON_SECONDS", 0.3)
    await engine.dispatch([1])
    await asyncio.sleep(0.01)
    await engine.dispatch([2])  # while [1] is on its way
    await engine.dispatch([3])
    await engine.dispatch([10], soon=True)
    await engine.dispatch([11], soon=True)
    await asyncio.sleep(0.15)
    assert sent == [[1], [2, 3]]  # the urgent ones did not wait for the gathered ones
    await asyncio.sleep(0.4)
    assert sent == [[1], [2, 3], [10, 11]]
    monkeypatch.setattr(runner, "SOON_SECONDS", 60.0)
    await engine.dispatch([12], soon=True)
    await asyncio.wait_for(engine.stop(), 5)  # not after a minute
    assert sent[-1] == [12]
