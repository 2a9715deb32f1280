"""What the check-in, quota, voucher and gift card exporters share.

The table formats they offer (with the reference's CSV names as aliases), the event's time
zone and currency, names in the export's language, date bounds typed as a day or a moment,
and :func:`chunks`: a statement's rows read a chunk at a time (a server-side cursor on
PostgreSQL), so an exporter loads what the rows refer to once per chunk, in a fixed number of
queries, and memory stays bounded whatever the size of the event.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import zoneinfo
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator
from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.taxes.compute import currency_places
from admit.db import write_intent
from admit.exports.base import Exporter, ExportRun, add_translations, result_filename, stream_rows
from admit.exports.formats import table_file
from admit.exports.tables import CSV_TYPE, XLSX_TYPE, Money, Sheet
from admit.jobs.queue import JobFailed
from admit.kit.resources.i18n import localized
from admit.models import Event, Item, ItemVariation

# ``default`` and ``semicolon`` are the reference's names for its CSV variants.
TableFormat = Literal["xlsx", "csv", "default", "semicolon"]
_TABLE_KINDS = {"xlsx": "xlsx", "csv": "csv", "default": "csv", "semicolon": "csv;"}
CHUNK = 500


def _zone(value: str) -> str:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f'"{value}" is not a known time zone.') from None
    return value


# An IANA time zone name (organizer-level exports, whose data spans events).
TimeZoneName = Annotated[str, AfterValidator(_zone)]


def _day_or_moment(value: Any) -> Any:
    """``2030-05-01`` is a whole day; anything longer a moment (naive: local time)."""
    if isinstance(value, str):
        text = value.strip()
        try:
            if len(text) == 10:
                return dt.date.fromisoformat(text)
            return dt.datetime.fromisoformat(text.replace("z", "Z"))
        except ValueError:
            raise ValueError("Enter a valid date or date/time (ISO 8601).") from None
    return value


DateBound = Annotated[dt.datetime | dt.date | None, BeforeValidator(_day_or_moment)]


def zone(name: str | None) -> zoneinfo.ZoneInfo:
    try:
        return zoneinfo.ZoneInfo(name or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return zoneinfo.ZoneInfo("UTC")


def bound(value: dt.date | dt.datetime | None, tz: zoneinfo.ZoneInfo, *, end: bool) -> Any:
    """A filter bound in UTC: a day starts at local midnight (an end day includes the whole
    day: the bound is the next midnight, exclusive); a naive moment is local time."""
    if value is None:
        return None
    if not isinstance(value, dt.datetime):
        day = value + dt.timedelta(days=1) if end else value
        value = dt.datetime.combine(day, dt.time(), tz)
    elif value.tzinfo is None:
        value = value.replace(tzinfo=tz)
    return value.astimezone(dt.UTC)


def check_range(start: Any, end: Any) -> None:
    if start is not None and end is not None and end <= start:
        raise JobFailed("The end of the date range must be after its start.")


def local(value: dt.datetime | None, tz: zoneinfo.ZoneInfo) -> dt.datetime | None:
    return value.astimezone(tz) if value is not None else None


def money(value: Decimal | None, places: int) -> Money | None:
    return Money(value, places) if value is not None else None


@dataclass(frozen=True)
class EventInfo:
    id: int
    slug: str
    name: dict[str, str]
    tz: zoneinfo.ZoneInfo
    currency: str
    places: int
    has_subevents: bool


async def event_info(session: AsyncSession, event_id: int) -> EventInfo:
    row = (
        await session.execute(
            select(
                Event.slug, Event.name, Event.timezone, Event.currency, Event.has_subevents
            ).where(Event.id == event_id)
        )
    ).one_or_none()
    if row is None:
        raise JobFailed("The event no longer exists.")
    return EventInfo(
        id=event_id,
        slug=row.slug,
        name=row.name or {},
        tz=zone(row.timezone),
        currency=row.currency,
        places=currency_places(row.currency),
        has_subevents=bool(row.has_subevents),
    )


@dataclass(frozen=True)
class ProductNames:
    """The event's item and variation names in the export's language."""

    items: dict[int, str]
    variations: dict[int, str]

    def __call__(self, item_id: int | None, variation_id: int | None) -> str:
        """``Item - Variation`` (or the item alone)."""
        if item_id is None:
            return ""
        text = self.items.get(item_id, "")
        if variation_id is not None and variation_id in self.variations:
            return f"{text} – {self.variations[variation_id]}"
        return text


async def product_namer(session: AsyncSession, event_id: int, locale: str) -> ProductNames:
    """The catalog's names, read once (two queries; the catalog is small next to what refers
    to it)."""
    items = {
        i: localized(n, locale)
        for i, n in await session.execute(
            select(Item.id, Item.name).where(Item.event_id == event_id)
        )
    }
    variations = {
        v: localized(n, locale)
        for v, n in await session.execute(
            select(ItemVariation.id, ItemVariation.value)
            .join(Item, Item.id == ItemVariation.item_id)
            .where(Item.event_id == event_id)
        )
    }
    return ProductNames(items, variations)


async def count_rows(session: AsyncSession, statement: Select[Any]) -> int:
    """How many rows ``statement`` gives (for the progress), without its ordering."""
    inner = statement.order_by(None).subquery()
    return int(await session.scalar(select(func.count()).select_from(inner)) or 0)


async def chunks(
    session: AsyncSession, statement: Select[Any], size: int = CHUNK
) -> AsyncIterator[list[Any]]:
    """The statement's rows in lists of at most ``size``, read through one cursor."""
    batch: list[Any] = []
    async for row in stream_rows(session, statement, chunk=size):
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


