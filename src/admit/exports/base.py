"""What an exporter is, and what it gets when its job runs.

An exporter turns event or organizer data into a file. It declares an ``identifier`` (the
reference's where it has the same export), a ``verbose_name``, the ``level`` it lives at, the
permission its owner needs (per event for event data), and an :class:`ExportInput` model: the
model validates the run request (400 with field errors) and describes the inputs in the
descriptor (name, required, choices from ``Literal`` types). The job hands :meth:`Exporter.export`
an :class:`ExportRun`: a session, the events it may read (checked at run time against the
owner's permissions), the validated input, the locale, and the job's progress and result file.

Rows are read in chunks (:func:`stream_rows`) and written as they come, so memory stays bounded
whatever the size of the event.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import typing
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, ClassVar

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.jobs.queue import JobContext
from admit.kit.http.context import Principal
from admit.kit.resources.i18n import language_of

EVENT = "event"
ORGANIZER = "organizer"


class ExportInput(BaseModel):
    """Base of every exporter's input; unknown keys are ignored (clients send form data
    written for other versions), known ones are validated strictly."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Exporter:
    identifier: ClassVar[str]
    verbose_name: ClassVar[str]
    level: ClassVar[str] = EVENT
    # Event level: an event permission the owner needs for every event exported.
    # Organizer level: an ``organizer.*`` permission, or an event permission needed per event.
    permission: ClassVar[str] = "event.orders:read"
    Input: ClassVar[type[ExportInput]] = ExportInput

    def input_parameters(self) -> list[dict[str, Any]]:
        """The descriptor's ``input_parameters``, read off the input model."""
        described = []
        for name, info in self.Input.model_fields.items():
            entry: dict[str, Any] = {"name": info.alias or name, "required": info.is_required()}
            choices = literal_choices(info.annotation)
            if choices is not None:
                entry["choices"] = choices
            described.append(entry)
        return described

    def descriptor(self) -> dict[str, Any]:
        return {
            "identifier": self.identifier,
            "verbose_name": self.verbose_name,
            "input_parameters": self.input_parameters(),
        }

    async def check_input(
        self, session: AsyncSession, event_id: int | None, params: Any
    ) -> dict[str, list[str]]:
        """Field errors only the database can tell (a list id of another event): checked
        when the run is requested, so such input is a 400 rather than a failed job."""
        return {}

    async def export(self, run: ExportRun) -> None:
        """Writes the file through ``run.result_file``; raise ``JobFailed`` for a refusal
        the owner should read."""
        raise NotImplementedError


def literal_choices(annotation: Any) -> list[str] | None:
    """Choices of a ``Literal[...]`` annotation (also inside ``Optional``/lists), else None."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return [str(value) for value in typing.get_args(annotation)]
    for arg in typing.get_args(annotation):
        found = literal_choices(arg)
        if found is not None:
            return found
    return None


# (level, identifier) -> exporter: filled by the exporter modules as they are imported, read
# through :mod:`admit.exports.lookup`, which imports them all.
REGISTRY: dict[tuple[str, str], Exporter] = {}


def register(cls: type[Exporter]) -> type[Exporter]:
    """Class decorator: one instance of the exporter serves every run."""
    REGISTRY[(cls.level, cls.identifier)] = cls()
    return cls


# What a result file is called (kept safe for any file system).
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def result_filename(organizer: str, event: str | None, identifier: str, extension: str) -> str:
    """``<organizer>_<event>_<identifier>_<date>.<ext>``: readable and safe in any OS."""
    parts = [organizer, event, identifier, dt.datetime.now(dt.UTC).strftime("%Y%m%d%H%M")]
    stem = "_".join(_UNSAFE.sub("-", p) for p in parts if p)
    return f"{stem}.{extension}"


# Column headers and fixed texts per locale: each exporter module adds its own with
# :func:`add_translations`; a text without a translation stays English.
TRANSLATIONS: dict[str, dict[str, str]] = {}


def add_translations(locale: str, texts: dict[str, str]) -> None:
    TRANSLATIONS.setdefault(locale, {}).update(texts)


def translate(locale: str, text: str) -> str:
    for candidate in (locale, language_of(locale)):
        found = TRANSLATIONS.get(candidate, {}).get(text)
        if found is not None:
            return found
    return text


@dataclass
class ExportRun:
    job: JobContext
    session: AsyncSession
    exporter: Exporter
    organizer_id: int
    organizer_slug: str
    # The events this run covers, each permitted to the owner now (one for event level).
    event_ids: list[int]
    params: Any
    locale: str
    principal: Principal
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def event_id(self) -> int:
        """The event of an event-level export."""
        return self.event_ids[0]

    def t(self, text: str) -> str:
        """``text`` in the export's locale."""
        return translate(self.locale, text)

    async def progress(self, done: int, total: int) -> None:
        await self.job.progress(100 * done // total if total else 0)

    def result_file(
        self, filename: str, content_type: str
    ) -> contextlib.AbstractAsyncContextManager[BinaryIO]:
        return self.job.result_file(filename, content_type)


async def stream_rows(
    session: AsyncSession, statement: Select[Any], chunk: int = 2000
) -> AsyncIterator[Any]:
    """The statement's rows, fetched ``chunk`` at a time (a server-side cursor on
    PostgreSQL): a large export never holds its whole result in memory."""
    result = await session.stream(statement.execution_options(yield_per=chunk))
    async for partition in result.partitions(chunk):
        for row in partition:
            yield row


def chunked(values: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]
