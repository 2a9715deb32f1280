"""The scheduler and the job: due exports start once (also with two schedulers at once), the
file goes out by mail to the owner and the recipients, a re-run mails nothing more, failures
count and stop the export at five, and a change starts it again."""

from __future__ import annotations

import asyncio
import csv
import datetime as dt
import io
import zoneinfo
from typing import Any

import openpyxl
import pytest
from sqlalchemy import delete, select, update

from admit.db import utcnow
from admit.exports.tables import XLSX_TYPE
from admit.jobs.queue import JobContext
from admit.kit.http.transaction import commit_and_notify
from admit.models import Job, OutgoingMail, ScheduledExport, team_members
from admit.scheduled_exports import tasks
from admit.scheduled_exports.service import compute_next_run
from tests.factories import World, auth
from tests.mail.conftest import Mailbox, settle
from tests.scheduled_exports.conftest import E, add_export, export_row, member

BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")
UTC = dt.UTC


async def start_due(app: Any, now: dt.datetime) -> list[int]:
    async with app.state.db.sessionmaker() as session:
        return await tasks.start_due(session, now)


async def run_due(app: Any, now: dt.datetime) -> list[Job]:
    """One scheduler pass at ``now``, and every job it started run to its end (with the
    mails they queued)."""
    ended = [await settle(app, job_id) for job_id in await start_due(app, now)]
    async with app.state.db.sessionmaker() as session:
        mail_jobs = list(
            await session.scalars(
                select(OutgoingMail.job_id).where(OutgoingMail.status == "queued")
            )
        )
    for mail_job in mail_jobs:  # outside the session: on SQLite it holds the write lock
        await settle(app, mail_job)
    return ended


async def mails(app: Any) -> list[OutgoingMail]:
    async with app.state.db.sessionmaker() as session:
        return list(await session.scalars(select(OutgoingMail).order_by(OutgoingMail.id)))


def attachment(message: Any) -> tuple[str, str, bytes]:
    parts = list(message.iter_attachments())
    assert len(parts) == 1
    part = parts[0]
    return part.get_filename(), part.get_content_type(), part.get_payload(decode=True)


@pytest.fixture
async def berlin(factory, world: World):
    return await factory.event(world.org, "berlin", timezone="Europe/Berlin")


async def test_a_dst_week_of_daily_runs_mails_the_file(
    clean_app, background, smtp: Mailbox, factory, world: World, berlin
):
    for name, size in (("Early bird", 50), ("Regular", 300), ("Tiny", 2)):
        await factory.quota(berlin, size, name=name)
    owner = await member(factory, world, email="owner@example.org")
    start = dt.datetime(2025, 3, 27, 12, tzinfo=UTC)
    rule = "DTSTART:20250101T000000\nRRULE:FREQ=DAILY"
    export_id = await add_export(
        clean_app,
        owner,
        berlin,
        export_form_data={"format": "csv", "min_size": 10},
        mail_additional_recipients="a@example.org, b@example.org",
        mail_additional_recipients_cc="c@example.org",
        mail_additional_recipients_bcc="hidden@example.org",
        mail_subject="Daily quotas",
        mail_template="Good morning,\n\nhere are the quotas.",
        schedule_next_run=compute_next_run(rule, dt.time(9), "Europe/Berlin", start),
    )
    expected = [
        # (tick, runs?) around 09:00 Berlin time; clocks go forward on 30 March.
        (dt.datetime(2025, 3, 28, 7, 59, tzinfo=UTC), False),
        (dt.datetime(2025, 3, 28, 8, 0, 30, tzinfo=UTC), True),
        (dt.datetime(2025, 3, 28, 8, 1, 30, tzinfo=UTC), False),
        (dt.datetime(2025, 3, 29, 8, 0, 30, tzinfo=UTC), True),
        (dt.datetime(2025, 3, 30, 6, 59, 30, tzinfo=UTC), False),  # 08:59 CEST
        (dt.datetime(2025, 3, 30, 7, 0, 30, tzinfo=UTC), True),  # 09:00 CEST
        (dt.datetime(2025, 3, 31, 7, 0, 30, tzinfo=UTC), True),
    ]
    next_runs = []
    for tick, runs in expected:
        jobs = await run_due(clean_app, tick)
        assert len(jobs) == (1 if runs else 0), tick
        assert all(job.status == "finished" for job in jobs), [j.message for j in jobs]
        if runs:
            next_runs.append((await export_row(clean_app, export_id)).schedule_next_run)
    assert [r.astimezone(BERLIN).time() for r in next_runs] == [dt.time(9)] * 4
    assert [r.astimezone(UTC).hour for r in next_runs] == [8, 7, 7, 7]
    assert next_runs[-1] == dt.datetime(2025, 4, 1, 7, tzinfo=UTC)

    assert len(smtp.envelopes) == 4
    envelope = smtp.envelopes[0]
    everyone = ["owner@example.org", "a@example.org", "b@example.org", "c@example.org"]
    assert sorted(envelope.rcpt_tos) == sorted([*everyone, "hidden@example.org"])
    message = smtp.messages[0]
    assert message["To"] == "owner@example.org, a@example.org, b@example.org"
    assert message["Cc"] == "c@example.org"
    assert message["Bcc"] is None
    assert message["Subject"] == "Daily quotas"
    assert "here are the quotas." in message.get_body(("plain",)).get_content()
    name, content_type, data = attachment(message)
    assert (name, content_type) == ("quotas.csv", "text/csv")
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    assert rows == [["Name", "Size"], ["Early bird", "50"], ["Regular", "300"]]
    row = await export_row(clean_app, export_id)
    assert row.error_counter == 0
    # The file stays with the job a week, longer than mail delivery may take.
    job = await session_job(clean_app, row.job_id)
    assert job.expires - job.finished == dt.timedelta(hours=tasks.KEEP_HOURS)
    assert job.result_key and job.input["file"]["key"] == job.result_key


