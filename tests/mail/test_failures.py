"""Refusals and outages: temporary ones are retried with backoff, permanent ones fail the mail
with the server's answer; one broken mail never keeps another from going out."""

from __future__ import annotations

from sqlalchemy import update

from admit.db import utcnow
from admit.mail.tasks import MAX_ATTEMPTS, requeue_held_mails
from admit.models import Job
from tests.mail.conftest import Mailbox, job_row, mail_row, queue, settle


async def test_two_temporary_refusals_then_delivered_on_the_third_attempt(
    clean_app, background, smtp: Mailbox
):
    smtp.temporary_failures = 2
    mail_id, job_id = await queue(clean_app, to=["later@example.org"])
    await background.engine.broker.wait_all()
    mail = await mail_row(clean_app, mail_id)
    assert (mail.status, mail.attempts, mail.error) == ("queued", 1, "451 4.3.0 try later")
    job = await job_row(clean_app, job_id)
    assert (job.status, job.message) == ("waiting", "451 4.3.0 try later")
    assert job.run_after > job.started  # it waits for its backoff

    job = await settle(clean_app, job_id)
    assert (job.status, job.attempts) == ("finished", 3)
    mail = await mail_row(clean_app, mail_id)
    assert (mail.status, mail.attempts, mail.error) == ("sent", 3, None)
    assert len(smtp.envelopes) == 1 and smtp.temporary_failures == 0


async def test_a_refused_recipient_fails_the_mail_and_others_still_go_out(
    clean_app, background, smtp: Mailbox
):
    smtp.refused = {"nobody@example.org"}
    bad_id, bad_job = await queue(clean_app, to=["nobody@example.org"], subject="Bad")
    good_id, good_job = await queue(clean_app, to=["somebody@example.org"], subject="Good")
    bad = await settle(clean_app, bad_job)
    good = await settle(clean_app, good_job)
    mail = await mail_row(clean_app, bad_id)
    assert mail.status == "failed" and mail.attempts == 1
    assert mail.error == "nobody@example.org: 550 5.1.1 No such user here"
    assert (bad.status, bad.message, bad.attempts) == ("failed", mail.error, 1)
    assert good.status == "finished"
    assert (await mail_row(clean_app, good_id)).status == "sent"
    assert [m["Subject"] for m in smtp.messages] == ["Good"]


async def test_one_refused_recipient_of_several_is_recorded_on_the_sent_mail(
    clean_app, background, smtp: Mailbox
):
    smtp.refused = {"nobody@example.org"}
    mail_id, job_id = await queue(clean_app, to=["nobody@example.org", "somebody@example.org"])
    job = await settle(clean_app, job_id)
    assert job.status == "finished" and "nobody@example.org: 550" in job.message
    mail = await mail_row(clean_app, mail_id)
    assert mail.status == "sent" and mail.error.startswith("Refused: nobody@example.org: 550")
    assert smtp.envelopes[0].rcpt_tos == ["somebody@example.org"]


async def test_a_lost_attachment_fails_its_mail_only(clean_app, background, smtp: Mailbox):
    lost = [{"key": "mail/tests/gone.pdf", "filename": "gone.pdf", "content_type": "x/y"}]
    mail_id, job_id = await queue(clean_app, attachments=lost)
    _, other_job = await queue(clean_app, subject="Fine")
    job = await settle(clean_app, job_id)
    message = "The attachment gone.pdf is missing from the file store."
    assert (job.status, job.message) == ("failed", message)
    assert (await mail_row(clean_app, mail_id)).error == message
    assert (await settle(clean_app, other_job)).status == "finished"
    assert [m["Subject"] for m in smtp.messages] == ["Fine"]


