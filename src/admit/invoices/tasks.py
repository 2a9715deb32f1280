"""Drawing invoice PDFs as background jobs (``invoices.render``).

Issuing an invoice queues one job in the issuing transaction (:func:`service.queue_render`).
The job draws the PDF from the stored invoice, writes it to the file store under a key of its
own (``invoices/…``, not a job result: the sweep of expired jobs never deletes an invoice's
file) and records the key on the invoice, only if the invoice still waits for this very job: a
``regenerate`` asked for meanwhile queued a newer one, whose file wins. A re-run after a crash
draws again and writes a new key; the earlier file, never recorded, is removed.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from sqlalchemy import select, update
from sqlalchemy.orm import selectinload

from admit.invoices import einvoice, exporter  # noqa: F401  (the worker runs its exports)
from admit.invoices.service import RENDER_KIND
from admit.jobs.queue import JobContext, JobFailed, job_kind
from admit.models import Invoice, Order

log = logging.getLogger("admit.invoices")
# Rendering one invoice takes milliseconds; a stuck run is stopped long before this.
TIME_LIMIT = 120.0


def file_key(invoice: Invoice) -> str:
    return f"invoices/{invoice.organizer_id}/{invoice.id}-{uuid.uuid4().hex}.pdf"


def filename(invoice: Invoice) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in invoice.full_invoice_no)
    return f"{safe or 'invoice'}.pdf"


Loaded = tuple[Invoice, str, Invoice | None]


async def load(session: object, invoice_id: int) -> Loaded | None:
    """The invoice with its lines, its order's code and the invoice it refers to."""
    row = (
        await session.execute(  # type: ignore[attr-defined]
            select(Invoice, Order.code)
            .join(Order, Order.id == Invoice.order_id)
            .where(Invoice.id == invoice_id)
            .options(selectinload(Invoice.lines))
        )
    ).first()
    if row is None:
        return None
    invoice, code = row
    refers = None
    if invoice.refers_id is not None:
        refers = await session.get(Invoice, invoice.refers_id)  # type: ignore[attr-defined]
    return invoice, code, refers


def draw(invoice: Invoice, code: str, refers: Invoice | None) -> bytes:
    """The PDF with its Factur-X XML embedded. Should the XML not pass its schema (data no
    schema foresaw), the invoice is still drawn, without it, and the reason logged: the PDF
    is the invoice, the XML an addition."""
    from admit.invoices import pdf  # reportlab: loaded by the processes that draw only

    number = refers.full_invoice_no if refers is not None else None
    content = pdf.render(invoice, code, number)
    try:
        xml = einvoice.cii_xml(invoice, number, refers.date if refers is not None else None)
    except Exception:
        log.exception("invoice %s: no Factur-X XML", invoice.full_invoice_no)
        return content
    return einvoice.embed(content, xml, invoice)


@job_kind(RENDER_KIND, max_attempts=3, keep_hours=24.0, time_limit=TIME_LIMIT)
async def render_invoice(job: JobContext) -> str | None:
    """Input: ``{"invoice": id}``."""
    invoice_id = job.input.get("invoice")
    if not isinstance(invoice_id, int):
        raise JobFailed("The job's input names no invoice.")
    async with job.db.sessionmaker() as session:
        loaded = await load(session, invoice_id)
        if loaded is None:
            raise JobFailed("The invoice no longer exists.")
        invoice, code, refers = loaded
        if invoice.render_job_id != job.id:
            return "A newer rendering of this invoice was asked for."
        content = await asyncio.to_thread(draw, invoice, code, refers)
        key = file_key(invoice)
        async with job.store.writer(key) as handle:
            handle.write(content)
        written = await session.execute(
            update(Invoice)
            .where(Invoice.id == invoice_id, Invoice.render_job_id == job.id)
            .values(file_key=key)
        )
        await session.commit()
    if written.rowcount == 0:  # type: ignore[attr-defined]
        await job.store.delete(key)
        return "A newer rendering of this invoice was asked for."
    return f"Invoice {invoice.full_invoice_no} rendered ({len(content)} bytes)."
