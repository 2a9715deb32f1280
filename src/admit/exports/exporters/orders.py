"""The order list (``orderlist``): orders, positions and fees as XLSX sheets or CSV files.

At event level it covers the URL's event; at organizer level the events named in ``events``
(default: every event the owner may read orders of, checked again when the job runs), with an
event column. Inputs:

``_format``
    ``xlsx`` (sheets Orders, Order positions, Fees), or one table as CSV:
    ``orders:default``, ``positions:default``, ``fees:default`` (comma-separated) and
    ``orders:semicolon``, ``positions:semicolon``, ``fees:semicolon``.
``paid_only``
    Only paid orders (default false).
``include_payment_amounts``
    One column per payment provider with the confirmed amount paid through it.
``date_from`` / ``date_to``
    Orders placed on these days (``YYYY-MM-DD``, inclusive, in the event's time zone).
``group_multiple_choice``
    Multiple-choice answers in one column per question (default: one column per option).

Every question of the event is a column of the positions table, in the questions' order;
money has the currency's decimal places; datetimes are the event's local time; column headers
are in the export's language.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Annotated, Any, Literal

import orjson
from pydantic import Field, ValidationInfo, field_validator

from admit.exports.base import (
    EVENT,
    ORGANIZER,
    Exporter,
    ExportInput,
    ExportRun,
    register,
    result_filename,
)
from admit.exports.exporters.answers import answer_cells, answers_statement
from admit.exports.exporters.order_texts import FEE_TYPES, ORDER_STATUS
from admit.exports.exporters.orderdata import (
    Catalog,
    OrderExtrasReader,
    count,
    fees_query,
    load_catalog,
    order_filters,
    order_rows_query,
    parent_numbers,
    payment_providers,
    positions_query,
    seat_name,
)
from admit.exports.formats import table_file
from admit.exports.reader import BREATHE, Reader
from admit.exports.tables import (
    CSV_TYPE,
    XLSX_TYPE,
    Money,
    TableFile,
    TableLimitExceeded,
)
from admit.jobs.queue import JobFailed

OrderListFormat = Literal[
    "xlsx",
    "orders:default",
    "orders:semicolon",
    "positions:default",
    "positions:semicolon",
    "fees:default",
    "fees:semicolon",
]
# An event's slug, as the URL names it.
Slug = Annotated[str, Field(min_length=1, max_length=50)]


class OrderListInput(ExportInput):
    format: OrderListFormat = Field(alias="_format")
    paid_only: bool = False
    include_payment_amounts: bool = False
    group_multiple_choice: bool = False
    date_from: dt.date | None = None
    date_to: dt.date | None = None

    @field_validator("date_to")
    @classmethod
    def _after_start(cls, value: dt.date | None, info: ValidationInfo) -> dt.date | None:
        start = info.data.get("date_from")
        if value is not None and start is not None and value < start:
            raise ValueError("The end of the date range must not be before its start.")
        return value


class OrganizerOrderListInput(OrderListInput):
    # Event slugs; none: every event the owner may read orders of.
    events: list[Slug] = Field(default_factory=list, max_length=1000)


@register
class OrderList(Exporter):
    identifier = "orderlist"
    verbose_name = "Order data"
    level = EVENT
    permission = "event.orders:read"
    Input = OrderListInput

    async def export(self, run: ExportRun) -> None:
        await write_order_list(run)


@register
class OrganizerOrderList(OrderList):
    level = ORGANIZER
    verbose_name = "Order data (all events)"
    Input = OrganizerOrderListInput


class Progress:
    """Moves the job's percentage as rows are written (the engine throttles the writes)."""

    def __init__(self, run: ExportRun, total: int) -> None:
        self.run, self.total, self.done = run, total, 0

    async def add(self, rows: int) -> None:
        self.done += rows
        await self.run.progress(min(self.done, self.total), self.total)


