"""From positions to a PDF: which layout and values each page gets, the fingerprint of all
that, and the rendering itself (in a thread: drawing is CPU work the event loop must not wait
on).

The fingerprint is a hash of everything a document prints: per page the layout (its id and
its content), the background and picture files (their storage keys, which never get new
content), the locale and every variable's value, plus :data:`RENDERER_VERSION`. A download
reuses a file rendered for the same fingerprint; any change to a printed value, the layout or
the drawing code gives a new fingerprint and so a new file.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

import orjson

from admit.jobs.storage import FileStore, StoredFileMissing
from admit.models import TicketLayout, UploadedFile
from admit.tickets.errors import RenderError
from admit.tickets.loading import Batch, PositionData, picture_uuid
from admit.tickets.selection import BUILTIN_LAYOUT, BUILTIN_NAME, layout_for
from admit.tickets.values import ticket_values

if TYPE_CHECKING:
    from admit.tickets.render import RenderLayout

# Part of every fingerprint: raise it when the drawing changes, and cached tickets render anew.
RENDERER_VERSION = 1


@dataclass(frozen=True)
class Part:
    """One page asked for: a position, optionally with the channel or layout to use."""

    position_id: int
    override_channel: str | None = None
    override_layout: int | None = None


@dataclass
class PlannedPage:
    data: PositionData
    layout: TicketLayout | None  # None: the built-in layout
    values: dict[str, str]
    picture: UploadedFile | None = None  # the product picture's upload, if any


class MissingPositions(Exception):
    def __init__(self, ids: list[int]) -> None:
        super().__init__(", ".join(str(i) for i in ids))
        self.ids = ids


def plan(batch: Batch, parts: Sequence[Part]) -> list[PlannedPage]:
    """A page per part, in order; raises :class:`MissingPositions` for positions the batch
    does not hold (gone since they were asked for)."""
    missing = [p.position_id for p in parts if p.position_id not in batch.positions]
    if missing:
        raise MissingPositions(missing)
    pages = []
    for part in parts:
        data = batch.positions[part.position_id]
        layout = layout_for(
            batch,
            data,
            override_channel=part.override_channel,
            override_layout=part.override_layout,
        )
        handle = picture_uuid(data.item.picture)
        picture = batch.pictures.get(handle) if handle else None
        pages.append(PlannedPage(data, layout, ticket_values(batch, data), picture))
    return pages


def _layout_digest(layout: TicketLayout | None) -> str:
    content = BUILTIN_LAYOUT if layout is None else layout.layout
    return hashlib.sha256(orjson.dumps(content, option=orjson.OPT_SORT_KEYS)).hexdigest()


def fingerprint(batch: Batch, pages: Sequence[PlannedPage]) -> str:
    """The hash of everything the pages print (see the module docstring)."""
    digests: dict[int | None, str] = {}
    entries = []
    for page in pages:
        layout_id = page.layout.id if page.layout is not None else None
        if layout_id not in digests:
            digests[layout_id] = _layout_digest(page.layout)
        background = None
        if page.layout is not None and page.layout.background_id:
            upload = batch.uploads.get(page.layout.background_id)
            background = upload.key if upload else None
        entries.append(
            [
                layout_id,
                digests[layout_id],
                background,
                page.picture.key if page.picture else None,
                page.data.order.locale,
                page.values,
            ]
        )
    payload = orjson.dumps([RENDERER_VERSION, entries], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(payload).hexdigest()


async def _read(store: FileStore, key: str) -> bytes:
    data = bytearray()
    async for chunk in store.open(key):
        data += chunk
    return bytes(data)


Progress = Callable[[int], Awaitable[None]]


async def render_pages(
    store: FileStore,
    batch: Batch,
    pages: Sequence[PlannedPage],
    out: BinaryIO,
    *,
    title: str,
    progress: Progress | None = None,
    stopped: Callable[[], bool] | None = None,
) -> int:
    """Draws ``pages`` into ``out`` (one PDF); raises :class:`RenderError` with a message
    when a layout, its background or a picture cannot be used. ``progress`` hears the
    percentage done (10 to 95) while the pages are drawn."""
    # The drawing libraries (reportlab, pypdf, zxing) load here, in the process that draws.
    from admit.tickets.render import RenderLayout, TicketPage, render_tickets

    files: dict[str, bytes] = {}

    async def content(upload: UploadedFile, what: str) -> bytes:
        if upload.key not in files:
            try:
                files[upload.key] = await _read(store, upload.key)
            except StoredFileMissing:
                raise RenderError(f"The {what} file is missing from the file store.") from None
        return files[upload.key]

    layouts: dict[int | None, RenderLayout] = {}
    tickets = []
    for page in pages:
        layout_id = page.layout.id if page.layout is not None else None
        if layout_id not in layouts:
            if page.layout is None:
                layouts[None] = RenderLayout(None, BUILTIN_NAME, BUILTIN_LAYOUT)
            else:
                background = None
                upload = batch.uploads.get(page.layout.background_id or 0)
                if upload is not None:
                    background = await content(upload, f'background of layout "{page.layout.name}"')
                layouts[layout_id] = RenderLayout(
                    page.layout.id, page.layout.name, page.layout.layout, background
                )
        picture = await content(page.picture, "product picture") if page.picture else None
        tickets.append(
            TicketPage(
                layouts[layout_id],
                page.values,
                page.data.order.locale or "en",
                {"item_picture": picture},
            )
        )
    loop = asyncio.get_running_loop()
    report = None
    if progress is not None:
        total = len(tickets)

        def report(done: int) -> None:  # called in the drawing thread
            asyncio.run_coroutine_threadsafe(progress(10 + 85 * done // total), loop)

    return await asyncio.to_thread(
        render_tickets, tickets, out, title=title, progress=report, stopped=stopped
    )
