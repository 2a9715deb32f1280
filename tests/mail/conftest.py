"""A real SMTP server (aiosmtpd) on 127.0.0.1 for the mail tests, and helpers that drive mail
jobs to their end."""

from __future__ import annotations

import asyncio
import datetime as dt
import email
import email.policy
import time
from collections.abc import Iterator
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select

from admit.db import utcnow
from admit.jobs import sweep as jobsweep
from admit.kit.http.transaction import commit_and_notify
from admit.mail.outbox import queue_mail
from admit.models import Job, OutgoingMail
from tests.live import free_port


class Mailbox:
    """An aiosmtpd handler that keeps what it accepted and misbehaves when told to."""

    def __init__(self) -> None:
        self.url = ""
        self.envelopes: list[Any] = []
        self.temporary_failures = 0  # answer 451 to the next N messages
        self.refused: set[str] = set()  # answer 550 to these recipients
        self.stall = 0.0  # sit on each message this long, then answer 451

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.refused:
            return "550 5.1.1 No such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.stall:
            await asyncio.sleep(self.stall)
            return "451 4.4.2 Too slow"
        if self.temporary_failures > 0:
            self.temporary_failures -= 1
            return "451 4.3.0 try later"
        self.envelopes.append(envelope)
        return "250 Message accepted for delivery"

    @property
    def messages(self) -> list[EmailMessage]:
        """The accepted messages as a mail client reads them (local line endings)."""
        return [
            email.message_from_bytes(  # type: ignore[misc]
                e.content.replace(b"\r\n", b"\n"), policy=email.policy.default
            )
            for e in self.envelopes
        ]


@pytest.fixture
def mailbox() -> Iterator[Mailbox]:
    box = Mailbox()
    port = free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    box.url = f"smtp://127.0.0.1:{port}?timeout=5"
    try:
        yield box
    finally:
        controller.stop()


@pytest.fixture
def smtp(clean_app, mailbox: Mailbox) -> Iterator[Mailbox]:
    """The app's settings point at the mailbox, with retries after a few milliseconds."""
    settings = clean_app.state.settings
    saved = settings.smtp_url, settings.mail_retry_seconds
    settings.smtp_url = mailbox.url
    settings.mail_retry_seconds = 0.02
    try:
        yield mailbox
    finally:
        settings.smtp_url, settings.mail_retry_seconds = saved


async def queue(app: Any, **kw: Any) -> tuple[int, int]:
    """A mail queued in a committed transaction (as a request queues it): (mail id, job id)."""
    kw.setdefault("to", ["someone@example.org"])
    kw.setdefault("subject", "Hello")
    kw.setdefault("body", "Hello there.\n")
    async with app.state.db.sessionmaker() as session:
        mail = await queue_mail(session, **kw)
        ids = mail.id, mail.job_id
        await commit_and_notify(session)
    assert ids[1] is not None
    return ids  # type: ignore[return-value]


async def mail_row(app: Any, mail_id: int) -> OutgoingMail:
    async with app.state.db.sessionmaker() as session:
        mail = await session.get(OutgoingMail, mail_id)
        assert mail is not None
        return mail


async def job_row(app: Any, job_id: int) -> Job:
    async with app.state.db.sessionmaker() as session:
        job = await session.get(Job, job_id)
        assert job is not None
        return job


async def all_rows(app: Any, model: Any) -> list[Any]:
    async with app.state.db.sessionmaker() as session:
        return list((await session.scalars(select(model).order_by(model.id))).all())


async def sweep(app: Any, now: dt.datetime | None = None) -> dict[str, int]:
    parts = app.state.background
    return await jobsweep.run_in_session(
        app.state.db, lambda s: jobsweep.sweep(s, now or utcnow(), parts.settings, parts.store)
    )


async def settle(app: Any, job_id: int, seconds: float = 15) -> Job:
    """Runs the job to its end with the embedded engine: waits for the runs, and sweeps when a
    retry is due (the sweep hands it to the broker again)."""
    engine = app.state.background.engine
    deadline = time.monotonic() + seconds
    while True:
        await engine.broker.wait_all()
        job = await job_row(app, job_id)
        if job.status in ("finished", "failed"):
            return job
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} is still {job.status}: {job.message}")
        if job.status == "waiting" and job.run_after <= utcnow():
            await sweep(app)
        else:
            await asyncio.sleep(0.01)
