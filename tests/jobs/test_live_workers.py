"""Acceptance on real processes: a job survives ``kill -9`` of its worker, and two schedulers
on one database run each periodic task once per period."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import threading
import time
from urllib.parse import urlparse

import pytest
from aiosmtpd.controller import Controller

from admit.jobs.queue import enqueue
from admit.jobs.runtime import Background
from admit.kit.http.transaction import commit_and_notify
from admit.mail.outbox import queue_mail
from admit.models import OutgoingMail
from tests.jobs.conftest import LiveJobs
from tests.live import free_port
from tests.mail.conftest import Mailbox
from tests.parts import missing


async def _enqueue(live: LiveJobs, kind: str, input: dict) -> int:
    async with live.db.sessionmaker() as session:
        job_id, _ = await enqueue(session, kind, input)
        await commit_and_notify(session)
    return job_id


async def _wait(live: LiveJobs, job_id: int, statuses: tuple[str, ...], seconds: float = 30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        async with live.db.sessionmaker() as session:
            from admit.models import Job

            job = await session.get(Job, job_id)
        if job is not None and job.status in statuses:
            return job
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id} not {statuses} within {seconds} s: {job.status}")


async def test_a_job_survives_kill_9_of_its_worker(live_jobs: LiveJobs):
    live = live_jobs
    first = live.processes.start("worker", "--concurrency", "2", name="worker-1")
    live.processes.start("scheduler", name="scheduler")
    job_id = await _enqueue(live, "noop", {"seconds": 3})
    job = await _wait(live, job_id, ("running",))
    doomed = job.worker
    live.processes.kill(first)  # mid-run: no chance to give the job back
    live.processes.start("worker", name="worker-2")
    job = await _wait(live, job_id, ("finished", "failed"), seconds=40)
    assert job.status == "finished", job.message
    assert job.attempts == 2 and job.worker != doomed
    assert f"job {job_id}: its worker stopped" in live.processes.log("scheduler")

    # A job whose every worker dies ends failed with a message, never running for ever.
    async with live.db.sessionmaker() as session:
        from sqlalchemy import update

        from admit.models import Job

        victim = await _enqueue(live, "noop", {"seconds": 30})
        await session.execute(update(Job).where(Job.id == victim).values(max_attempts=1))
        await session.commit()
    job = await _wait(live, victim, ("running",))
    survivor = next(p for p in live.processes.started if p.args[-1:] == ["worker"])
    live.processes.kill(survivor)
    job = await _wait(live, victim, ("finished", "failed"), seconds=40)
    assert job.status == "failed" and "no attempts are left" in job.message


async def test_many_jobs_are_shared_by_two_workers(live_jobs: LiveJobs):
    live = live_jobs
    live.processes.start("worker", name="worker-a")
    live.processes.start("worker", name="worker-b")
    ids = [await _enqueue(live, "noop", {"seconds": 0.3}) for _ in range(20)]
    jobs = [await _wait(live, i, ("finished",)) for i in ids]
    workers = {j.worker for j in jobs}
    assert len(workers) == 2, workers  # both took part
    assert all(j.attempts == 1 for j in jobs)
    ping = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "admit", "jobs", "ping", "--timeout", "20"],
        env=live.processes.env,
        capture_output=True,
        text=True,
    )
    assert ping.returncode == 0, ping.stdout + ping.stderr
    assert "A job was finished" in ping.stdout


async def test_two_schedulers_run_a_periodic_task_once_per_period(live_jobs: LiveJobs):
    live = live_jobs
    live.processes.start("scheduler", name="scheduler-a")
    live.processes.start("scheduler", name="scheduler-b")
    pattern = re.compile(r"periodic task jobs\.sweep ran for period (\d+) on (\S+)")

    def sweeps() -> list[tuple[str, str]]:
        return [
            m
            for name in ("scheduler-a", "scheduler-b")
            for m in pattern.findall(live.processes.log(name))
        ]

    # Six seconds of sweeps once both run (a busy machine takes seconds to start a process).
    for _wait in range(120):
        if len({owner for _, owner in sweeps()}) == 2:
            break
        await asyncio.sleep(0.5)
    await asyncio.sleep(6)
    live.processes.stop_all()
    runs = sweeps()
    periods = [int(p) for p, _ in runs]
    assert len(periods) >= 6, runs  # sweeps every 0.5 s
    assert len(set(periods)) == len(periods), "a period ran twice"
    assert len({owner for _, owner in runs}) == 2, "both schedulers took part"


class _StallingMailbox(Mailbox):
    """Keeps the first delivery waiting at RCPT (its worker is killed meanwhile, so that
    message never reaches DATA); later deliveries go through."""

    def __init__(self) -> None:
        super().__init__()
        self.first_waiting = threading.Event()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if not self.first_waiting.is_set():
            self.first_waiting.set()
            await asyncio.sleep(20)
        return await super().handle_RCPT(server, session, envelope, address, rcpt_options)


async def test_a_mail_is_delivered_exactly_once_across_a_worker_crash(live_jobs: LiveJobs):
    live = live_jobs
    box = _StallingMailbox()
    port = free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        live.processes.env["ADMIT_SMTP_URL"] = f"smtp://127.0.0.1:{port}?timeout=30"
        first = live.processes.start("worker", name="worker-1")
        live.processes.start("scheduler", name="scheduler")
        async with live.db.sessionmaker() as session:
            mail = await queue_mail(
                session, to=["guest@example.org"], subject="Your ticket", body="See you!"
            )
            mail_id, job_id, message_id = mail.id, mail.job_id, mail.message_id
            await commit_and_notify(session)
        assert await asyncio.to_thread(box.first_waiting.wait, 30)
        live.processes.kill(first)  # in the middle of the SMTP conversation
        live.processes.start("worker", name="worker-2")
        job = await _wait(live, job_id, ("finished", "failed"), seconds=40)
        assert job.status == "finished" and job.attempts == 2, job.message
        async with live.db.sessionmaker() as session:
            sent = await session.get(OutgoingMail, mail_id)
        assert sent.status == "sent" and sent.attempts == 1
        await asyncio.sleep(1)  # nothing else arrives
        assert len(box.envelopes) == 1
        assert box.messages[0]["Message-ID"] == message_id
        assert box.envelopes[0].rcpt_tos == ["guest@example.org"]
    finally:
        controller.stop()


AMQP_URL = os.environ.get("ADMIT_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/")


def _amqp_reachable() -> bool:
    parsed = urlparse(AMQP_URL)
    try:
        with socket.create_connection((parsed.hostname, parsed.port or 5672), timeout=1):
            return True
    except OSError:
        return False


async def test_rabbitmq_carries_jobs_to_workers(live_jobs: LiveJobs):
    if not _amqp_reachable():
        pytest.skip(missing("RabbitMQ", f"not reachable at {AMQP_URL}"))
    live = live_jobs
    live.processes.env["ADMIT_BROKER_URL"] = AMQP_URL
    live.processes.start("worker", name="worker-amqp")
    producer = Background(live.settings, live.db, broker_url=AMQP_URL)
    await producer.engine.start()
    try:
        ids = [await _enqueue(live, "noop", {"result": str(n)}) for n in range(5)]
        jobs = [await _wait(live, i, ("finished", "failed")) for i in ids]
        assert [j.status for j in jobs] == ["finished"] * 5
        assert len({j.worker for j in jobs}) == 1
    finally:
        await producer.engine.stop()
        import aio_pika

        connection = await aio_pika.connect(AMQP_URL)
        async with connection:
            channel = await connection.channel()
            await channel.queue_delete(live.settings.job_queue)
            await channel.exchange_delete(live.settings.job_queue)