async def session_job(app: Any, job_id: int | None) -> Job:
    async with app.state.db.sessionmaker() as session:
        job = await session.get(Job, job_id)
        assert job is not None
        return job


async def test_an_xlsx_export_of_the_organizer_level(
    clean_app, background, smtp: Mailbox, factory, world: World, berlin
):
    await factory.quota(world.event, 7, name="Main")
    owner = await member(factory, world, email="org@example.org")
    now = dt.datetime(2025, 6, 1, 10, tzinfo=UTC)
    export_id = await add_export(
        clean_app,
        owner,
        world.event,
        export_form_data={"format": "xlsx"},
        schedule_next_run=now - dt.timedelta(minutes=1),
    )
    org_export = await add_export(
        clean_app,
        owner,
        None,
        organizer_id=world.org.id,
        timezone="America/New_York",
        schedule_next_run=now - dt.timedelta(minutes=2),
    )
    jobs = await run_due(clean_app, now)
    assert [job.status for job in jobs] == ["finished", "finished"]
    by_name = {attachment(m)[0]: attachment(m) for m in smtp.messages}
    _, content_type, data = by_name["quotas.xlsx"]
    assert content_type == XLSX_TYPE
    sheet = openpyxl.load_workbook(io.BytesIO(data)).active
    assert [list(r) for r in sheet.iter_rows(values_only=True)] == [["Name", "Size"], ["Main", 7]]
    _, _, data = by_name["events.csv"]
    assert data.decode().split() == ["Slug", "berlin", "summit"]
    # The organizer-level export moves on in its own zone: tomorrow 09:00 in New York.
    row = await export_row(clean_app, org_export)
    assert row.schedule_next_run == dt.datetime(2025, 6, 1, 13, tzinfo=UTC)
    assert (await export_row(clean_app, export_id)).schedule_next_run == dt.datetime(
        2025, 6, 2, 9, tzinfo=UTC
    )


async def test_a_rerun_of_the_job_mails_nothing_more(
    clean_app, background, smtp: Mailbox, factory, world: World
):
    owner = await member(factory, world)
    now = dt.datetime(2025, 6, 1, 10, tzinfo=UTC)
    await add_export(clean_app, owner, world.event, schedule_next_run=now)
    [job] = await run_due(clean_app, now)
    assert job.status == "finished"
    # As if its worker had stopped after the mail was queued: the job runs once more.
    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(
            update(Job).where(Job.id == job.id).values(status="waiting", run_after=utcnow())
        )
        await session.commit()
    assert await background.engine.run(job.id)
    again = await session_job(clean_app, job.id)
    assert again.status == "finished"
    assert again.message.startswith("Mailed already")
    assert again.result_key == job.result_key  # the mailed file is still the job's
    assert len(await mails(clean_app)) == 1
    assert len(smtp.envelopes) == 1


async def test_a_run_that_lost_its_job_mails_nothing(clean_app, factory, world: World):
    owner = await member(factory, world)
    now = dt.datetime(2025, 6, 1, 10, tzinfo=UTC)
    export_id = await add_export(clean_app, owner, world.event, schedule_next_run=now)
    [job_id] = await start_due(clean_app, now)
    job = await session_job(clean_app, job_id)
    parts = clean_app.state.background

    async def report(percentage: int) -> None:
        return None

    # A worker that is not (any more) the one running this job: the row is not "running"
    # with its attempt.
    stale = JobContext(
        id=job.id,
        uuid=job.uuid,
        kind=job.kind,
        input=dict(job.input),
        attempt=1,
        organizer_id=job.organizer_id,
        event_id=job.event_id,
        owner_kind=job.owner_kind,
        owner_id=job.owner_id,
        db=clean_app.state.db,
        store=parts.store,
        settings=parts.settings,
        report=report,
    )
    message = await tasks.run_scheduled_export(stale)
    assert "mailed nothing" in message
    assert await mails(clean_app) == []
    assert (await export_row(clean_app, export_id)).job_id == job_id


