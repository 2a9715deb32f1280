"""Keyed fast-lane requests: their writes and their stored answers in one transaction, shared.

A lane handler writes with autocommit statements on the native pool (one statement, and one
commit, serves a whole coalesced batch of requests). A request with an idempotency key must
commit its change together with its answer, and the answer exists only once the change is
made and rendered. So keyed lane requests commit in *groups*: a group is one transaction on
one native connection; its members run their handlers as usual, each in its own task, but
every statement they send (the coalesced batch statements included) goes over the group's
connection. Once every member has its answer, one script writes the answers and commits
(``idempotency_store.pg_closing_script``); only then are the answers sent. Groups run one at
a time per database, and what arrives meanwhile forms the next one, whose connection is
taken and whose transaction is begun while the current one runs: under a rush a group is
large, and all it adds to the batches of its members is one round trip, shared.

A group whose transaction fails (a statement error aborts it, the commit fails, a member
crashes) is rolled back as a whole: every member that had an answer gets 503 with
``Retry-After`` instead, and its key is released (nothing of it was committed). A request
without a key never comes here, nor a cart sale, whose call writes its key's row and answer
itself (``idempotency_inline``): a group holds its quota lock from the sale to the group's
commit, across the rendering of every member's answer and one more round trip. Nor does a
first entry that the scan statement admits together with its key (``checkin/keyed.py``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.config import Settings
from admit.db import utcnow
from admit.kit.http.errors import APIError, FieldErrors, error_response
from admit.kit.http.responses import JSONResponse
from admit.kit.idempotency import store
from admit.kit.idempotency.layer import settle
from admit.kit.lanes.fastread import FastReader

log = logging.getLogger("admit")

Work = Callable[[], Awaitable[Response | None]]
_FAILED = object()  # a member that raised: its group cannot commit


class Link:
    """A group's connection, shaped like the pool the lane statements use; one statement at
    a time (an asyncpg connection runs one), and any error marks the transaction lost."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn
        self._lock = asyncio.Lock()
        self.failed = False

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        async with self._lock:
            try:
                return await getattr(self._conn, method)(*args, **kwargs)
            except BaseException:
                self.failed = True
                raise

    async def fetch(self, *args: Any, **kwargs: Any) -> list[asyncpg.Record]:
        return await self._call("fetch", *args, **kwargs)

    async def fetchrow(self, *args: Any, **kwargs: Any) -> asyncpg.Record | None:
        return await self._call("fetchrow", *args, **kwargs)

    async def fetchval(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("fetchval", *args, **kwargs)

    async def execute(self, *args: Any, **kwargs: Any) -> str:
        return await self._call("execute", *args, **kwargs)


@dataclass(eq=False)
class GroupReader(FastReader):
    """The fast reader the members of a group see: the native pool is the group's link.
    One per database, re-bound to each group (so the lane modules that key caches by their
    reader's identity see one reader, not one per group)."""

    link: Link | None = None

    async def pool(self) -> Any:
        assert self.link is not None
        return self.link


@dataclass(eq=False)
class _Group:
    size: int = 0
    started: asyncio.Future[GroupReader | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    finished: asyncio.Future[bool] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    results: list[tuple[store.Claim, Any]] = field(default_factory=list)
    all_in: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)  # its connection is back


class _Lane:
    """The groups of one database (one fast reader). Groups run one after the other, but the
    next one gets its connection and begins its transaction while the current one runs, so
    that between two groups there is no round trip: only the members' own statements, then
    one more for the answers and the commit together."""

    def __init__(self, fast: FastReader, hours: float) -> None:
        self.fast = fast
        self.hours = hours
        self.reader = GroupReader(fast.engine, fast.url, _compiled=fast._compiled)
        self.pending: _Group | None = None
        self.last: _Group | None = None  # the group the pending one waits for
        self.tasks: set[asyncio.Task[None]] = set()

    def join(self) -> _Group:
        group = self.pending
        if group is None:
            group = self.pending = _Group()
            task = asyncio.ensure_future(self._run(group, self.last))
            self.last = group
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        group.size += 1
        return group

    async def _run(self, group: _Group, previous: _Group | None) -> None:
        try:
            await self._transact(group, previous)
        finally:
            self._close(group)
            if not group.started.done():
                group.started.set_result(None)
            if not group.finished.done():
                group.finished.set_result(False)
            group.done.set()
            if self.last is group:
                self.last = None

    def _close(self, group: _Group) -> None:
        """No member joins ``group`` any more (a later request forms the next group)."""
        if self.pending is group:
            self.pending = None

    async def _transact(self, group: _Group, previous: _Group | None) -> None:
        pool = await self.fast.pool()
        try:
            conn = await pool.acquire()
        except Exception:
            log.exception("no connection for a group of keyed lane requests")
            return  # started = None: the members take the normal path
        try:
            await conn.execute("BEGIN")
            if previous is not None:
                await previous.done.wait()
            self._close(group)
            link = Link(conn)
            self.reader.link = link
            group.started.set_result(self.reader)
            await group.all_in.wait()
            ok = not link.failed and await self._finish(link, group)
            if not ok:
                await conn.execute("ROLLBACK")
            group.finished.set_result(ok)
        except Exception:
            log.exception("a group of keyed lane requests failed")
            try:
                await conn.execute("ROLLBACK")
            except Exception:
                conn.terminate()  # never back into the pool with a transaction open
        except BaseException:
            conn.terminate()
            raise
        finally:
            self.reader.link = None
            await pool.release(conn)

    async def _finish(self, link: Link, group: _Group) -> bool:
        """Writes the answers, releases the keys of answers not kept and commits, in one
        round trip; False (nothing committed) when a member failed."""
        keep: list[tuple[store.Claim, store.Answer]] = []
        drop: list[store.Claim] = []
        for claim, result in group.results:
            if result is _FAILED:
                return False
            if result is None:
                continue  # declined before writing: the framework path answers it
            answer = _answer_of(result)
            (keep.append((claim, answer)) if answer.storable else drop.append(claim))
        expires = utcnow() + dt.timedelta(hours=self.hours)
        await link.execute(store.pg_closing_script(keep, drop, expires))
        return True


def _answer_of(response: Response) -> store.Answer:
    return store.Answer.of(response.status_code, response.raw_headers, bytes(response.body))


_lanes: dict[int, _Lane] = {}


def _lane(fast: FastReader, settings: Settings) -> _Lane:
    lane = _lanes.get(id(fast))
    if lane is None or lane.fast is not fast:
        lane = _lanes[id(fast)] = _Lane(fast, settings.idempotency_hours)
    return lane


def _retry_later() -> Response:
    body = {"detail": "The request could not be completed. Please try again."}
    return JSONResponse(body, status_code=503, headers={"Retry-After": "1"})


async def lane_write(scope: dict[str, Any], session: AsyncSession, work: Work) -> Response | None:
    """Runs a lane handler's writing part: as is for a request without an idempotency key,
    in a group transaction that stores its answer for a keyed one (see the module)."""
    settled = await settle(scope)
    if isinstance(settled, store.Answer):
        return settled.response()
    claim = settled
    if claim is None:
        return await work()
    fast: FastReader = session.info["fast"]
    lane = _lane(fast, scope["app"].state.settings)
    group = lane.join()
    result: Any = _FAILED  # until the handler answered (a crash or a cancellation: lost)
    try:
        reader = await group.started
        if reader is None:  # no transaction could begin: the framework path takes it
            result = None
            return None
        session.info["fast"] = reader
        try:
            result = await work()
        except (APIError, FieldErrors) as exc:
            result = error_response(exc)
    finally:
        group.results.append((claim, result))
        _arrived(group)
    committed = await asyncio.shield(group.finished)
    if result is None:
        return None
    if not committed:
        return _retry_later()
    claim.state = "stored" if _answer_of(result).storable else "released"
    return result


def _arrived(group: _Group) -> None:
    if len(group.results) == group.size:
        group.all_in.set()
