"""One session and one transaction per request; the route layer commits, services only flush.

Requests with a safe method (GET, HEAD, OPTIONS) are read-only: on PostgreSQL they run in
autocommit mode, two round trips cheaper, and must not write.

Work that must only happen for committed changes (jobs, webhook notifications, mail delivery)
is registered with :func:`after_commit` and runs once the commit succeeded. Work that must be
part of the transaction but can only be done once everything else is written (running totals
derived from the final state) is registered with :func:`before_commit`; whoever commits a
session goes through :func:`commit` so it runs.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import write_intent
from admit.kit.idempotency.store import CLAIM, in_session
from admit.kit.lanes import hot_writes

log = logging.getLogger("admit")

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
AfterCommit = Callable[[], Awaitable[None]]
BeforeCommit = Callable[[AsyncSession], Awaitable[None]]
_PLAIN, _HOT = "before_commit", "before_commit_hot_locks"


def before_commit(
    session: AsyncSession, key: str, callback: BeforeCommit, *, hot_locks: bool = False
) -> None:
    """Runs ``callback`` once, inside the transaction, right before it commits.

    ``hot_locks``: the callback locks a row that every concurrent writer of its kind needs
    (running totals, an invoice number's counter); such a lock is held until the commit, so
    concurrent transactions queue for whatever runs between. These callbacks therefore run
    after all the others, in the order they were registered, so only they and the commit
    stand between taking the lock and releasing it."""
    slot = _HOT if hot_locks else _PLAIN
    session.info.setdefault(slot, {}).setdefault(key, callback)


async def commit(session: AsyncSession) -> None:
    """Commits after the registered before-commit work (which may register more)."""
    await run_before_commit(session)
    await session.commit()


def after_commit(session: AsyncSession, callback: AfterCommit) -> None:
    session.info.setdefault("after_commit", []).append(callback)


async def run_after_commit(session: AsyncSession) -> None:
    callbacks: list[AfterCommit] = session.info.pop("after_commit", [])
    for callback in callbacks:
        try:
            await callback()
        except Exception:
            log.exception("after-commit callback failed")


async def commit_and_notify(session: AsyncSession) -> None:
    """Commits (outside a request) and then runs the after-commit work, such as handing the
    transaction's jobs to the broker."""
    try:
        await commit(session)
    except BaseException:
        session.info.pop("after_commit", None)
        raise
    await run_after_commit(session)


def discard_before_commit(session: AsyncSession) -> None:
    """Forgets the registered before-commit work (the transaction is being rolled back)."""
    session.info.pop(_PLAIN, None)
    session.info.pop(_HOT, None)
    hot_writes.discard(session)


async def run_before_commit(session: AsyncSession) -> None:
    """The registered before-commit work, without the commit: the plain callbacks first
    (and those they register), then the ones that take hot locks."""
    try:
        while callbacks := session.info.pop(_PLAIN, None) or session.info.pop(_HOT, None):
            for callback in callbacks.values():
                await callback(session)
        await hot_writes.flush(session)
    except BaseException:
        hot_writes.discard(session)  # never carried into the session's next transaction
        raise


async def db_session(request: Request) -> AsyncIterator[AsyncSession]:
    """Yields the request's session; commits when the handler returned, rolls back on error.

    A request with an idempotency key (``kit/idempotency/layer``) does not commit here: its
    session, with the before-commit work done, goes to the idempotency layer, which adds the
    stored answer to the same transaction and commits. Its reads and writes all go through
    the session (never the native pool's autocommit statements)."""
    writes = request.method not in SAFE_METHODS
    token = write_intent.set(writes)
    db = request.app.state.db
    session: AsyncSession = db.sessionmaker() if writes else db.read_sessionmaker()
    claim = request.scope.get(CLAIM) if writes else None
    session.info["fast"] = db.fast if claim is None else in_session(db.fast)
    try:
        yield session
        if claim is not None:
            await run_before_commit(session)
            claim.session = session  # the idempotency layer commits, then closes it
            return
        if session.in_transaction():
            await commit(session)
    except BaseException:
        session.info.pop("after_commit", None)
        discard_before_commit(session)
        await session.rollback()
        raise
    finally:
        if (session.in_transaction() or session.identity_map) and (
            claim is None or claim.session is None
        ):
            await session.close()
        write_intent.reset(token)
    await run_after_commit(session)
