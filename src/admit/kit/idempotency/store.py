"""The rows behind ``X-Idempotency-Key``: claims, stored answers, releases, the purge.

A key's life: a *claim* inserts a running row (``status`` NULL) whose ``expires`` is a
short lease, in its own tiny transaction, so that a repeat arriving meanwhile sees it and
answers 409 at once instead of doing the work twice. The answer (status, headers, body) is
then written into that row by the transaction that makes the change, so both commit or
neither does; ``expires`` becomes the retention (24 h by default). A request that fails
with a server error *releases* its claim (deletes the row): the key stays usable for a
retry. A process that dies mid-request leaves a running row whose lease runs out; the next
claim of the key takes it over (and the purge removes it eventually).

The claim's ``created`` stamp is its token: the answer is only written into the row while
it still carries that stamp and is still running, so a request whose lease was taken over
cannot store an answer (it rolls back instead).

On PostgreSQL claims of concurrent requests go as one statement on the native pool
(``kit/lanes/batching.Coalescer``); on SQLite each is a small Core statement.

A lane statement may also write a key's row at once, answered, together with its change
(no claim first): with the answer rendered in advance (``idempotency_inline``), or, when
the answer is made of what that statement reads, with a *recipe* instead of a body: the
facts the answer is rendered from, which a replay renders again (:data:`RECIPES`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import asyncpg
import orjson
from sqlalchemy import delete, select, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.db import Database, utcnow
from admit.kit.lanes.batching import Coalescer
from admit.kit.lanes.fastread import FastReader
from admit.models import IdempotencyKey

# The scope entry of a keyed request: its :class:`Claim`.
CLAIM = "admit.idempotency"
# The scope entry of a keyed request whose key is not claimed yet: its :class:`Request`. The
# idempotency layer leaves the claim to the path that runs the request, so that a lane whose
# statement claims the key itself (``idempotency_inline``) costs no statement more.
UNCLAIMED = "admit.idempotency.unclaimed"
# How long a running claim blocks its key: past it, the request is taken for dead.
LEASE = dt.timedelta(minutes=5)


@dataclass(frozen=True)
class Request:
    """What a key is bound to."""

    credential: str
    key: str
    method: str
    path: str
    body_hash: str


@dataclass
class Claim:
    """A running row this request owns. ``state``: ``pending`` until the answer is stored
    (``stored``) or the row deleted (``released``)."""

    id: int
    created: dt.datetime
    request: Request
    state: str = "pending"
    # A request transaction waiting for its answer to be written before it commits.
    session: AsyncSession | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Existing:
    """The row that made a claim fail."""

    method: str
    path: str
    body_hash: str
    status: int | None
    headers: list[Any]
    body: bytes
    recipe: str | None = None  # the kind of recipe the body is kept as (see RECIPES)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: list[list[str]]  # without content-length (recomputed on replay)
    body: bytes

    @classmethod
    def detail(
        cls, status: int, detail: str, headers: Iterable[tuple[bytes, bytes]] = ()
    ) -> Answer:
        """An answer of the layer's own: ``{"detail": …}`` with ``headers``."""
        kept = [[k.decode("latin-1"), v.decode("latin-1")] for k, v in headers]
        body = orjson.dumps({"detail": detail})
        return cls(status, [["content-type", "application/json"], *kept], body)

    @classmethod
    def of(cls, status: int, headers: Iterable[tuple[bytes, bytes]], body: bytes) -> Answer:
        """An answer as it is stored (``headers`` as sent, with or without content-length)."""
        kept = [
            [k.decode("latin-1"), v.decode("latin-1")]
            for k, v in headers
            if k.lower() != b"content-length"
        ]
        return cls(status, kept, body)

    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        """The headers to send, content-length recomputed (none where none may be)."""
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in self.headers]
        if self.status >= 200 and self.status not in (204, 304):
            headers.append((b"content-length", str(len(self.body)).encode()))
        return headers

    def response(self) -> Response:
        """The answer as a response (for the fast lane's handlers)."""
        response = Response(self.body, status_code=self.status)
        response.raw_headers = self.raw_headers()
        return response

    @property
    def storable(self) -> bool:
        """Whether a repeat should get this answer again. Server errors, rate limits and
        "busy, retry" answers are not kept: the retry must be able to succeed."""
        if self.status >= 500 or self.status == 429:
            return False
        return not any(name == "retry-after" for name, _ in self.headers)


# Everything but the key itself: what a claim of a key whose time ran out writes anew.
_TAKEN_OVER = (
    "method", "path", "body_hash", "status", "headers", "body", "recipe", "created", "expires",
)  # fmt: skip


