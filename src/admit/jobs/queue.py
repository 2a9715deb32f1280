"""Background jobs: kinds, enqueueing in the request's transaction, and the job's context.

A job is a row in ``jobs`` written in the same transaction as the change that asks for it
(:func:`enqueue`); only after the commit is its id handed to the broker. A rolled-back request
therefore leaves no job, and a process that dies between commit and hand-off loses nothing:
the scheduler's sweep sends waiting rows that nobody started again (:mod:`admit.jobs.runner`).

A kind is an async function registered with :func:`job_kind`; it gets a :class:`JobContext`
and may run more than once for one job (a worker can die after any line), so its side effects
must be idempotent per job: check the state it changes before changing it.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import os
import secrets
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Protocol

from sqlalchemy import insert, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import Database, utcnow
from admit.jobs.storage import FileStore
from admit.kit.http.transaction import after_commit
from admit.models import Job


class RetryLater(Exception):
    """The job could not finish now (a server answered "try later"): it runs again after
    ``delay`` seconds, as long as attempts remain; else it fails with this message."""

    def __init__(self, message: str, delay: float) -> None:
        super().__init__(message)
        self.delay = delay


class JobFailed(Exception):
    """The job failed for good (bad input, a permanent refusal): no retry; the message is
    shown to its owner."""


Handler = Callable[["JobContext"], Awaitable[str | None]]


@dataclass(frozen=True)
class JobKind:
    name: str
    handler: Handler
    max_attempts: int
    # How long a result (row and file) is kept; None: the setting job_result_hours.
    keep_hours: float | None
    # Seconds one run may take; the runner stops it past that and fails the job (no retry:
    # a run that took too long would take too long again), freeing its slot.
    time_limit: float = 3600.0


KINDS: dict[str, JobKind] = {}
# What a run of any kind may take at most, unless the kind says otherwise.
DEFAULT_TIME_LIMIT = 3600.0

# The running job's own temporary directory (set by the job runner for the handler's task):
# temporary files of a run go there, so a restarted worker can remove what a killed one left.
_TMPDIR: contextvars.ContextVar[str | None] = contextvars.ContextVar("job_tmpdir", default=None)


def job_tmpdir() -> str | None:
    """The running job's temporary directory (None outside a job), made when first asked
    for (the runner removes it after the run)."""
    path = _TMPDIR.get()
    if path is not None:
        os.makedirs(path, exist_ok=True)
    return path


def job_kind(
    name: str,
    *,
    max_attempts: int = 3,
    keep_hours: float | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> Callable[[Handler], Handler]:
    """Registers an async handler for jobs of ``name``; it returns a message or None.
    ``time_limit``: seconds a run may take before the runner stops it and fails the job."""

    def register(handler: Handler) -> Handler:
        KINDS[name] = JobKind(name, handler, max_attempts, keep_hours, time_limit)
        return handler

    return register


class Progress(Protocol):
    async def __call__(self, percentage: int) -> None: ...


@dataclass
class JobContext:
    """What a running job sees: its row's data, the database, the file store, settings."""

    id: int
    uuid: str
    kind: str
    input: dict[str, Any]
    attempt: int
    organizer_id: int | None
    event_id: int | None
    owner_kind: str | None
    owner_id: int | None
    db: Database
    store: FileStore
    settings: Any
    report: Progress
    result: dict[str, Any] = field(default_factory=dict)
    # Set by the runner when the kind's time limit passed (work in a thread checks it).
    overtime: bool = False

    async def progress(self, percentage: int) -> None:
        """Reports how far the job is (0-100); written at most about once a second."""
        await self.report(max(0, min(100, int(percentage))))

    @contextlib.asynccontextmanager
    async def result_file(self, filename: str, content_type: str) -> AsyncIterator[BinaryIO]:
        """The job's downloadable result: written to the file store, visible to downloads only
        once the job finished (a re-run writes it again under a new key)."""
        key = f"jobs/{self.uuid}/{uuid.uuid4().hex}"
        async with self.store.writer(key) as handle:
            yield handle
        self.result.update(key=key, name=filename, type=content_type)


# Producers: how the ids of committed jobs reach the broker, per database (None: they wait for
# the scheduler's sweep, as in CLI commands and tests that start no engine).
class Dispatch(Protocol):
    def __call__(self, ids: list[int], *, soon: bool = False) -> Awaitable[None]: ...


