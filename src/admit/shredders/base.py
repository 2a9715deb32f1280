"""What a shredder is: the data it is about to remove (as parts of the export) and the removal.

A shredder declares an ``identifier`` (the reference's where it has the same one) and a
``verbose_name``. :meth:`Shredder.parts` describes the data it would remove *now*, as JSON
documents and stored files; the export writes them into a ZIP, and the shred job renders them
again to see whether the data is still what was exported (see :mod:`admit.shredders.archive`).
A part lists only records that still hold data the shredder removes, so a shredder whose
data is gone (or was never there) has nothing to render: a re-run after a crash is a no-op.

:meth:`Shredder.shred` removes the data inside the transaction it is given (one per
shredder); it only changes columns that hold personal data, so order codes, dates, products,
prices, taxes, totals and states — what tax law and the sales ledger need — stay as they were.
Store files it makes unreachable are named in ``run.delete_keys``; the job deletes them right
before the commit (the export holds a copy).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.jobs.storage import FileStore


@dataclass
class JsonMap:
    """A JSON object written one member a line: ``{"<key>": <value>, ...}``."""

    name: str
    pairs: AsyncIterator[tuple[str, Any]]


@dataclass
class JsonList:
    """A JSON array written one element a line."""

    name: str
    items: AsyncIterator[Any]


@dataclass
class StoredFile:
    """A file of the file store, copied into the export as it is (a missing one is empty)."""

    name: str
    key: str


Part = JsonMap | JsonList | StoredFile


@dataclass
class ShredRun:
    """What a shredder works with: one transaction, the event, and the file store."""

    session: AsyncSession
    store: FileStore
    organizer_id: int
    event_id: int
    # Store keys whose files go with the rows the shred removed.
    delete_keys: list[str] = field(default_factory=list)


class Shredder:
    identifier: ClassVar[str]
    verbose_name: ClassVar[str]

    def parts(self, run: ShredRun) -> AsyncIterator[Part]:
        """The data this shredder would remove now, in a stable order."""
        raise NotImplementedError

    async def shred(self, run: ShredRun) -> None:
        """Removes the data in ``run.session`` (flush only: the job commits)."""
        raise NotImplementedError

    def descriptor(self) -> dict[str, str]:
        return {"identifier": self.identifier, "verbose_name": self.verbose_name}


# Filled by the shredder modules as they are imported; read through :mod:`admit.shredders.lookup`.
REGISTRY: dict[str, Shredder] = {}


def register(cls: type[Shredder]) -> type[Shredder]:
    """Class decorator: one instance serves every run."""
    REGISTRY[cls.identifier] = cls()
    return cls


def position_key(code: str, positionid: int) -> str:
    """How exports name a ticket: ``<order code>-<position id>``, as the reference does."""
    return f"{code}-{positionid}"


def present(value: Any) -> bool:
    """Whether a column holds data (``""``, ``{}`` and ``[]`` hold none)."""
    return value is not None and value != "" and value != {} and value != []


async def stream(
    session: AsyncSession, statement: Select[Any], chunk: int = 2000
) -> AsyncIterator[Any]:
    """The statement's rows, ``chunk`` at a time (a server-side cursor on PostgreSQL): an
    export of a large event never holds its rows in memory."""
    result = await session.stream(statement.execution_options(yield_per=chunk))
    async for partition in result.partitions(chunk):
        for row in partition:
            yield row