async def test_five_failures_stop_the_export_and_a_change_restarts_it(
    client, clean_app, background, factory, world: World, as_user
):
    owner = await member(factory, world)
    created = await client.post(E, json=_body(), headers=as_user(owner))
    assert created.status_code == 201, created.text
    export_id = created.json()["id"]
    # The owner leaves every team: the exports run without permission from now on.
    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(delete(team_members).where(team_members.c.user_id == owner.id))
        await session.commit()
    row = await export_row(clean_app, export_id)
    tick = row.schedule_next_run + dt.timedelta(seconds=30)
    for failures in range(1, 6):
        [job] = await run_due(clean_app, tick)
        assert job.status == "failed"
        assert "no longer have permission" in job.message
        row = await export_row(clean_app, export_id)
        assert row.error_counter == failures
        tick = row.schedule_next_run + dt.timedelta(seconds=30)
    stopped_at = row.schedule_next_run
    for later in (tick, tick + dt.timedelta(days=30)):
        assert await start_due(clean_app, later) == []
    row = await export_row(clean_app, export_id)
    assert (row.error_counter, row.schedule_next_run) == (5, stopped_at)
    shown = await client.get(f"{E}{export_id}/", headers=auth(world.admin))
    assert shown.json()["error_counter"] == 5
    # Any change (here by another user with the settings permission, who then owns it)
    # starts it again; that user leaves too, so the restarted run fails once more.
    chief = await member(
        factory, world, event_permissions=["event.settings.general:write", "event.orders:read"]
    )
    patched = await client.patch(
        f"{E}{export_id}/", json={"mail_subject": "Again"}, headers=as_user(chief)
    )
    assert patched.status_code == 200 and patched.json()["error_counter"] == 0
    assert patched.json()["owner"] == chief.email
    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(delete(team_members).where(team_members.c.user_id == chief.id))
        await session.commit()
    row = await export_row(clean_app, export_id)
    [job] = await run_due(clean_app, row.schedule_next_run + dt.timedelta(seconds=30))
    assert job.status == "failed"
    assert (await export_row(clean_app, export_id)).error_counter == 1
    assert await mails(clean_app) == []


async def test_a_success_resets_the_counter(clean_app, background, factory, world: World):
    owner = await member(factory, world)
    now = dt.datetime(2025, 6, 1, 10, tzinfo=UTC)
    export_id = await add_export(
        clean_app, owner, world.event, schedule_next_run=now, error_counter=4
    )
    [job] = await run_due(clean_app, now)
    assert job.status == "finished"
    assert (await export_row(clean_app, export_id)).error_counter == 0


async def test_an_unexpected_error_counts_once_per_job(
    clean_app, background, factory, world: World, monkeypatch
):
    monkeypatch.setattr("admit.jobs.runner.ERROR_BACKOFF_SECONDS", 0.01)
    owner = await member(factory, world)
    now = dt.datetime(2025, 6, 1, 10, tzinfo=UTC)
    export_id = await add_export(
        clean_app, owner, world.event, export_identifier="test_broken", schedule_next_run=now
    )
    [job] = await run_due(clean_app, now)
    assert job.status == "failed" and job.attempts == tasks.MAX_ATTEMPTS
    assert job.input["outcome"] == "failed"
    assert (await export_row(clean_app, export_id)).error_counter == 1


async def test_a_run_whose_worker_died_counts_at_the_next_claim(clean_app, factory, world: World):
    owner = await member(factory, world)
    now = dt.datetime(2025, 6, 1, 10, tzinfo=UTC)
    export_id = await add_export(
        clean_app, owner, world.event, schedule_next_run=now, error_counter=4
    )
    [job_id] = await start_due(clean_app, now)
    # Not due yet, and its job still runs: nothing starts.
    assert await start_due(clean_app, now + dt.timedelta(days=1, hours=1)) == []
    async with clean_app.state.db.sessionmaker() as session:
        # The sweep failed it after its worker died on the last attempt: no outcome recorded.
        await session.execute(update(Job).where(Job.id == job_id).values(status="failed"))
        await session.commit()
    assert await start_due(clean_app, now + dt.timedelta(days=1, hours=1)) == []
    row = await export_row(clean_app, export_id)
    assert row.error_counter == 5 and row.job_id == job_id


