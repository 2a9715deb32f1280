"""Drawing an invoice's PDF from its stored row: the loading, the organizer's logo, the
reportlab PDF with its Factur-X XML, and where the file goes in the file store. Used by the
rendering job (:mod:`admit.invoices.tasks`), the ZIP export, the shop's download and the
buyer's paid mail, so each draws the same PDF.
"""

from __future__ import annotations

import asyncio
import io
import logging
import uuid
from collections import OrderedDict

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from admit.invoices import einvoice
from admit.invoices.settings_keys import setting
from admit.jobs.storage import FileStore, StoredFileMissing
from admit.models import Event, Invoice, Order
from admit.uploads.service import read_upload, upload_by_path
from admit.uploads.sniff import MAX_PIXELS

log = logging.getLogger("admit.invoices")


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
            # Read from the header, before any decoding: the upload's own bound, checked again
            # here for a file stored before it or by other means.
            if image.width * image.height > MAX_PIXELS:
                log.warning("invoice logo: %dx%d pixels is too large", image.width, image.height)
                return None
            image.draft(None, (LOGO_PIXELS, LOGO_PIXELS))  # a JPEG is decoded scaled down
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
    """The PDF/A-3 with its Factur-X XML embedded, drawn in one pass. Should the XML not pass
    its schema (data no schema foresaw), the invoice is still drawn, without it, and the
    reason logged: the PDF is the invoice, the XML an addition."""
    from admit.invoices import pdf  # reportlab: loaded by the processes that draw only

    number = refers.full_invoice_no if refers is not None else None
    try:
        xml = einvoice.cii_xml(invoice, number, refers.date if refers is not None else None)
    except Exception:
        log.exception("invoice %s: no Factur-X XML", invoice.full_invoice_no)
        xml = None
    return pdf.render(invoice, code, number, logo=logo, xml=xml)
