"""``admit worker``, ``admit scheduler`` and ``admit jobs list|show|retry|ping``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import typer
from rich.table import Table
from sqlalchemy import or_, select, update

from admit.config import Settings
from admit.console import console, run_work
from admit.db import Database, create_database, utcnow
from admit.models import JOB_STATUSES, Job

jobs_app = typer.Typer(help="Inspect and retry background jobs.", no_args_is_help=True)


# Start and stop lines of ``admit worker`` / ``admit scheduler``: a few a run, always logged
# (as ``admit.serving`` is for the server); everything else at ``ADMIT_LOG_LEVEL``.
LIFECYCLE = "admit.jobs.lifecycle"


def configure_logging(settings: Settings) -> None:
    """The server's logging (``ADMIT_LOG_LEVEL``, ``ADMIT_LOG_FORMAT``, secrets scrubbed)."""
    from admit.kit.http.logs import configure_logging as configure

    configure(settings)
    logging.getLogger(LIFECYCLE).setLevel(logging.INFO)


async def _until_signalled(work: Callable[[], Awaitable[None]]) -> None:
    """Runs ``work`` until SIGTERM or SIGINT, then cancels it (running jobs go back to
    waiting; a killed process's jobs come back when their lease runs out)."""
    task = asyncio.create_task(work())
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task


def worker(concurrency: int | None) -> None:
    from admit.jobs.runtime import Background

    settings = Settings()
    if not settings.resolved_broker_url:
        console.print(
            "[red]No broker is configured (ADMIT_REDIS_URL or ADMIT_BROKER_URL).[/red] Without "
            "one, jobs run inside `admit serve` and no worker is needed."
        )
        raise typer.Exit(1)
    configure_logging(settings)

    async def work() -> None:
        # A connection for every job in flight and its heartbeat: a smaller pool would open
        # and close its overflow connections all the time.
        slots = (concurrency or settings.job_concurrency) + 4
        db = create_database(
            settings.resolved_database_url, pool_size=max(settings.db_pool_size, slots)
        )
        parts = Background(
            settings, db, broker_url=settings.resolved_broker_url, concurrency=concurrency
        )
        logging.getLogger(LIFECYCLE).info(
            "worker %s: %d jobs at once", parts.engine.worker, parts.engine.concurrency
        )
        try:
            await parts.engine.work()
        finally:
            await db.dispose()

    run_work(_until_signalled(work))


def scheduler() -> None:
    from admit.jobs.runtime import Background

    settings = Settings()
    configure_logging(settings)

    async def work() -> None:
        db = create_database(settings.resolved_database_url, pool_size=2)
        parts = Background.for_settings(settings, db)
        if parts.embedded:
            logging.getLogger("admit.scheduler").warning(
                "no broker configured: jobs this scheduler sends wait for a server or worker "
                "of this database to pick them up"
            )
        logging.getLogger(LIFECYCLE).info("scheduler started")
        try:
            async with parts.serving(scheduler=True):
                await asyncio.Event().wait()
        finally:
            await db.dispose()

    run_work(_until_signalled(work))


async def _with_db(work: Callable[[Database], Awaitable[Any]]) -> Any:
    db = create_database(Settings().resolved_database_url, pool_size=2)
    try:
        return await work(db)
    finally:
        await db.dispose()


def _by_id(value: str) -> Any:
    return or_(Job.uuid == value, Job.id == int(value)) if value.isdigit() else Job.uuid == value