async def write_order_list(run: ExportRun) -> None:
    params: OrderListInput = run.params
    session = run.session
    catalog = await load_catalog(
        session, run.event_ids, run.locale, group_choices=params.group_multiple_choice
    )
    conditions = order_filters(
        catalog.events,
        paid_only=params.paid_only,
        date_from=params.date_from,
        date_to=params.date_to,
    )
    if params.format == "xlsx":
        kind, tables = "xlsx", ("orders", "positions", "fees")
    else:
        what, variant = params.format.split(":")
        kind, tables = ("csv;" if variant == "semicolon" else "csv"), (what,)
    queries = {
        "orders": order_rows_query(conditions),
        "positions": positions_query(conditions),
        "fees": fees_query(conditions),
    }
    total = 0
    for name in tables:
        total += await count(session, queries[name])
    progress = Progress(run, total)
    providers: list[str] = []
    if params.include_payment_amounts and "orders" in tables:
        providers = await payment_providers(session, conditions)
    single = run.exporter.level == EVENT
    event_slug = catalog.events[run.event_id].slug if single and catalog.events else None
    stem = run.exporter.identifier if kind == "xlsx" else f"{run.exporter.identifier}-{tables[0]}"
    extension = "xlsx" if kind == "xlsx" else "csv"
    filename = result_filename(run.organizer_slug, event_slug, stem, extension)
    writer = OrderListWriter(run, catalog, multi=not single)
    await run.progress(0, total)
    try:
        async with run.result_file(filename, XLSX_TYPE if kind == "xlsx" else CSV_TYPE) as handle:
            book = table_file(kind, handle, yes=run.t("Yes"), no=run.t("No"))
            if "orders" in tables:
                await writer.orders(book, queries["orders"], providers, progress)
            if "positions" in tables:
                await writer.positions(book, queries["positions"], progress)
            if "fees" in tables:
                await writer.fees(book, queries["fees"], progress)
            # Zipping an XLSX takes a while: in a thread, so heartbeats go on meanwhile.
            await asyncio.to_thread(book.close)
    except TableLimitExceeded as exc:
        raise JobFailed(str(exc)) from None


