"""What runs background work in a process: the file store, the job engine and the scheduler.

Embedded mode (no broker URL): the server process hands jobs to itself and runs the
scheduler. At scale: API processes only hand jobs to the broker, ``admit worker`` processes
run them, ``admit scheduler`` processes run the periodic work (each task once per period).

The engine imports no package's job kinds or periodic tasks: each package registers its own
(``jobs.queue.job_kind``, ``jobs.scheduler.periodic``) at import, and the entries that start
background work (``app.py``, the ``admit worker`` and ``admit scheduler`` commands) import them
all through ``admit/all_tasks.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncSession

from admit.config import Settings
from admit.db import Database
from admit.jobs import diagnostic as _diagnostic  # noqa: F401  (the engine's own kind)
from admit.jobs import sweep as jobsweep
from admit.jobs.queue import DEFAULT_TIME_LIMIT, KINDS
from admit.jobs.runner import JobEngine
from admit.jobs.scheduler import PERIODIC, PeriodicTask, Scheduler
from admit.jobs.storage import FileStore
from admit.jobs.stores import open_store
from admit.kit.idempotency.store import purge_expired as purge_idempotency_keys


def periodic_tasks(settings: Settings, store: FileStore) -> list[PeriodicTask]:
    """The engine's own periodic work, then every registered package's
    (:func:`admit.jobs.scheduler.periodic`)."""

    async def sweep(session: AsyncSession, now: dt.datetime) -> None:
        await jobsweep.sweep(session, now, settings, store)

    async def sweep_files(_session: AsyncSession, _now: dt.datetime) -> None:
        # A partial file older than the longest run any job may take has no writer left.
        longest = max((kind.time_limit for kind in KINDS.values()), default=DEFAULT_TIME_LIMIT)
        await jobsweep.remove_partial_files(store, longest + 2 * settings.job_lease_seconds)

    return [
        PeriodicTask("jobs.sweep", settings.job_sweep_seconds, sweep),
        PeriodicTask("files.remove_partials", 600, sweep_files),
        PeriodicTask("idempotency.purge", 600, purge_idempotency_keys),
        *(task for factory in PERIODIC for task in factory(settings, store)),
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
