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

from sqlalchemy import update

from admit.invoices import exporter  # noqa: F401  (the worker runs its exports)
from admit.invoices.drawing import draw, file_key, load, logo
from admit.invoices.service import RENDER_KIND
from admit.jobs.queue import JobContext, JobFailed, job_kind
from admit.models import Invoice

log = logging.getLogger("admit.invoices")
# Rendering one invoice takes milliseconds; a stuck run is stopped long before this.
TIME_LIMIT = 120.0


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
        image = await logo(session, job.store, invoice.event_id)
        content = await asyncio.to_thread(draw, invoice, code, refers, image)
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