@jobs_app.command("list")
def list_jobs(
    status: Annotated[str | None, typer.Option(help="waiting, running, finished or failed")] = None,
    kind: Annotated[str | None, typer.Option(help="Only jobs of this kind.")] = None,
    limit: Annotated[int, typer.Option(help="At most this many, newest first.")] = 50,
) -> None:
    """List jobs, newest first, and how many there are per status."""
    if status is not None and status not in JOB_STATUSES:
        raise typer.BadParameter(f"status must be one of {', '.join(JOB_STATUSES)}")

    async def work(db: Database) -> tuple[list[Any], dict[str, int]]:
        from sqlalchemy import func

        query = select(Job).order_by(Job.id.desc()).limit(max(1, limit))
        if status:
            query = query.where(Job.status == status)
        if kind:
            query = query.where(Job.kind == kind)
        async with db.sessionmaker() as session:
            rows = list((await session.execute(query)).scalars())
            counts = select(Job.status, func.count()).group_by(Job.status)
            return rows, dict((await session.execute(counts)).all())  # type: ignore[arg-type]

    rows, counts = run_work(_with_db(work))
    table = Table("id", "uuid", "kind", "status", "%", "attempts", "created", "message")
    for job in rows:
        table.add_row(
            str(job.id),
            job.uuid,
            job.kind,
            job.status,
            "" if job.percentage is None else str(job.percentage),
            f"{job.attempts}/{job.max_attempts}",
            job.created.isoformat(timespec="seconds"),
            (job.message or "")[:60],
        )
    console.print(table)
    console.print(", ".join(f"{s}: {counts.get(s, 0)}" for s in JOB_STATUSES))


@jobs_app.command("show")
def show_job(job: Annotated[str, typer.Argument(help="The job's id or uuid.")]) -> None:
    """Show everything about one job."""

    async def work(db: Database) -> Job | None:
        async with db.sessionmaker() as session:
            return (await session.execute(select(Job).where(_by_id(job)))).scalar_one_or_none()

    row = run_work(_with_db(work))
    if row is None:
        console.print(f"[red]No job {job}.[/red]")
        raise typer.Exit(1)
    for column in Job.__table__.columns:
        if column.key != "secret":
            print(f"{column.key}: {getattr(row, column.key)}")


@jobs_app.command("retry")
def retry_job(job: Annotated[str, typer.Argument(help="The job's id or uuid.")]) -> None:
    """Run a failed job again, with its attempts counted from zero."""

    async def work(db: Database) -> int:
        async with db.sessionmaker() as session:
            result = await session.execute(
                update(Job)
                .where(_by_id(job), Job.status == "failed")
                .values(
                    status="waiting",
                    attempts=0,
                    message=None,
                    finished=None,
                    expires=None,
                    run_after=utcnow(),
                    enqueued_at=None,
                )
            )
            await session.commit()
            return result.rowcount  # type: ignore[attr-defined]

    if not run_work(_with_db(work)):
        console.print(f"[red]No failed job {job}.[/red]")
        raise typer.Exit(1)
    print(f"Job {job} waits again; the next sweep of a scheduler hands it to a worker.")


@jobs_app.command("ping")
def ping(
    timeout: Annotated[float, typer.Option(help="Seconds to wait for a worker.")] = 30.0,
) -> None:
    """Send a no-op job and wait until a worker (or an embedded server) ran it."""
    from admit.jobs.queue import enqueue
    from admit.jobs.runtime import Background
    from admit.kit.http.transaction import commit_and_notify

    settings = Settings()

    async def work(db: Database) -> tuple[str, float] | None:
        parts = Background(settings, db, broker_url=settings.resolved_broker_url)
        if parts.embedded:
            # No broker to hand it to: the next sweep of a running server's scheduler sends
            # it to that server.
            started = time.monotonic()
            async with db.sessionmaker() as session:
                job_id, _ = await enqueue(session, "noop", hand_over=False)
                await commit_and_notify(session)
        else:
            await parts.engine.start()
            started = time.monotonic()
            async with db.sessionmaker() as session:
                job_id, _ = await enqueue(session, "noop")
                await commit_and_notify(session)
            await parts.engine.stop()
        while time.monotonic() - started < timeout:
            async with db.sessionmaker() as session:
                job = await session.get(Job, job_id)
                if job is not None and job.status in ("finished", "failed"):
                    return job.status, time.monotonic() - started
            await asyncio.sleep(0.05)
        return None

    answer = run_work(_with_db(work))
    if answer is None:
        console.print(f"[red]No worker ran the job within {timeout:g} s.[/red]")
        raise typer.Exit(1)
    print(f"A job was {answer[0]} {answer[1] * 1000:.0f} ms after it was sent.")