class OrderListWriter:
    """Writes the three tables; headers and fixed texts translated once, up front."""

    def __init__(self, run: ExportRun, catalog: Catalog, *, multi: bool) -> None:
        self.run = run
        self.session = run.session
        self.catalog = catalog
        self.multi = multi
        t = run.t
        self.t = t
        self.status = {code: t(label) for code, label in ORDER_STATUS.items()}
        self.canceled = t("Canceled")
        self.fee_types = {code: t(label) for code, label in FEE_TYPES.items()}
        self.reader = Reader(self.session)
        self.dialect = self.reader.dialect.name

    def _event_columns(self) -> list[str]:
        return [self.t("Event")] if self.multi else []

    async def orders(
        self, book: TableFile, query: Any, providers: list[str], progress: Progress
    ) -> None:
        t = self.t
        multi = self.multi
        headers = [
            *self._event_columns(),
            t("Order code"),
            t("Status"),
            t("E-mail"),
            t("Phone number"),
            t("Order date"),
            t("Order total"),
            *([t("Currency")] if multi else []),
            t("Taxes"),
            t("Positions"),
            t("Payment provider"),
            t("Payment date"),
            *[t("Paid via {provider}").format(provider=p) for p in providers],
            t("Invoice company"),
            t("Invoice name"),
            t("Invoice address"),
            t("Invoice ZIP code"),
            t("Invoice city"),
            t("Invoice country"),
            t("Invoice state"),
            t("VAT ID"),
            t("Language"),
            t("Sales channel"),
            t("Comment"),
            t("Test mode"),
        ]
        sheet = book.sheet(t("Orders"), headers)
        events, status = self.catalog.events, self.status
        extras_reader = OrderExtrasReader(self.dialect)

        async def load(chunk: list[Any]) -> Any:
            return await extras_reader.read(self.reader, [r[0] for r in chunk])

        async for chunk, extras in self.reader.pipelined(query, load):
            for n, (
                order_id, event_id, code, order_status, testmode, email, phone, locale,
                ordered, total, channel, comment, address,
            ) in enumerate(chunk):  # fmt: skip
                if not n % BREATHE:
                    await asyncio.sleep(0)  # see Reader.pipelined
                event = events[event_id]
                places, tz = event.places, event.tz
                extra = extras[order_id]
                if type(address) is str:  # jsonb as asyncpg hands it over
                    address = orjson.loads(address)
                address = address or {}
                paid = extra.paid
                row = [event.slug] if multi else []
                row += [
                    code,
                    status.get(order_status, order_status),
                    email,
                    phone,
                    ordered.astimezone(tz),
                    Money(total, places),
                ]
                if multi:
                    row.append(event.currency)
                row += [
                    Money(extra.taxes, places),
                    extra.positions,
                    extra.provider,
                    extra.payment_date.astimezone(tz) if extra.payment_date else None,
                ]
                row += [Money(paid[p], places) if p in paid else None for p in providers]
                row += [
                    address.get("company") or None,
                    address.get("name") or _name(address.get("name_parts")),
                    address.get("street") or None,
                    address.get("zipcode") or None,
                    address.get("city") or None,
                    address.get("country") or None,
                    address.get("state") or None,
                    address.get("vat_id") or None,
                    locale,
                    channel,
                    comment or None,
                    testmode,
                ]
                sheet.row(row)
            await progress.add(len(chunk))

    async def positions(self, book: TableFile, query: Any, progress: Progress) -> None:
        t = self.t
        catalog = self.catalog
        dates = catalog.any_subevents
        multi = self.multi
        headers = [
            *self._event_columns(),
            t("Order code"),
            t("Position ID"),
            t("Status"),
            t("Product"),
            t("Variation"),
            t("Price"),
            t("Tax rate"),
            t("Tax value"),
            t("Attendee name"),
            t("Attendee e-mail"),
            t("Company"),
            t("Address"),
            t("ZIP code"),
            t("City"),
            t("Country"),
            t("State"),
            t("Voucher"),
            *([t("Date")] if dates else []),
            t("Seat"),
            t("Ticket secret"),
            t("Add-on to position"),
            t("Order date"),
            t("Order e-mail"),
            *catalog.answers.headers,
        ]
        sheet = book.sheet(t("Order positions"), headers)
        events = catalog.events
        status, canceled_label = self.status, self.canceled
        no_answers = [None] * len(catalog.answers)
        answers_query = answers_statement(self.dialect)
        write = sheet.row
        last_order: int | None = None
        local: dt.datetime | None = None
        numbers: dict[int, int] = {}  # the current order's positions: id -> number

        async def load(chunk: list[Any]) -> dict[int, list[Any]]:
            ids = [r[0] for r in chunk]
            return await answer_cells(self.reader, answers_query, catalog.answers, ids)

        async for chunk, answers in self.reader.pipelined(query, load):
            rows: list[list[Any]] = []
            missing: list[tuple[list[Any], int, int]] = []  # (row, column, parent id)
            for n, (
                pos_id, order_id, number, item_id, variation_id, subevent_id, price, tax_rate,
                tax_value, name, email, company, street, zipcode, city, country, state,
                secret, canceled, parent_id, event_id, code, order_status, order_email,
                ordered, seat_label, seat_zone, seat_row, seat_number, voucher,
            ) in enumerate(chunk):  # fmt: skip
                if not n % BREATHE:
                    await asyncio.sleep(0)  # see Reader.pipelined
                event = events[event_id]
                places = event.places
                if order_id != last_order:  # an order's positions come together
                    last_order, local = order_id, ordered.astimezone(event.tz)
                    numbers = {}
                numbers[pos_id] = number
                row = [
                    code,
                    number,
                    canceled_label if canceled else status.get(order_status, order_status),
                    event.items.get(item_id),
                    event.variations.get(variation_id) if variation_id else None,
                    Money(price, places),
                    tax_rate,
                    Money(tax_value, places),
                    name,
                    email,
                    company,
                    street,
                    zipcode,
                    city,
                    country,
                    state,
                    voucher,
                ]
                if dates:
                    found = event.subevents.get(subevent_id) if subevent_id else None
                    row.append(f"{found[0]} – {found[1]:%Y-%m-%d %H:%M}" if found else None)
                parent = None
                if parent_id is not None:
                    # Its parent: seen before it in the same order, as a rule.
                    parent = numbers.get(parent_id)
                    if parent is None:
                        missing.append((row, len(row) + 2, parent_id))
                row += [
                    seat_name(seat_label, seat_zone, seat_row, seat_number)
                    if seat_label or seat_number
                    else None,
                    secret,
                    parent,
                    local,
                    order_email,
                ]
                row += answers.get(pos_id) or no_answers
                if multi:
                    row.insert(0, event.slug)
                rows.append(row)
            if missing:
                found = await parent_numbers(self.reader, [m[2] for m in missing])
                shift = 1 if multi else 0
                for row, column, parent_id in missing:
                    row[column + shift] = found.get(parent_id)
            for n, row in enumerate(rows):
                if not n % BREATHE:
                    await asyncio.sleep(0)
                write(row)
            await progress.add(len(chunk))

    async def fees(self, book: TableFile, query: Any, progress: Progress) -> None:
        t = self.t
        multi = self.multi
        headers = [
            *self._event_columns(),
            t("Order code"),
            t("Status"),
            t("Fee type"),
            t("Description"),
            t("Value"),
            t("Tax rate"),
            t("Tax value"),
            t("Canceled"),
        ]
        sheet = book.sheet(t("Fees"), headers)
        events, status, types = self.catalog.events, self.status, self.fee_types
        async for chunk in self.reader.chunks(query):
            for (
                _id, fee_type, description, _internal, value, tax_rate, tax_value, _rule,
                canceled, event_id, code, order_status,
            ) in chunk:  # fmt: skip
                places = events[event_id].places
                row = [events[event_id].slug] if multi else []
                row += [
                    code,
                    status.get(order_status, order_status),
                    types.get(fee_type, fee_type),
                    description or None,
                    Money(value, places),
                    tax_rate,
                    Money(tax_value, places),
                    canceled,
                ]
                sheet.row(row)
            await progress.add(len(chunk))


def _name(parts: Any) -> str | None:
    if not isinstance(parts, dict):
        return None
    return " ".join(str(v) for k, v in parts.items() if k != "_scheme" and v) or None