_dispatchers: dict[int, Dispatch] = {}


def _pool_key(session_or_db: AsyncSession | Database) -> int | None:
    bind = session_or_db.bind if isinstance(session_or_db, AsyncSession) else None
    engine = bind if bind is not None else getattr(session_or_db, "engine", None)
    return id(engine.sync_engine.pool) if engine is not None else None  # type: ignore[union-attr]


def attach_dispatcher(db: Database, dispatch: Dispatch | None) -> None:
    key = _pool_key(db)
    if dispatch is None:
        _dispatchers.pop(key, None)  # type: ignore[arg-type]
    else:
        _dispatchers[key] = dispatch  # type: ignore[index]


_JOB_INSERT = insert(Job).returning(Job.id, Job.uuid)


async def hand_over(db: Database, ids: list[int], *, soon: bool = False) -> None:
    """Hands jobs to the broker that a fast lane's database call wrote (and committed)
    outside any session, as :func:`kick_after_commit` does after a commit; written with
    ``enqueued_at`` set, they are redelivered by the sweep if this never happens."""
    dispatch = _dispatchers.get(_pool_key(db))  # type: ignore[arg-type]
    if dispatch is not None and ids:
        await dispatch(ids, soon=soon)


def new_job_values(
    kind: str,
    input: dict[str, Any] | None = None,
    *,
    organizer_id: int | None = None,
    event_id: int | None = None,
    owner: tuple[str, int] | None = None,
    run_after: dt.datetime | None = None,
    hand_over: bool = True,
) -> dict[str, Any]:
    if kind not in KINDS:
        raise ValueError(f"unknown job kind {kind!r}")
    now = utcnow()
    return {
        "uuid": uuid.uuid4().hex,
        "secret": secrets.token_urlsafe(24),
        "kind": kind,
        "organizer_id": organizer_id,
        "event_id": event_id,
        "owner_kind": owner[0] if owner else None,
        "owner_id": owner[1] if owner else None,
        "input": input or {},
        "status": "waiting",
        "attempts": 0,
        "max_attempts": KINDS[kind].max_attempts,
        "run_after": run_after or now,
        # Not handed over: the next sweep sends it (a process without a broker of its own).
        "enqueued_at": now if hand_over else None,
        "created": now,
    }


async def enqueue(
    session: AsyncSession,
    kind: str,
    input: dict[str, Any] | None = None,
    *,
    organizer_id: int | None = None,
    event_id: int | None = None,
    owner: tuple[str, int] | None = None,
    hand_over: bool = True,
) -> tuple[int, str]:
    """Writes a job row in the session's transaction and hands its id to the broker after
    the commit (with ``hand_over=False``, the scheduler's next sweep does). Returns the job's
    id and public uuid."""
    values = new_job_values(
        kind, input, organizer_id=organizer_id, event_id=event_id, owner=owner, hand_over=hand_over
    )
    row = (await session.execute(_JOB_INSERT, values)).one()
    if hand_over:
        kick_after_commit(session, row.id)
    return row.id, row.uuid


class _Kick:
    """One after-commit hand-off per transaction for all the jobs it enqueued."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.ids: list[int] = []
        self.soon: list[int] = []  # see kick_after_commit

    async def __call__(self) -> None:
        dispatch = _dispatchers.get(_pool_key(self.session))  # type: ignore[arg-type]
        if dispatch is None:
            return
        if self.ids:
            await dispatch(self.ids)
        if self.soon:
            await dispatch(self.soon, soon=True)


def kick_after_commit(session: AsyncSession, job_id: int, *, soon: bool = False) -> None:
    """Hands the job to the broker once the transaction commits. ``soon``: nobody waits for
    it within a moment, so it may wait a fraction of a second for others to share the
    broker's message (``JobEngine.dispatch``)."""
    kick = None
    # The callbacks are dropped with a rollback, so a kick found here is this transaction's.
    for callback in session.info.get("after_commit", ()):
        if isinstance(callback, _Kick):
            kick = callback
            break
    if kick is None:
        kick = _Kick(session)
        after_commit(session, kick)
    (kick.soon if soon else kick.ids).append(job_id)


async def mark_enqueued(session: AsyncSession, ids: list[int]) -> None:
    await session.execute(update(Job).where(Job.id.in_(ids)).values(enqueued_at=utcnow()))