async def test_a_missed_run_runs_once(clean_app, factory, world: World):
    owner = await member(factory, world)
    now = dt.datetime(2025, 6, 1, 10, tzinfo=UTC)
    export_id = await add_export(clean_app, owner, world.event, schedule_next_run=now)
    # The scheduler was down for three days.
    later = now + dt.timedelta(days=3, hours=2)
    assert len(await start_due(clean_app, later)) == 1
    row = await export_row(clean_app, export_id)
    assert row.schedule_next_run == dt.datetime(2025, 6, 5, 9, tzinfo=UTC)


async def test_a_rule_at_its_end_has_no_next_run_after_the_last(clean_app, factory, world: World):
    owner = await member(factory, world)
    now = dt.datetime(2025, 1, 3, 9, 0, 30, tzinfo=UTC)
    export_id = await add_export(
        clean_app,
        owner,
        world.event,
        schedule_rrule="DTSTART:20250101T000000\nRRULE:FREQ=DAILY;COUNT=3",
        schedule_next_run=dt.datetime(2025, 1, 3, 9, tzinfo=UTC),
    )
    assert len(await start_due(clean_app, now)) == 1
    assert (await export_row(clean_app, export_id)).schedule_next_run is None
    assert await start_due(clean_app, now + dt.timedelta(days=400)) == []


async def test_two_schedulers_start_one_run(clean_app, factory, world: World):
    owner = await member(factory, world)
    now = dt.datetime(2025, 6, 1, 10, tzinfo=UTC)
    ids = [await add_export(clean_app, owner, world.event, schedule_next_run=now) for _ in range(5)]
    started = await asyncio.gather(*(start_due(clean_app, now) for _ in range(4)))
    assert sorted(job for jobs in started for job in jobs) == sorted(
        [(await export_row(clean_app, i)).job_id for i in ids]
    )
    async with clean_app.state.db.sessionmaker() as session:
        kinds = list(await session.scalars(select(Job.kind)))
    assert kinds == [tasks.RUN_KIND] * 5


async def test_a_claim_racing_another_finds_it_taken(clean_app, factory, world: World):
    """Deterministic: the second claim reads the export before the first commits, then
    waits for it (PostgreSQL: the row lock; SQLite: the write lock) and matches nothing."""
    owner = await member(factory, world)
    now = dt.datetime(2025, 6, 1, 10, tzinfo=UTC)
    export_id = await add_export(clean_app, owner, world.event, schedule_next_run=now)
    db = clean_app.state.db
    async with db.sessionmaker() as first, db.sessionmaker() as second:
        if not db.is_sqlite:
            seen = await second.get(ScheduledExport, export_id)  # read before the first claim
            assert seen.job_id is None
        won = await tasks.claim(first, export_id, now)
        assert won is not None
        racing = asyncio.ensure_future(_claim_and_commit(second, export_id, now))
        await asyncio.sleep(0.2)
        assert not racing.done() or db.is_sqlite
        await commit_and_notify(first)
        lost = await racing
    assert lost is None
    row = await export_row(clean_app, export_id)
    assert row.job_id == won
    async with db.sessionmaker() as session:
        assert list(await session.scalars(select(Job.id))) == [won]


async def _claim_and_commit(session: Any, export_id: int, now: dt.datetime) -> int | None:
    job_id = await tasks.claim(session, export_id, now)
    await commit_and_notify(session)
    return job_id


def _body() -> dict[str, Any]:
    from tests.scheduled_exports.conftest import body

    return body()


async def test_the_scheduler_runs_the_task_every_minute(clean_app, factory, world: World):
    from admit.jobs.queue import KINDS
    from admit.jobs.runtime import periodic_tasks
    from admit.jobs.scheduler import Scheduler

    parts = clean_app.state.background
    task = next(
        t
        for t in periodic_tasks(parts.settings, parts.store)
        if t.name == "scheduled_exports.start_due"
    )
    assert (task.interval_seconds, task.run) == (tasks.INTERVAL_SECONDS, tasks.start_due)
    assert KINDS[tasks.RUN_KIND].keep_hours == tasks.KEEP_HOURS
    owner = await member(factory, world)
    now = dt.datetime(2025, 6, 1, 10, tzinfo=UTC)
    export_id = await add_export(clean_app, owner, world.event, schedule_next_run=now)
    # Two schedulers ticking at the same simulated minute: one runs the task.
    first, second = (Scheduler(clean_app.state.db, [task], owner=n) for n in ("a", "b"))
    await first._ensure_rows()
    ran = [await s.tick(now + dt.timedelta(seconds=5)) for s in (first, second)]
    assert sorted(len(r) for r in ran) == [0, 1]
    row = await export_row(clean_app, export_id)
    assert row.job_id is not None and row.schedule_next_run == now + dt.timedelta(days=1, hours=-1)
