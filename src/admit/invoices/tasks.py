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
import io
import logging
import uuid
from collections import OrderedDict

from sqlalchemy import select, update
from sqlalchemy.orm import selectinload

from admit.invoices import einvoice, exporter  # noqa: F401  (the worker runs its exports)
from admit.invoices.service import RENDER_KIND
from admit.invoices.settings_keys import setting
from admit.jobs.queue import JobContext, JobFailed, job_kind
from admit.jobs.storage import FileStore, StoredFileMissing
from admit.models import Event, Invoice, Order
from admit.uploads.service import read_upload, upload_by_path

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


# The logo's longest side in pixels once prepared (300 dpi over the 60 mm it is drawn at most).
LOGO_PIXELS = 700
_LOGOS: OrderedDict[str, bytes | None] = OrderedDict()
_LOGOS_KEPT = 64


def prepare_logo(data: bytes) -> bytes | None:
    """The uploaded logo as an opaque RGB PNG no larger than :data:`LOGO_PIXELS`: transparency
    flattened onto white (PDF/A wants no soft masks), a large photo scaled down once rather
    than embedded in every invoice. None for an image Pillow cannot read."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            image.thumbnail((LOGO_PIXELS, LOGO_PIXELS))
            rgba = image.convert("RGBA")
    except Exception:
        log.warning("invoice logo: the image cannot be read", exc_info=True)
        return None
    flat = Image.new("RGB", rgba.size, (255, 255, 255))
    flat.paste(rgba, mask=rgba.getchannel("A"))
    out = io.BytesIO()
    flat.save(out, format="PNG", optimize=True)
    return out.getvalue()


async def logo(session: object, store: FileStore, event_id: int) -> bytes | None:
    """The event's invoice logo (``invoice_logo_image``) prepared for drawing, or None. An
    upload's content never changes, so it is prepared once per process."""
    event = await session.get(Event, event_id)  # type: ignore[attr-defined]
    path = setting(event, "invoice_logo_image") if event is not None else None
    if not path:
        return None
    if path in _LOGOS:
        _LOGOS.move_to_end(path)
        return _LOGOS[path]
    upload = await upload_by_path(session, path)  # type: ignore[arg-type]
    if upload is None:
        return None
    try:
        data = await read_upload(store, upload)
    except StoredFileMissing:
        return None
    prepared = await asyncio.to_thread(prepare_logo, data)
    _LOGOS[path] = prepared
    while len(_LOGOS) > _LOGOS_KEPT:
        _LOGOS.popitem(last=False)
    return prepared


async def render_pdf(session: object, store: FileStore, invoice_id: int) -> bytes | None:
    """The invoice's PDF drawn now (in a thread), with the event's logo; None when the
    invoice is gone."""
    loaded = await load(session, invoice_id)
    if loaded is None:
        return None
    image = await logo(session, store, loaded[0].event_id)
    return await asyncio.to_thread(draw, *loaded, image)


def draw(invoice: Invoice, code: str, refers: Invoice | None, logo: bytes | None = None) -> bytes:
    """The PDF with its Factur-X XML embedded. Should the XML not pass its schema (data no
    schema foresaw), the invoice is still drawn, without it, and the reason logged: the PDF
    is the invoice, the XML an addition."""
    from admit.invoices import pdf  # reportlab: loaded by the processes that draw only

    number = refers.full_invoice_no if refers is not None else None
    content = pdf.render(invoice, code, number, logo=logo)
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
