"""Reading an export's rows: straight from asyncpg on PostgreSQL, in chunks, by position.

Exports read far more rows than requests do, so their statements skip what SQLAlchemy adds
per row; see :class:`Reader`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from sqlalchemy import Integer, Select, any_, bindparam
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession

# Rows per chunk of a streamed statement.
CHUNK = 2000
# Rows a pipelined export works through between two looks at its reads (see
# :meth:`Reader.pipelined`).
BREATHE = 250

T = TypeVar("T")


def among_ids(column: Any, dialect: str) -> Any:
    """``column`` among the ``ids`` parameter: one array parameter on PostgreSQL (compiled
    once, whatever the chunk's size), an expanding ``IN`` elsewhere."""
    if dialect == "postgresql":
        return column == any_(bindparam("ids", type_=ARRAY(Integer)))
    return column.in_(bindparam("ids", expanding=True))


class Reader:
    """Runs an export's statements on its session's connection, in its transaction.

    On PostgreSQL they go straight to the asyncpg connection underneath (compiled once per
    statement, a server-side cursor for the big ones): SQLAlchemy's per-row result handling
    cost more than the export's own work per row (measured on 100,000 positions). Elsewhere
    they run as Core statements. Rows are tuples, read by position.

    One connection runs one statement at a time: every read takes :attr:`_turn`, so a
    statement the exporter sends while :meth:`pipelined` reads ahead waits its turn.
    """

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.dialect = session.bind.dialect
        self.native = self.dialect.name == "postgresql"
        self._compiled: dict[int, tuple[Any, str, tuple[str, ...], dict[str, Any]]] = {}
        self._turn = asyncio.Lock()

    def _sql(self, statement: Any) -> tuple[Any, str, tuple[str, ...], dict[str, Any]]:
        """The statement compiled for asyncpg: SQL, parameter names in order, defaults."""
        found = self._compiled.get(id(statement))
        if found is None or found[0] is not statement:
            compiled = statement.compile(
                dialect=self.dialect, compile_kwargs={"render_postcompile": True}
            )
            names = tuple(compiled.positiontup or ())
            found = (statement, compiled.string, names, dict(compiled.params))
            self._compiled[id(statement)] = found
        return found

    async def fetch(self, statement: Any, params: dict[str, Any] | None = None) -> list[Any]:
        async with self._turn:
            conn = await self.session.connection()
            if not self.native:
                return list(await conn.execute(statement, params or {}))
            _, sql, names, defaults = self._sql(statement)
            values = {**defaults, **(params or {})}
            driver = (await conn.get_raw_connection()).driver_connection
            return await driver.fetch(sql, *(values[n] for n in names))

    async def chunks(self, statement: Any, size: int | None = None) -> AsyncIterator[list[Any]]:
        """The statement's rows in lists of at most ``size`` (default :data:`CHUNK`), read
        through one cursor."""
        size = size or CHUNK
        conn = await self.session.connection()
        if not self.native:
            async with self._turn:
                result = await conn.stream(statement.execution_options(yield_per=size))
            partitions = result.partitions(size).__aiter__()
            while True:
                async with self._turn:
                    partition = await anext(partitions, None)
                if partition is None:
                    return
                yield list(partition)
        _, sql, names, values = self._sql(statement)
        driver = (await conn.get_raw_connection()).driver_connection
        async with self._turn:
            cursor = await driver.cursor(sql, *(values[n] for n in names))
        while True:
            async with self._turn:
                batch = await cursor.fetch(size)
            if not batch:
                return
            yield batch

    async def pipelined(
        self,
        statement: Any,
        load: Callable[[list[Any]], Awaitable[T]],
        size: int | None = None,
    ) -> AsyncIterator[tuple[list[Any], T]]:
        """The statement's chunks, each with what ``load`` reads for it (answers, totals),
        read one chunk ahead: while the caller turns a chunk into rows, the database
        produces the next one on the other core. The caller should ``await
        asyncio.sleep(0)`` every :data:`BREATHE` rows or so, which lets the read ahead send
        its next statement as soon as the previous one answered (an XLSX order list spent
        a fifth of its time waiting for the database before)."""
        chunks = self.chunks(statement, size).__aiter__()

        async def read_ahead() -> tuple[list[Any], T] | None:
            chunk = await anext(chunks, None)
            return None if chunk is None else (chunk, await load(chunk))

        pending = asyncio.ensure_future(read_ahead())
        try:
            while (ready := await pending) is not None:
                pending = asyncio.ensure_future(read_ahead())
                await asyncio.sleep(0)  # the read ahead sends its statement now
                yield ready
        finally:
            if not pending.done():
                pending.cancel()
                await asyncio.gather(pending, return_exceptions=True)


async def chunks(
    session: AsyncSession, statement: Select[Any], size: int | None = None
) -> AsyncIterator[list[Any]]:
    """The statement's rows in lists of at most ``size`` (see :class:`Reader`)."""
    async for batch in Reader(session).chunks(statement, size):
        yield batch