def claiming(stmt: Any) -> Any:
    """``stmt``, an INSERT of a key's row (PostgreSQL's or SQLite's), as a claim: a row of
    the key whose time ran out (``expires``: the lease of a running request, the retention of
    an answer) is taken over; a live one is left as it is, and nothing is returned. The same
    rule as :func:`pg_takeover`, for statements written in SQL."""
    return stmt.on_conflict_do_update(
        index_elements=[IdempotencyKey.credential, IdempotencyKey.key],
        set_={name: stmt.excluded[name] for name in _TAKEN_OVER},
        where=IdempotencyKey.expires < stmt.excluded.created,
    )


def pg_takeover(alias: str) -> str:
    """:func:`claiming` in SQL, for an ``INSERT INTO idempotency_keys AS <alias>``."""
    columns = ", ".join(f"{name} = excluded.{name}" for name in _TAKEN_OVER)
    return (
        f"ON CONFLICT (credential, key) DO UPDATE SET {columns} "
        f"WHERE {alias}.expires < excluded.created"
    )


_PG_CLAIM = f"""
INSERT INTO idempotency_keys AS k
    (credential, key, method, path, body_hash, status, headers, body, created, expires)
SELECT r.c, r.k, r.m, r.p, r.h, NULL, '[]'::jsonb, ''::bytea, $6, $7
FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::varchar[], $5::varchar[])
    AS r(c, k, m, p, h)
{pg_takeover("k")}
RETURNING k.id, k.credential, k.key
"""


def _ts(value: dt.datetime) -> str:
    return f"'{value.isoformat()}'::timestamptz"


def _bytes(value: bytes) -> str:
    return f"decode('{value.hex()}', 'hex')"


def pg_closing_script(
    keep: list[tuple[Claim, Answer]], drop: list[Claim], expires: dt.datetime
) -> str:
    """The end of a group of lane requests' transaction (see ``idempotency_lane``): their
    answers written, the claims of answers not kept deleted, and the commit, as one script
    sent in one round trip. A script takes no parameters, so every value is a number, a
    timestamp or hex digits (nothing a body could break out of). A claim taken over
    meanwhile (its row no longer carries its stamp) fails the script before the commit."""
    parts = []
    if keep:
        rows = ",".join(
            f"({c.id},{_ts(c.created)},{a.status},"
            f"convert_from({_bytes(orjson.dumps(a.headers))}, 'UTF8')::jsonb,{_bytes(a.body)})"
            for c, a in keep
        )
        parts.append(
            f"WITH a(id, created, status, headers, body) AS (VALUES {rows}), "
            "u AS (UPDATE idempotency_keys AS k SET status = a.status, headers = a.headers, "
            f"body = a.body, expires = {_ts(expires)} FROM a WHERE k.id = a.id "
            "AND k.created = a.created AND k.status IS NULL RETURNING 1) "
            f"SELECT 1 / ((SELECT count(*) FROM u) = {len(keep)})::int"
        )
    if drop:
        rows = ",".join(f"({c.id},{_ts(c.created)})" for c in drop)
        parts.append(
            f"DELETE FROM idempotency_keys AS k USING (VALUES {rows}) AS a(id, created) "
            "WHERE k.id = a.id AND k.created = a.created AND k.status IS NULL"
        )
    parts.append("COMMIT")
    return ";\n".join(parts)


_EXISTING = select(
    IdempotencyKey.method,
    IdempotencyKey.path,
    IdempotencyKey.body_hash,
    IdempotencyKey.status,
    IdempotencyKey.headers,
    IdempotencyKey.body,
    IdempotencyKey.recipe["kind"].as_string(),
)

# Answers kept as recipes, by kind: the answer a stored row's recipe renders to, or None
# when the row is gone. A lane statement that writes a key together with its change stores
# the facts the answer is made of when the answer itself is rendered only afterwards
# (``checkin/keyed.py``); the renderer is the one that rendered the first answer.
Render = Callable[[Database, Request], Awaitable[Answer | None]]
RECIPES: dict[str, Render] = {}

# What a repeat gets when its recipe was written by a version of Admit that rendered it
# differently (a renderer knows its own recipes, see ``checkin/keyed.py``): the request was
# carried out, but its answer can no longer be given byte for byte, and a different one
# passed off as a replay could mislead. Kept until the key's time runs out, like any answer.
UNREPLAYABLE = Answer.detail(
    409,
    "This idempotency key's request was carried out, but its answer was recorded by another "
    "version of the service and cannot be replayed.",
)


def _existing_query(request: Request) -> Any:
    return _EXISTING.where(
        IdempotencyKey.credential == request.credential, IdempotencyKey.key == request.key
    )


def _mine(claim: Claim) -> Any:
    return (
        IdempotencyKey.id == claim.id,
        IdempotencyKey.created == claim.created,
        IdempotencyKey.status.is_(None),
    )


