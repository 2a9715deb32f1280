"""What runs background work in a process: the file store, the job engine and the scheduler.

Embedded mode (no broker URL): the server process hands jobs to itself and runs the
scheduler. At scale: API processes only hand jobs to the broker, ``admit worker`` processes
run them, ``admit scheduler`` processes run the periodic work (each task once per period).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncSession

from admit.config import Settings
from admit.db import Database
from admit.jobs import sweep as jobsweep
from admit.jobs.queue import DEFAULT_TIME_LIMIT, KINDS
from admit.jobs.runner import JobEngine
from admit.jobs.scheduler import PeriodicTask, Scheduler
from admit.jobs.storage import FileStore, open_store


def load_job_kinds() -> None:
    """Imports every module that registers a job kind (a worker must know them all)."""
    import admit.exports.tasks
    import admit.jobs.diagnostic
    import admit.mail.tasks
    import admit.scheduled_exports.tasks
    import admit.shredders.tasks
    import admit.tickets.tasks
    import admit.webhooks.delivery  # noqa: F401


def periodic_tasks(settings: Settings, store: FileStore) -> list[PeriodicTask]:
    from admit.carts.service import purge_expired
    from admit.checkin.exits import exit_all
    from admit.kit.idempotency.store import purge_expired as purge_idempotency_keys
    from admit.mail.tasks import requeue_held_mails
    from admit.notifications.retention import purge_old_notifications
    from admit.scheduled_exports import tasks as scheduled_exports
    from admit.sendmail import tasks as sendmail
    from admit.uploads.service import purge_expired as purge_uploads
    from admit.waitinglist import auto as waitinglist_auto
    from admit.webhooks.tasks import periodic_tasks as webhook_tasks

    async def sweep(session: AsyncSession, now: dt.datetime) -> None:
        await jobsweep.sweep(session, now, settings, store)

    async def sweep_files(_session: AsyncSession, _now: dt.datetime) -> None:
        # A partial file older than the longest run any job may take has no writer left.
        longest = max((kind.time_limit for kind in KINDS.values()), default=DEFAULT_TIME_LIMIT)
        await jobsweep.remove_partial_files(store, longest + 2 * settings.job_lease_seconds)

    return [
        PeriodicTask("jobs.sweep", settings.job_sweep_seconds, sweep),
        PeriodicTask("files.remove_partials", 600, sweep_files),
        *webhook_tasks(),
        PeriodicTask("carts.purge_expired", 60, purge_expired),
        PeriodicTask("checkin.exit_all", 60, exit_all),
        PeriodicTask(
            "waitinglist.assign", waitinglist_auto.INTERVAL_SECONDS, waitinglist_auto.assign_all
        ),
        PeriodicTask(
            "mail.requeue_held", 60, functools.partial(requeue_held_mails, settings=settings)
        ),
        PeriodicTask("notifications.purge", 3600, purge_old_notifications),
        PeriodicTask("idempotency.purge", 600, purge_idempotency_keys),
        PeriodicTask("scheduled_exports.start_due", 60, scheduled_exports.start_due),
        PeriodicTask("uploads.purge", 3600, functools.partial(purge_uploads, store=store)),
        PeriodicTask(
            "sendmail.rules",
            sendmail.INTERVAL_SECONDS,
            functools.partial(sendmail.send_due, base_url=settings.base_url),
        ),
    ]


class Background:
    """The background parts of one process, built from the settings."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        *,
        broker_url: str | None = None,
        concurrency: int | None = None,
    ) -> None:
        load_job_kinds()
        self.settings = settings
        self.db = db
        self.store = open_store(settings.storage_url, settings.files_dir)
        self.engine = JobEngine(
            db, self.store, settings, broker_url=broker_url, concurrency=concurrency
        )
        self.scheduler = Scheduler(
            db,
            periodic_tasks(settings, self.store),
            owner=self.engine.worker,
            lease_seconds=max(60.0, settings.job_lease_seconds),
        )

    @classmethod
    def for_settings(cls, settings: Settings, db: Database) -> Background:
        return cls(settings, db, broker_url=settings.resolved_broker_url)

    @property
    def embedded(self) -> bool:
        return self.engine.embedded

    @contextlib.asynccontextmanager
    async def serving(self, *, scheduler: bool) -> AsyncIterator[None]:
        """Hands committed jobs to the broker (and, embedded, runs them here); with
        ``scheduler``, runs the periodic work too."""
        await self.engine.start()
        task = asyncio.create_task(self.scheduler.run_forever()) if scheduler else None
        try:
            yield
        finally:
            if task is not None:
                await self.scheduler.stop(task)
            await self.engine.stop()
