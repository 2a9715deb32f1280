"""The attendees of one check-in list: ``checkinlist`` as XLSX, CSV or a printed PDF sheet,
and ``checkinlistpdf`` (the reference's name for the PDF alone). Every ticket on the list (its
products, its date, pending orders as the list says), with check-in state and times in the
event's time zone, and the answers to the event's questions as columns. The scan history is
``checkinlog`` (:mod:`admit.exports.exporters.checkinlog`).

The list must belong to the event: :meth:`CheckinListExporter.check_input` says so with a
field error (a route that has the database at hand can answer 400 with it) and the run checks
it again, failing the job with the same message, since the list may be deleted in between.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.exports.base import ExportInput, ExportRun, add_translations, register, result_filename
from admit.exports.exporters.attendee_pdf import Checkbox, ChunkedDocument, column_widths
from admit.exports.exporters.attendees import (
    Attendee,
    Catalog,
    Selection,
    attendee_query,
    attendees,
    load_catalog,
    seat_columns,
)
from admit.exports.exporters.listing import (
    DateBound,
    EventInfo,
    ListExporter,
    bound,
    check_range,
    count_rows,
    event_info,
    local,
    localized,
    money,
    table,
)
from admit.jobs.queue import JobFailed
from admit.kit.resources.filtering import PK_MAX
from admit.models import (
    CheckinList,
    Question,
    SubEvent,
)

Pk = Annotated[int, Field(ge=1, le=PK_MAX)]
# Tickets per chunk: read together, and one table of the PDF (its flowables are all that is
# held while it is laid out).
ROWS_PER_TABLE = 500


class _ListChoice(ExportInput):
    list_id: Pk = Field(alias="list")
    sort: Literal["name", "code", "last_checked_in"] = "name"
    # The event's questions to show as columns (ids); all of them when left out.
    questions: list[Pk] | None = None
    attention_only: bool = False
    # Series: tickets for dates starting in this range only.
    date_from: DateBound = None
    date_to: DateBound = None


class CheckinListInput(_ListChoice):
    format: Literal["xlsx", "csv", "default", "semicolon", "pdf"] = Field(alias="_format")
    # The ticket secrets (what the QR codes hold) as a column: off unless asked for.
    secrets: bool = False


def _invalid(pk: int) -> list[str]:
    return [f'Invalid pk "{pk}" - object does not exist.']


async def list_errors(session: AsyncSession, event_id: int, list_id: int) -> dict[str, list[str]]:
    """``{"list": [...]}`` unless the list belongs to the event (another event's reads as
    missing)."""
    found = await session.scalar(
        select(CheckinList.id).where(CheckinList.id == list_id, CheckinList.event_id == event_id)
    )
    return {} if found is not None else {"list": _invalid(list_id)}


async def _input_errors(
    session: AsyncSession, event_id: int, params: _ListChoice
) -> dict[str, list[str]]:
    errors = await list_errors(session, event_id, params.list_id)
    if params.questions:
        known = set(
            await session.scalars(
                select(Question.id).where(
                    Question.event_id == event_id, Question.id.in_(params.questions)
                )
            )
        )
        missing = [q for q in params.questions if q not in known]
        if missing:
            errors["questions"] = _invalid(missing[0])
    return errors


def fail_on(errors: dict[str, list[str]]) -> None:
    """A failed job naming the first field error (the run's twin of a 400)."""
    if errors:
        field, messages = next(iter(errors.items()))
        raise JobFailed(f"{field}: {messages[0]}")


@register
class CheckinListExporter(ListExporter):
    identifier = "checkinlist"
    verbose_name = "Check-in list"
    permission = "event.orders:read"
    Input = CheckinListInput

    async def check_input(
        self, session: AsyncSession, event_id: int, params: Any
    ) -> dict[str, list[str]]:
        """Field errors only the database can tell (the list and questions belong to the
        event); empty when the input is fine."""
        return await _input_errors(session, event_id, params)

    def format_of(self, params: Any) -> str:
        return str(params.format)

    async def write(self, run: ExportRun) -> None:
        params = run.params
        session = run.session
        fail_on(await _input_errors(session, run.event_id, params))
        clist = await session.get(CheckinList, params.list_id)
        assert clist is not None
        info = await event_info(session, run.event_id)
        start = bound(params.date_from, info.tz, end=False)
        end = bound(params.date_to, info.tz, end=True)
        check_range(start, end)
        catalog = await load_catalog(session, run.event_id, run.locale, params.questions)
        selection = Selection(start, end, params.attention_only, params.sort)
        total = await count_rows(session, attendee_query(clist, info, catalog, selection))
        rows = attendees(
            session,
            clist,
            info,
            catalog,
            selection,
            locale=run.locale,
            yes=run.t("Yes"),
            no=run.t("No"),
            size=ROWS_PER_TABLE,
        )
        if self.format_of(params) == "pdf":
            await _pdf(run, clist, info, catalog, rows, total)
        else:
            await _table(run, clist, info, catalog, rows, total)


class CheckinListPdfInput(_ListChoice):
    pass


@register
class CheckinListPdfExporter(CheckinListExporter):
    """The reference's separate identifier for the printed sheet."""

    identifier = "checkinlistpdf"
    verbose_name = "Check-in list (PDF)"
    Input = CheckinListPdfInput

    def format_of(self, params: Any) -> str:
        return "pdf"


def _table_headers(run: ExportRun, info: EventInfo, catalog: Catalog, secrets: bool) -> list[str]:
    t = run.t
    headers = [
        t("Order code"),
        t("Position ID"),
        t("Attendee name"),
        t("Product"),
        t("Price"),
        t("Checked in"),
        t("Last check-in"),
        t("Last check-out"),
        t("Automatically checked in"),
        t("Paid"),
    ]
    if secrets:
        headers.append(t("Secret"))
    headers.append(t("E-mail"))
    if info.has_subevents:
        headers += [t("Date"), t("Start date"), t("End date")]
    headers += [localized(q.question, run.locale) for q in catalog.questions]
    headers += [
        t("Company"),
        t("Voucher code"),
        t("Order date"),
        t("Requires special attention"),
        t("Comment"),
        t("Seat ID"),
        t("Seat name"),
        t("Seat zone"),
        t("Seat row"),
        t("Seat number"),
    ]
    return headers


def _table_row(a: Attendee, info: EventInfo, catalog: Catalog, secrets: bool) -> list[Any]:
    tz = info.tz
    row: list[Any] = [
        a.order_code,
        a.positionid,
        a.name,
        a.product,
        money(a.price, info.places),
        a.checked_in,
        local(a.checked_in_at, tz),
        local(a.checked_out_at, tz),
        a.auto_checked_in,
        a.paid,
    ]
    if secrets:
        row.append(a.secret)
    row.append(a.email)
    if info.has_subevents:
        name, start, end = a.subevent or ("", None, None)
        row += [name, local(start, tz), local(end, tz)]
    row += [a.answers.get(q.id, "") for q in catalog.questions]
    row += [a.company, a.voucher, local(a.order_date, tz), a.attention, a.comment]
    return row + seat_columns(a.seat)


async def _table(
    run: ExportRun,
    clist: CheckinList,
    info: EventInfo,
    catalog: Catalog,
    rows: Any,
    total: int,
) -> None:
    secrets = bool(getattr(run.params, "secrets", False))
    headers = _table_headers(run, info, catalog, secrets)
    done = 0
    async with table(
        run, run.params.format, event_slug=info.slug, title=clist.name, headers=headers
    ) as sheet:
        async for group in rows:
            for a in group:
                sheet.row(_table_row(a, info, catalog, secrets))
            done += len(group)
            await run.progress(done, total)


async def _pdf(
    run: ExportRun,
    clist: CheckinList,
    info: EventInfo,
    catalog: Catalog,
    rows: Any,
    total: int,
) -> None:
    """The sheet, one table per chunk of rows; reportlab's layout runs in a thread so the
    job's heartbeat keeps beating while a long list is drawn."""
    t = run.t
    filename = result_filename(run.organizer_slug, info.slug, run.exporter.identifier, "pdf")
    subtitle = localized(info.name, run.locale)
    if clist.subevent_id is not None:
        date = await run.session.get(SubEvent, clist.subevent_id)
        if date is not None:
            when = date.date_from.astimezone(info.tz).strftime("%Y-%m-%d %H:%M")
            subtitle += f" – {localized(date.name, run.locale)} ({when})"
    headers = ["", t("Order code"), t("Name"), t("Product") + " / " + t("Price"), t("Paid")]
    headers += [localized(q.question, run.locale) for q in catalog.questions]
    async with run.result_file(filename, "application/pdf") as handle:
        pdf = ChunkedDocument(handle, title=clist.name, footer=f"{clist.name} · {subtitle}")
        widths = column_widths(pdf.width, len(catalog.questions))
        await asyncio.to_thread(pdf.start)
        parts: list[Any] = pdf.heading(clist.name, subtitle)
        done = 0
        async for group in rows:
            body = [(_pdf_row(a, info, catalog, run), not a.paid) for a in group]
            parts.append(pdf.table(headers, body, widths))
            await asyncio.to_thread(pdf.add, parts)
            parts = []
            done += len(group)
            await run.progress(done, total)
        if done == 0:
            parts.append(pdf.table(headers, [], widths))
            await asyncio.to_thread(pdf.add, parts)
        await asyncio.to_thread(pdf.finish)


def _pdf_row(a: Attendee, info: EventInfo, catalog: Catalog, run: ExportRun) -> list[Any]:
    name = a.name + (f"\n{a.company}" if a.company else "")
    product = f"{a.product} ({money(a.price, info.places)} {info.currency})"
    if a.subevent is not None:
        label, start, _end = a.subevent
        product += f"\n{label} ({start.astimezone(info.tz).strftime('%Y-%m-%d %H:%M')})"
    if a.seat is not None:
        product += f"\n{seat_columns(a.seat)[1]}"
    mark = ("!! " if a.attention else "") + a.order_code
    answers = [a.answers.get(q.id, "") for q in catalog.questions]
    return [Checkbox(a.checked_in), mark, name, product, run.t("Yes" if a.paid else "No"), *answers]


add_translations(
    "de",
    {
        "Check-in list": "Check-in-Liste",
        "Check-in list (PDF)": "Check-in-Liste (PDF)",
        "Position ID": "Positions-ID",
        "Attendee name": "Name des Teilnehmers",
        "Name": "Name",
        "Price": "Preis",
        "Checked in": "Eingecheckt",
        "Last check-in": "Letzter Check-in",
        "Last check-out": "Letzter Check-out",
        "Automatically checked in": "Automatisch eingecheckt",
        "Paid": "Bezahlt",
        "Secret": "Ticket-Code",
        "E-mail": "E-Mail",
        "Company": "Firma",
        "Voucher code": "Gutscheincode",
        "Order date": "Bestelldatum",
        "Requires special attention": "Benötigt besondere Aufmerksamkeit",
        "Seat ID": "Sitzplatz-ID",
        "Seat name": "Sitzplatz",
        "Seat zone": "Bereich",
        "Seat row": "Reihe",
        "Seat number": "Platznummer",
    },
)
