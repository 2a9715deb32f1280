"""``admit mail list|show|retry`` against the test database."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import update
from typer.testing import CliRunner

from admit.mail.cli import mail_app
from admit.models import OutgoingMail
from tests.mail.conftest import mail_row, queue


@pytest.fixture
def invoke(database_url, monkeypatch):
    monkeypatch.setenv("ADMIT_DATABASE_URL", database_url)
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()

    async def run(*args: str):
        # The commands run their own event loop: off this one's thread.
        return await asyncio.to_thread(runner.invoke, mail_app, list(args))

    return run


async def test_list_show_and_retry(clean_app, invoke):
    sent, _ = await queue(clean_app, to=["a@example.org"], subject="Welcome aboard")
    failed, failed_job = await queue(
        clean_app,
        to=["b@example.org"],
        cc=["c@example.org"],
        subject="Your tickets",
        body="Here are your [bold]tickets[/bold].\n",
        html="<p>Here</p>",
        attachments=[{"key": "mail/t/1.pdf", "filename": "tickets.pdf"}],
    )
    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(
            update(OutgoingMail).where(OutgoingMail.id == sent).values(status="sent")
        )
        await session.execute(
            update(OutgoingMail)
            .where(OutgoingMail.id == failed)
            .values(status="failed", attempts=1, error="550 5.1.1 No such user here")
        )
        await session.commit()

    listed = await invoke("list")
    assert listed.exit_code == 0, listed.output
    assert "Welcome aboard" in listed.stdout and "Your tickets" in listed.stdout
    assert listed.stdout.index("Your tickets") < listed.stdout.index("Welcome aboard")
    assert "queued: 0, sent: 1, failed: 1" in listed.stdout
    only_failed = await invoke("list", "--status", "failed", "--limit", "5")
    assert "Your tickets" in only_failed.stdout and "Welcome aboard" not in only_failed.stdout
    assert (await invoke("list", "--status", "lost")).exit_code == 2

    shown = await invoke("show", str(failed))
    assert shown.exit_code == 0, shown.output
    for line in (
        "To: b@example.org",
        "Cc: c@example.org",
        "Subject: Your tickets",
        "Status: failed (attempts: 1",
        "Error: 550 5.1.1 No such user here",
        "Attachments: tickets.pdf",
        "Here are your [bold]tickets[/bold].",
    ):
        assert line in shown.stdout
    missing = await invoke("show", "999999")
    assert missing.exit_code == 1 and "No mail 999999" in missing.output

    assert (await invoke("retry", str(sent))).exit_code == 1
    retried = await invoke("retry", str(failed))
    assert retried.exit_code == 0, retried.output
    mail = await mail_row(clean_app, failed)
    assert (mail.status, mail.error, mail.attempts) == ("queued", None, 0)
    assert mail.job_id not in (None, failed_job)
