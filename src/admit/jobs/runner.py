"""Running jobs: claims with leases, heartbeats, retries, and the sweep that reaps and re-sends.

A worker runs job N only after moving its row from ``waiting`` to ``running`` in one
conditional update that also sets a lease (``lease_until``); heartbeats extend the lease while
the handler runs. A job whose worker died keeps a lease that runs out: the sweep puts it back to
``waiting`` (or ``failed`` once its attempts are used up). Every later write of the worker is
conditional on still holding the job, so a worker that lost its lease (a long pause) cannot
overwrite what the job's next run did. The sweep also re-sends ``waiting`` rows that the broker
never delivered, hands retries to the broker when they are due, and deletes expired results.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
import shutil
import time
from collections.abc import AsyncIterator, Coroutine
from typing import Any

from sqlalchemy import select, update

from admit.db import Database, utcnow
from admit.jobs import native
from admit.jobs.broker import create_broker
from admit.jobs.claims import CLAIM, held_by
from admit.jobs.fairgate import FairGate
from admit.jobs.queue import _TMPDIR, KINDS, JobContext, JobFailed, RetryLater, attach_dispatcher
from admit.jobs.storage import FileStore
from admit.jobs.workdirs import TMP_ROOT, remove_stale_tmp, worker_name
from admit.kit.lanes.batching import Coalescer
from admit.models import Job

log = logging.getLogger("admit.jobs")

TASK_NAME = "admit.run_job"
# Unexpected errors are retried after 10 s, 20 s, 40 s ... (bounded by the kind's attempts).
ERROR_BACKOFF_SECONDS = 10.0
# Job ids per broker message: thousands of jobs enqueued together cost hundreds of messages.
MESSAGE_BATCH = 20
# How long jobs handed off "soon" are gathered before they go (see JobEngine.dispatch).
SOON_SECONDS = 0.2


class JobEngine:
    """A process's side of the job system: hands ids to the broker and, in a worker (or the
    embedded server), runs them."""

    def __init__(
        self,
        db: Database,
        store: FileStore,
        settings: Any,
        *,
        broker_url: str | None = None,
        concurrency: int | None = None,
    ) -> None:
        self.db = db
        self.store = store
        self.settings = settings
        self.lease = float(settings.job_lease_seconds)
        self.concurrency = concurrency or settings.job_concurrency
        self.embedded = broker_url is None
        self.broker = create_broker(
            broker_url,
            queue=settings.job_queue,
            lease_seconds=self.lease,
            prefetch=self.concurrency,
        )

        async def run_jobs(ids: list[int]) -> None:
            tenants = await self._tenants(ids)
            await asyncio.gather(*(self._run_gated(i, tenants.get(i)) for i in ids))

        self.task = self.broker.register_task(run_jobs, task_name=TASK_NAME)
        self.worker = worker_name()
        # Temporary files of this process's jobs, a directory per run (see remove_stale_tmp).
        self.tmp_root = TMP_ROOT / f"w{os.getpid()}"
        self._state_engine = (
            db.engine if db.is_sqlite else db.engine.execution_options(isolation_level="AUTOCOMMIT")
        )
        # PostgreSQL: claims and ends on the native pool (``native.py``).
        self._native = None if db.is_sqlite or not db.fast.native else db.fast
        # Slots shared fairly among organizers (the one with the fewest running jobs here
        # goes next), not in arrival order.
        self._gate = FairGate(self.concurrency)
        self._started = False
        self._running: set[asyncio.Task[Any]] = set()
        self._sending: set[asyncio.Task[Any]] = set()
        self._to_send: list[int] = []  # committed jobs waiting for the hand-off under way
        self._handing_off: asyncio.Task[None] | None = None
        self._to_send_soon: list[int] = []  # see dispatch(soon=True)
        self._gathering: asyncio.Task[None] | None = None
        # Claims and ends that queue while one is under way go to the database together.
        self._claims: Coalescer[None, int, Any] = Coalescer(self._claim_batch, max_batch=100)
        self._ends: Coalescer[None, tuple[int, dict[str, Any]], bool] = Coalescer(
            self._end_batch, max_batch=100
        )
        self.ran = 0

    # -- producing ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Connects to the broker and makes committed jobs of this database go to it."""
        if self._started:
            return
        await asyncio.to_thread(remove_stale_tmp)
        await self.broker.startup()
        attach_dispatcher(self.db, self.dispatch)
        self._started = True

    async def stop(self) -> None:
        if not self._started:
            return
        attach_dispatcher(self.db, None)
        self._started = False
        if self._gathering is not None:
            self._gathering.cancel()  # its jobs are handed off now, not after the pause
        await asyncio.gather(*self._sending, return_exceptions=True)
        await asyncio.gather(*self._sending, return_exceptions=True)  # what that handed off
        # Jobs still running here go back to waiting at once (see run()), for another
        # process or this one's restart, instead of holding up the shutdown.
        running = list(self._running)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        await self.broker.shutdown()

    async def dispatch(self, ids: list[int], *, soon: bool = False) -> None:
        """Hands committed jobs to the broker in the background (a failed hand-off is the
        sweep's); jobs committed meanwhile share the next message; ``soon`` ones (a PDF) wait
        :data:`SOON_SECONDS` for others where a broker elsewhere runs them."""
        if soon and not self.embedded:
            self._to_send_soon.extend(ids)
            if self._gathering is None or self._gathering.done():
                self._gathering = self._background(self._gather_soon())
            return
        self._to_send.extend(ids)
        if self._handing_off is None or self._handing_off.done():
            self._handing_off = self._background(self._hand_off())

    def _background(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)
        return task

    async def _gather_soon(self) -> None:
        if self._started:  # stopping: what is gathered goes now
            try:
                await asyncio.sleep(SOON_SECONDS)
            except asyncio.CancelledError:
                pass
        ids, self._to_send_soon = self._to_send_soon, []
        await self.dispatch(ids)

    async def _hand_off(self) -> None:
        while self._to_send:
            ids, self._to_send = self._to_send, []
            await self.send(ids)

    async def send(self, ids: list[int]) -> None:
        """One message per batch of ids; a worker runs a batch's jobs side by side."""
        try:
            for start in range(0, len(ids), MESSAGE_BATCH):
                await self.task.kiq(ids[start : start + MESSAGE_BATCH])
        except Exception:
            log.warning("jobs %s: hand-off to the broker failed; the sweep retries", ids[:10])

    async def _tenants(self, ids: list[int]) -> dict[int, int | None]:
        """The organizer of each job (one query per broker message), for the fair gate."""
        try:
            if self._native is not None:
                return await native.tenants(await self._native.pool(), ids)
            result = await self._state(select(Job.id, Job.organizer_id).where(Job.id.in_(ids)))
        except Exception:
            log.warning("jobs %s: organizers not read; run in arrival order", ids[:10])
            return {}
        return {job_id: organizer for job_id, organizer in result.rows}

    async def _run_gated(self, job_id: int, tenant: int | None = None) -> None:
        task = asyncio.current_task()
        self._running.add(task)  # type: ignore[arg-type]
        try:
            await self._gate.acquire(tenant)
            try:
                await self.run(job_id)
            finally:
                self._gate.release(tenant)
        except Exception:
            log.exception("job %s: could not be run", job_id)
        finally:
            self._running.discard(task)  # type: ignore[arg-type]

    # -- consuming ---------------------------------------------------------------------------

    async def work(self) -> None:
        """Runs jobs from the broker until cancelled (``admit worker``)."""
        from taskiq.api import run_receiver_task

        self.broker.is_worker_process = True
        await self.start()
        try:
            await run_receiver_task(
                self.broker, max_async_tasks=self.concurrency, propagate_exceptions=False
            )
        finally:
            await self.stop()

    async def _claim_batch(self, _key: None, ids: list[int]) -> list[Any]:
        """Claims the jobs that queued for a claim together, in one statement."""
        now = utcnow()
        lease_until = now + dt.timedelta(seconds=self.lease)
        if self._native is not None:
            pool = await self._native.pool()
            rows = await native.claim(pool, ids, now, self.worker, lease_until)
        else:
            params = {"ids": ids, "now": now, "worker": self.worker, "lease_until": lease_until}
            rows = {row.id: row for row in (await self._state(CLAIM, params)).rows}
        # A job sent twice (a redelivery) may queue twice: only its first claim runs it.
        return [rows.pop(job_id, None) for job_id in ids]

    async def _end_batch(self, _key: None, ends: list[tuple[int, dict[str, Any]]]) -> list[bool]:
        """Ends the jobs that queued to end together: one statement per distinct outcome
        (most no-op and delivery jobs share theirs), each conditional on still holding them."""
        now = utcnow()
        groups: dict[tuple[Any, ...], list[int]] = {}
        for job_id, values in ends:
            groups.setdefault(tuple(sorted(values.items())), []).append(job_id)
        held: set[int] = set()
        for key, ids in groups.items():
            values = dict(key)
            hours = values.pop("keep_hours")
            values.update(finished=now, expires=now + dt.timedelta(hours=hours))
            if self._native is not None and values.keys() == set(native.END_VALUES):
                held.update(await native.end(await self._native.pool(), ids, self.worker, values))
                continue
            statement = (
                update(Job)
                .where(Job.id.in_(ids), Job.worker == self.worker, Job.status == "running")
                .values(**values)
                .returning(Job.id)
            )
            held.update(row.id for row in (await self._state(statement)).rows)
        return [job_id in held for job_id, _ in ends]

    async def run(self, job_id: int) -> bool:
        """Claims and runs one job; False when it was not to be had (taken, done, not due)."""
        row = await self._claims.submit(None, job_id)
        if row is None:
            return False
        self.ran += 1
        kind = KINDS.get(row.kind)
        if kind is None:
            await self._end(job_id, status="failed", message=f"Unknown job kind {row.kind!r}.")
            return True
        context = JobContext(
            id=row.id,
            uuid=row.uuid,
            kind=row.kind,
            input=row.input or {},
            attempt=row.attempts,
            organizer_id=row.organizer_id,
            event_id=row.event_id,
            owner_kind=row.owner_kind,
            owner_id=row.owner_id,
            db=self.db,
            store=self.store,
            settings=self.settings,
            report=_ProgressReporter(self, job_id),
        )
        workdir = self.tmp_root / f"job-{job_id}-{row.attempts}"
        token = _TMPDIR.set(str(workdir))  # made by the first ``job_tmpdir()`` call that asks
        try:
            handler = asyncio.ensure_future(kind.handler(context))  # copies the context
        finally:
            _TMPDIR.reset(token)
        overtime = asyncio.get_running_loop().call_later(
            kind.time_limit, _stop_overtime, handler, context
        )
        try:
            async with self._heartbeat(job_id, handler):
                message = await handler
        except asyncio.CancelledError:
            if context.overtime and not _current_task_cancelling():
                await self._discard_result(context)
                text = (
                    f"The job took longer than its limit of {kind.time_limit:g} seconds "
                    "and was stopped."
                )
                await self._end(job_id, status="failed", message=text, context=context)
                return True
            await self._discard_result(context)
            if handler.cancelled() and not _current_task_cancelling():
                log.warning("job %s (%s): lease lost, stopped", job_id, row.kind)
                return True
            # This process is stopping: the job goes back for another worker at once.
            back = {"status": "waiting", "attempts": Job.attempts - 1, "worker": None}
            message = "Its worker stopped; it runs again."
            await self._write(
                job_id, {**back, "lease_until": None, "enqueued_at": None, "message": message}
            )
            raise
        except RetryLater as exc:
            await self._retry(job_id, row, str(exc), exc.delay, context)
        except JobFailed as exc:
            await self._end(job_id, status="failed", message=str(exc), context=context)
        except Exception as exc:
            log.exception("job %s (%s) failed", job_id, row.kind)
            delay = ERROR_BACKOFF_SECONDS * 2 ** (row.attempts - 1)
            text = f"The job failed unexpectedly ({type(exc).__name__})."
            await self._retry(job_id, row, text, delay, context)
        else:
            await self._end(job_id, status="finished", message=message, context=context)
        finally:
            overtime.cancel()
            if workdir.exists():  # most jobs never ask for it: no thread hop to remove it
                await asyncio.to_thread(shutil.rmtree, workdir, True)
        return True

    @contextlib.asynccontextmanager
    async def _heartbeat(self, job_id: int, handler: asyncio.Future[Any]) -> AsyncIterator[None]:
        async def beat() -> None:
            while True:
                await asyncio.sleep(self.lease / 3)
                if not await self._extend(job_id):
                    handler.cancel()  # someone else has the job now: stop its side effects
                    return

        task = asyncio.create_task(beat())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _extend(self, job_id: int, **values: Any) -> bool:
        lease = utcnow() + dt.timedelta(seconds=self.lease)
        statement = (
            update(Job).where(held_by(job_id, self.worker)).values(lease_until=lease, **values)
        )
        try:
            result = await self._state(statement)
        except Exception:
            log.warning("job %s: heartbeat failed", job_id, exc_info=True)
            return True  # the database may be back before the lease runs out
        return result.rowcount == 1  # type: ignore[attr-defined]

    async def _retry(
        self, job_id: int, row: Any, message: str, delay: float, context: JobContext
    ) -> None:
        if row.attempts >= row.max_attempts:
            await self._end(job_id, status="failed", message=message, context=context)
            return
        await self._discard_result(context)
        after = utcnow() + dt.timedelta(seconds=delay)
        # enqueued_at None: the sweep hands it to the broker when it is due
        values = {"status": "waiting", "message": message, "worker": None, "lease_until": None}
        await self._write(job_id, {**values, "run_after": after, "enqueued_at": None})

    async def _end(
        self, job_id: int, *, status: str, message: str | None, context: JobContext | None = None
    ) -> None:
        result = context.result if context and status == "finished" else {}
        if context and status != "finished":
            await self._discard_result(context)
        keep = KINDS[context.kind].keep_hours if context else None
        hours = keep if keep is not None else self.settings.job_result_hours
        values = {
            "status": status,
            "message": message,
            "percentage": 100 if status == "finished" else None,
            "keep_hours": hours,
            "lease_until": None,
            "result_key": result.get("key"),
            "result_name": result.get("name"),
            "result_type": result.get("type"),
            "result_size": await self.store.size(result["key"]) if result else None,
        }
        if not await self._ends.submit(None, (job_id, values)):
            log.warning("job %s: lease lost before it ended; its next run decides", job_id)
            if result:
                await self.store.delete(result["key"])  # the job's next run owns the outcome

    async def _write(self, job_id: int, values: dict[str, Any]) -> bool:
        result = await self._state(update(Job).where(held_by(job_id, self.worker)).values(**values))
        held = result.rowcount == 1  # type: ignore[attr-defined]
        if not held:
            log.warning("job %s: lease lost before it ended; its next run decides", job_id)
        return held

    async def _state(self, statement: Any, params: dict[str, Any] | None = None) -> Any:
        """One statement on a job row, committed at once: every state change is a single
        conditional update, so PostgreSQL runs it without BEGIN and COMMIT round trips."""
        async with self._state_engine.begin() as conn:
            result = await conn.execute(statement, params or {})
            if getattr(statement, "_returning", None) or getattr(statement, "is_select", False):
                return _Rows(result.all(), result.rowcount)
            return result

    async def _discard_result(self, context: JobContext) -> None:
        if context.result.get("key"):
            await self.store.delete(context.result["key"])
            context.result.clear()


class _Rows:
    """The rows of a RETURNING statement, read before its connection went back to the pool."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self.rows = rows
        self.rowcount = rowcount


def _stop_overtime(handler: asyncio.Future[Any], context: JobContext) -> None:
    """The kind's time limit passed: the handler is cancelled (work it does in a thread is
    told through ``context.overtime`` and stops at its next check)."""
    context.overtime = True
    handler.cancel()


def _current_task_cancelling() -> bool:
    task = asyncio.current_task()
    return bool(task and task.cancelling())


class _ProgressReporter:
    """Writes a job's percentage at most once a second (each write extends the lease)."""

    def __init__(self, engine: JobEngine, job_id: int) -> None:
        self.engine = engine
        self.job_id = job_id
        self.last = 0.0

    async def __call__(self, percentage: int) -> None:
        now = time.monotonic()
        if now - self.last < 1.0 and percentage < 100:
            return
        self.last = now
        await self.engine._extend(self.job_id, percentage=percentage)
