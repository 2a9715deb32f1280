"""The invoice list (``invoicelist``, CSV or XLSX): one row per invoice and cancellation of the
event, by number, with the recipient (VAT ID), net, tax and gross totals and what it cancels;
optionally only those issued within a date range (of the issue date).

Registered with the exporters' registry when this module is imported (the invoice routes and
the worker's job kinds import it), so ``E/exporters/`` lists it and runs it as every export.
The list helpers are imported when it runs: importing them loads every exporter module, the
PDF ones with reportlab, which an API process must not hold.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Literal

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.orm import aliased

from admit.exports.base import Exporter, ExportInput, ExportRun, register, result_filename
from admit.models import Invoice, InvoiceLine, Order

# The table formats of every list export (``default`` and ``semicolon``: the reference's CSVs).
TableFormat = Literal["xlsx", "csv", "default", "semicolon"]

_Refers = aliased(Invoice)
_TOTALS = (
    select(
        InvoiceLine.invoice_id,
        func.sum(InvoiceLine.gross_value - InvoiceLine.tax_value),
        func.sum(InvoiceLine.tax_value),
    )
    .group_by(InvoiceLine.invoice_id)
    .subquery()
)


class _Reading(Exporter):
    """Both invoice exports read the event's invoices in one read-only snapshot."""

    async def export(self, run: ExportRun) -> None:
        from admit.exports.exporters.listing import reading

        async with reading(run):
            await self._write(run)

    async def _write(self, run: ExportRun) -> None:
        raise NotImplementedError


def _issued_within(query: Any, params: Any) -> Any:
    """``query`` limited to invoices issued from ``params.date_from`` to ``date_to`` (both
    included, either open), in number order."""
    if params.date_from is not None:
        query = query.where(Invoice.date >= params.date_from)
    if params.date_to is not None:
        query = query.where(Invoice.date <= params.date_to)
    return query.order_by(Invoice.full_invoice_no, Invoice.id)


class InvoiceListInput(ExportInput):
    format: TableFormat = Field(alias="_format")
    date_from: dt.date | None = None
    date_to: dt.date | None = None


@register
class InvoiceListExporter(_Reading):
    identifier = "invoicelist"
    verbose_name = "Invoices"
    permission = "event.orders:read"
    Input = InvoiceListInput

    async def _write(self, run: ExportRun) -> None:
        from admit.exports.exporters.listing import chunks, count_rows, event_info, table

        params, session, t = run.params, run.session, run.t
        info = await event_info(session, run.event_id)
        query = (
            select(
                Invoice.full_invoice_no,
                Invoice.date,
                Order.code,
                Invoice.is_cancellation,
                _Refers.full_invoice_no.label("refers"),
                Invoice.invoice_to_company,
                Invoice.invoice_to_name,
                Invoice.invoice_to_country,
                Invoice.invoice_to_vat_id,
                Invoice.reverse_charge,
                Invoice.currency,
                Invoice.total,
                _TOTALS.c[1].label("net"),
                _TOTALS.c[2].label("tax"),
            )
            .join(Order, Order.id == Invoice.order_id)
            .outerjoin(_Refers, _Refers.id == Invoice.refers_id)
            .outerjoin(_TOTALS, _TOTALS.c.invoice_id == Invoice.id)
            .where(Invoice.event_id == run.event_id)
        )
        query = _issued_within(query, params)
        total = await count_rows(session, query)
        headers = [
            t(h)
            for h in (
                "Invoice number", "Date", "Order code", "Cancellation", "Cancels invoice",
                "Company", "Name", "Country", "VAT ID", "Reverse charge", "Currency",
                "Net total", "Tax total", "Gross total",
            )
        ]  # fmt: skip
        done = 0
        async with table(
            run, params.format, event_slug=info.slug, title=t("Invoices"), headers=headers
        ) as sheet:
            async for rows in chunks(session, query):
                for r in rows:
                    sheet.row(_row(r, info.places))
                done += len(rows)
                await run.progress(done, total)


def _row(r: Any, places: int) -> list[Any]:
    from admit.exports.exporters.listing import money

    zero = Decimal("0.00")
    return [
        r.full_invoice_no,
        r.date,
        r.code,
        bool(r.is_cancellation),
        r.refers or "",
        r.invoice_to_company or "",
        r.invoice_to_name or "",
        r.invoice_to_country or "",
        r.invoice_to_vat_id or "",
        bool(r.reverse_charge),
        r.currency,
        money(Decimal(r.net if r.net is not None else zero), places),
        money(Decimal(r.tax if r.tax is not None else zero), places),
        money(r.total, places),
    ]


class InvoicePdfsInput(ExportInput):
    date_from: dt.date | None = None
    date_to: dt.date | None = None


@register
class InvoicePdfsExporter(_Reading):
    """``invoices``: the PDFs of the event's invoices and cancellations issued within the
    date range (by issue date; both ends included, either left open), one ZIP entry each,
    named by invoice number, in number order.

    Memory stays bounded: invoice rows are read in chunks, each stored PDF is copied into the
    archive chunk by chunk, and the archive is written straight into the job's result file
    (entries stored, not deflated: a PDF's streams are compressed already). An invoice whose
    PDF is not drawn yet is drawn here (its rendering job may be queued behind this export)."""

    identifier = "invoices"
    verbose_name = "Invoice PDFs (ZIP)"
    permission = "event.orders:read"
    Input = InvoicePdfsInput

    async def _write(self, run: ExportRun) -> None:
        import zipfile

        from admit.exports.exporters.listing import chunks, count_rows, event_info
        from admit.invoices import drawing
        from admit.jobs.storage import StoredFileMissing

        params, session, store = run.params, run.session, run.job.store
        info = await event_info(session, run.event_id)
        query = select(Invoice.id, Invoice.full_invoice_no, Invoice.file_key).where(
            Invoice.event_id == run.event_id
        )
        query = _issued_within(query, params)
        total = await count_rows(session, query)
        name = result_filename(run.organizer_slug, info.slug, "invoices", "zip")
        done = 0
        async with run.result_file(name, "application/zip") as handle:
            with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED) as archive:
                async for rows in chunks(session, query, size=200):
                    for invoice_id, number, key in rows:
                        entry = archive.open(_entry_name(number), "w", force_zip64=True)
                        with entry:
                            copied = False
                            if key is not None:
                                try:
                                    async for chunk in store.open(key):
                                        entry.write(chunk)
                                    copied = True
                                except StoredFileMissing:
                                    copied = False
                            if not copied:
                                content = await drawing.render_pdf(session, store, invoice_id)
                                entry.write(content or b"")
                    done += len(rows)
                    await run.progress(done, total)


def _entry_name(number: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in number)
    return f"{safe or 'invoice'}.pdf"
