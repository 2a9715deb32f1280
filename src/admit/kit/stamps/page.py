"""``X-Page-Generated``: a bound that change polling with ``modified_since`` can never miss by.

An integration reads a list, keeps its ``X-Page-Generated`` and asks next time for what changed
since (``modified_since=<that value>``). The naive bound, the clock when the page was read,
misses a change whose transaction started before the page was read and committed after it:
its stamp is earlier than the bound, and the page did not show it either. So the bound is the
start of the oldest transaction that might still commit a change the page cannot show, and
the stamps are kept no earlier than their transaction's start (``models/stamp_triggers.py``).

**PostgreSQL**: ``least(now(), the oldest xact_start of the client sessions of this database in
pg_stat_activity)``, read before the page (read requests run in autocommit, so the page's
query takes a later snapshot): every transaction that the page cannot see was either running
then (its stamps are no earlier than its start, hence the bound) or started later. A session
publishes its transaction start a few instructions after taking the time, so the bound is
moved back by :data:`PG_MARGIN` more.

**SQLite** serializes writers (``BEGIN IMMEDIATE``): the bound is the clock (cut to the
millisecond, as the triggers' stamps are) *before* taking the write lock once and letting it go
again; every transaction that held the lock before has committed by then, every later one
started after the bound. The page's read snapshot then starts anew (after the probe).

**Any earlier bound is as good** (it only returns more), so a process reuses its last probe
for :data:`REUSE` instead of asking for every page: reading ``pg_stat_activity`` costs about
as much as a small list query. On SQLite a reused bound still starts a new read snapshot.

The cost is duplicates, never a miss: a poll returns again what changed within the margin and
the reuse time before the previous page, or since the oldest transaction then running began,
so a transaction left open for long (a forgotten ``BEGIN`` in ``psql``;
``idle_in_transaction_session_timeout`` ends those) makes every poll re-read since it began.
Blind spots: on PostgreSQL sessions of other database roles whose ``pg_stat_activity`` rows
the application's role may not read (grant it ``pg_read_all_stats``), ``track_activities =
off``, and a replica serving the list (its ``pg_stat_activity`` shows no writer of the
primary). Clocks: the stamps and the bound come from one clock (the database server's on
PostgreSQL; the machine's on SQLite, where the ORM's values are taken in the same process). A
clock set back by more than the margin can lose changes, as with any timestamp.
"""

from __future__ import annotations

import datetime as dt
import time
import weakref
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow, write_intent

PG_MARGIN = dt.timedelta(milliseconds=100)
REUSE = 0.1  # seconds a process hands out its last bound again

_PG_BOUND = text(
    "SELECT least(now(), min(xact_start)) - make_interval(secs => :margin) "
    "FROM pg_stat_activity WHERE datname = current_database() "
    "AND backend_type = 'client backend'"
)


@dataclass
class _Probe:
    bound: dt.datetime
    at: float  # time.monotonic() when it was taken


_last: weakref.WeakKeyDictionary[Any, _Probe] = weakref.WeakKeyDictionary()  # by engine


async def page_generated(session: AsyncSession) -> dt.datetime:
    """The bound for the page the session is about to read: call it before the page's query.

    PostgreSQL: the session must run in autocommit (as read requests do). SQLite: ends the
    session's current read transaction (committing it; objects stay loaded)."""
    bind = session.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    if sqlite:
        await session.commit()  # the page must not read from a snapshot older than the probe
    last = _last.get(bind)
    started = time.monotonic()
    if last is not None and started - last.at < REUSE:
        return last.bound
    bound = await (_sqlite_probe(session) if sqlite else _pg_probe(session))
    _last[bind] = _Probe(bound, started)
    return bound


async def _pg_probe(session: AsyncSession) -> dt.datetime:
    bound = await session.scalar(_PG_BOUND, {"margin": PG_MARGIN.total_seconds()})
    assert bound is not None
    return bound.astimezone(dt.UTC)  # type: ignore[no-any-return]


async def _sqlite_probe(session: AsyncSession) -> dt.datetime:
    now = utcnow()
    bound = now.replace(microsecond=now.microsecond // 1000 * 1000)
    token = write_intent.set(True)
    try:
        await session.connection()  # BEGIN IMMEDIATE: waits for the write in progress
    finally:
        write_intent.reset(token)
    await session.commit()
    return bound


def header_value(bound: dt.datetime) -> str:
    """ISO 8601 in UTC with ``Z``, as ``modified_since`` accepts it back."""
    return bound.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