@contextlib.asynccontextmanager
async def reading(run: ExportRun) -> AsyncIterator[None]:
    """The export's reads as a read transaction on SQLite.

    A session there opens with ``BEGIN IMMEDIATE`` (the write lock) unless the request said
    it only reads; an export holding that lock for its whole run would block the job's own
    progress and heartbeat writes (and every other writer). The transaction the run opened
    is ended (it only read the owner's permissions) and the export reads in a deferred one,
    a consistent snapshot of its own. A no-op on PostgreSQL, where the run's REPEATABLE READ
    snapshot is kept, and once ``run_export`` itself starts SQLite sessions read-only.
    """
    if not run.job.db.is_sqlite or not write_intent.get():
        yield
        return
    await run.session.rollback()
    token = write_intent.set(False)
    try:
        yield
    finally:
        write_intent.reset(token)


class ListExporter(Exporter):
    """An exporter whose :meth:`write` reads inside :func:`reading`."""

    async def export(self, run: ExportRun) -> None:
        async with reading(run):
            await self.write(run)

    async def write(self, run: ExportRun) -> None:
        raise NotImplementedError


def file_kind(fmt: str) -> str:
    return _TABLE_KINDS[fmt]


@contextlib.asynccontextmanager
async def table(
    run: ExportRun,
    fmt: str,
    *,
    event_slug: str | None,
    title: str,
    headers: Sequence[str],
) -> AsyncIterator[Sheet]:
    """A one-sheet table file as the job's result, in the requested format; the sheet takes
    rows as they come."""
    kind = file_kind(fmt)
    extension = "xlsx" if kind == "xlsx" else "csv"
    filename = result_filename(run.organizer_slug, event_slug, run.exporter.identifier, extension)
    content_type = XLSX_TYPE if kind == "xlsx" else CSV_TYPE
    async with run.result_file(filename, content_type) as handle:
        book = table_file(kind, handle, yes=run.t("Yes"), no=run.t("No"))
        yield book.sheet(title, headers)
        book.close()


add_translations(
    "de",
    {
        "Yes": "Ja",
        "No": "Nein",
        "Infinite": "Unbegrenzt",
        "Date": "Datum",
        "Start date": "Beginn",
        "End date": "Ende",
        "Product": "Produkt",
        "Variation": "Variante",
        "Order code": "Bestellnummer",
        "Currency": "Währung",
        "Test mode": "Testmodus",
        "Event": "Veranstaltung",
        "Seat": "Sitzplatz",
        "Comment": "Kommentar",
    },
)