async def test_a_stalled_server_is_retried_and_the_last_attempt_fails_the_mail(
    clean_app, smtp: Mailbox
):
    # No engine runs: the test runs the job's attempts itself.
    smtp.stall = 2.0
    clean_app.state.settings.smtp_url = smtp.url.replace("timeout=5", "timeout=0.2")
    engine = clean_app.state.background.engine
    mail_id, job_id = await queue(clean_app)
    assert await engine.run(job_id)
    job = await job_row(clean_app, job_id)
    mail = await mail_row(clean_app, mail_id)
    assert job.status == "waiting" and "Timeout" in job.message
    assert (mail.status, mail.attempts, mail.error) == ("queued", 1, job.message)

    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(attempts=MAX_ATTEMPTS - 1, run_after=utcnow())
        )
        await session.commit()
    assert await engine.run(job_id)
    job = await job_row(clean_app, job_id)
    mail = await mail_row(clean_app, mail_id)
    assert job.status == "failed" and job.message.endswith("(no attempts left)")
    assert (mail.status, mail.attempts) == ("failed", 2) and "Timeout" in mail.error
    assert smtp.envelopes == []
    # A failed mail is no held mail: nothing sends it again by itself.
    async with clean_app.state.db.sessionmaker() as session:
        assert await requeue_held_mails(session, utcnow(), settings=clean_app.state.settings) == 0


async def test_the_job_of_a_sent_mail_sends_nothing_when_it_runs_again(
    clean_app, background, smtp: Mailbox
):
    mail_id, job_id = await queue(clean_app)
    assert (await settle(clean_app, job_id)).status == "finished"
    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(status="waiting", attempts=0, run_after=utcnow(), finished=None)
        )
        await session.commit()
    assert await background.engine.run(job_id)
    job = await job_row(clean_app, job_id)
    assert (job.status, job.message) == (
        "finished",
        "The mail is sent already; it is not sent again.",
    )
    assert len(smtp.envelopes) == 1
    assert (await mail_row(clean_app, mail_id)).attempts == 1


async def test_held_mails_go_out_once_a_server_is_configured(clean_app, background, smtp: Mailbox):
    settings = clean_app.state.settings
    settings.smtp_url = None
    first, first_job = await queue(clean_app, subject="First")
    second, _ = await queue(clean_app, subject="Second")
    await background.engine.broker.wait_all()
    assert (await job_row(clean_app, first_job)).status == "finished"

    async def requeue() -> int:
        from admit.jobs.sweep import run_in_session

        return await run_in_session(
            clean_app.state.db, lambda s: requeue_held_mails(s, utcnow(), settings=settings)
        )

    assert await requeue() == 0  # still no server: they stay held
    settings.smtp_url = smtp.url
    assert await requeue() == 2
    new_job = (await mail_row(clean_app, first)).job_id
    assert new_job != first_job
    await settle(clean_app, new_job)
    await settle(clean_app, (await mail_row(clean_app, second)).job_id)
    assert sorted(m["Subject"] for m in smtp.messages) == ["First", "Second"]
    assert await requeue() == 0
    await background.engine.broker.wait_all()
    assert len(smtp.envelopes) == 2


async def test_an_older_job_leaves_a_requeued_mail_to_its_newer_job(clean_app, smtp: Mailbox):
    # No engine runs: the jobs run in the order the test chooses.
    settings, engine = clean_app.state.settings, clean_app.state.background.engine
    settings.smtp_url = None
    mail_id, old_job = await queue(clean_app)
    assert await engine.run(old_job)
    settings.smtp_url = smtp.url
    async with clean_app.state.db.sessionmaker() as session:
        assert await requeue_held_mails(session, utcnow(), settings=settings) == 1
        await session.commit()
    new_job = (await mail_row(clean_app, mail_id)).job_id
    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(
            update(Job).where(Job.id == old_job).values(status="waiting", run_after=utcnow())
        )
        await session.commit()
    assert await engine.run(old_job)
    assert (await job_row(clean_app, old_job)).message == f"Job {new_job} delivers this mail now."
    assert smtp.envelopes == []
    assert await engine.run(new_job)
    assert (await job_row(clean_app, new_job)).status == "finished"
    assert len(smtp.envelopes) == 1