# Claims of concurrent requests on PostgreSQL: one statement per batch. The key is the pool.
async def _claim_batch(pool: asyncpg.Pool, requests: list[Request]) -> list[Claim | None]:
    now = utcnow()
    first: dict[tuple[str, str], int] = {}
    for i, r in enumerate(requests):
        first.setdefault((r.credential, r.key), i)  # a key twice in one batch: once claimed
    batch = [requests[i] for i in sorted(first.values())]
    columns = [[getattr(r, name) for r in batch] for name in Request.__dataclass_fields__]
    rows = await pool.fetch(_PG_CLAIM, *columns, now, now + LEASE)
    claimed = {(row["credential"], row["key"]): row["id"] for row in rows}
    results: list[Claim | None] = []
    for i, r in enumerate(requests):
        pk = claimed.get((r.credential, r.key)) if first[(r.credential, r.key)] == i else None
        results.append(Claim(pk, now, r) if pk is not None else None)
    return results


_claims: Coalescer[asyncpg.Pool, Request, Claim | None] = Coalescer(_claim_batch)


async def _claim_sqlite(db: Database, request: Request) -> Claim | None:
    now = utcnow()
    values = {
        **{name: getattr(request, name) for name in Request.__dataclass_fields__},
        "status": None,
        "headers": [],
        "body": b"",
        "created": now,
        "expires": now + LEASE,
    }
    stmt = claiming(sqlite_insert(IdempotencyKey).values(values)).returning(IdempotencyKey.id)
    async with db.sessionmaker() as session:
        pk = (await session.execute(stmt)).scalar()
        await session.commit()
    return Claim(pk, now, request) if pk is not None else None


async def claim(db: Database, request: Request) -> Claim | Existing | None:
    """The claim of ``request``'s key, or the row holding the key (None: that row vanished
    between the two statements, try again)."""
    if db.fast.native:
        # A claim needs no flush of its own: it only matters together with the change,
        # whose commit flushes the claim too (or with a stored refusal, likewise).
        claimed = await _claims.submit(await db.fast.lax_pool(), request)
    else:
        claimed = await _claim_sqlite(db, request)
    if claimed is not None:
        return claimed
    async with db.read_sessionmaker() as session:
        row = (await session.execute(_existing_query(request))).first()
    if row is None:
        return None
    existing = Existing(*row)
    if existing.recipe is None:
        return existing
    render = RECIPES.get(existing.recipe)
    answer = await render(db, request) if render is not None else UNREPLAYABLE
    if answer is None:
        return None
    return replace(existing, status=answer.status, headers=answer.headers, body=answer.body)


async def write_answer(session: AsyncSession, claim: Claim, answer: Answer, hours: float) -> bool:
    """Stores the answer in ``session``'s transaction; False when the claim is no longer
    this request's (its lease ran out and another request took the key)."""
    stmt = (
        update(IdempotencyKey)
        .where(*_mine(claim))
        .values(
            status=answer.status,
            headers=answer.headers,
            body=answer.body,
            expires=utcnow() + dt.timedelta(hours=hours),
        )
        .execution_options(synchronize_session=False)
    )
    result = await session.execute(stmt)
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def delete_claim(session: AsyncSession, claim: Claim) -> None:
    """Deletes the running row in ``session``'s transaction."""
    stmt = delete(IdempotencyKey).where(*_mine(claim))
    await session.execute(stmt.execution_options(synchronize_session=False))


async def store_alone(db: Database, claim: Claim, answer: Answer, hours: float) -> None:
    """The answer of a request that changed nothing in a transaction of its own (failed
    validation, refused access), or the release of its key when the answer is not kept."""
    async with db.sessionmaker() as session:
        if answer.storable:
            await write_answer(session, claim, answer, hours)
            claim.state = "stored"
        else:
            await delete_claim(session, claim)
            claim.state = "released"
        await session.commit()


async def release(db: Database, claim: Claim) -> None:
    """Frees the key of a request that failed (a retry may run it again)."""
    if claim.state != "pending":
        return
    async with db.sessionmaker() as session:
        await delete_claim(session, claim)
        await session.commit()
    claim.state = "released"


async def purge_expired(session: AsyncSession, now: dt.datetime) -> None:
    """Periodic: deletes answers past their retention and claims past their lease."""
    await session.execute(delete(IdempotencyKey).where(IdempotencyKey.expires < now))


@dataclass(eq=False)
class InSession(FastReader):
    """The fast reader of a keyed request's transaction: everything the request reads and
    writes goes through its session (on PostgreSQL the hot paths would otherwise write on
    the native pool, outside the transaction that must hold the answer)."""

    @property
    def native(self) -> bool:
        return False


_in_session: dict[int, InSession] = {}


def in_session(fast: FastReader) -> InSession:
    view = _in_session.get(id(fast))
    if view is None or view.engine is not fast.engine:
        view = _in_session[id(fast)] = InSession(fast.engine, fast.url)
    return view
