"""Ticket test data written straight to the database (orders, layouts, uploads in the file
store) and the checks every produced PDF goes through: pypdf for pages and text, pdfium to
raster a page and zxing-cpp to read its QR code back."""

from __future__ import annotations

import datetime as dt
import io
import itertools
import random
import secrets
import uuid
from decimal import Decimal
from typing import Any

import pypdf
import pypdfium2
import zxingcpp
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas
from sqlalchemy import select

from admit.db import utcnow
from admit.models import (
    Event,
    Item,
    Job,
    Order,
    OrderPosition,
    TicketLayout,
    TicketLayoutItem,
    UploadedFile,
)
from admit.quotas import ledger
from tests.factories import Factory, World

_codes = itertools.count(1)

NAMES = ["Ada Lovelace", "Дмитрий Шостакович", "Ζωή Παπαδοπούλου", "山田太郎"]
TEXT_LAYOUT: list[dict[str, Any]] = [
    {"type": "textarea", "left": 15, "bottom": 250, "width": 150, "content": "attendee_name",
     "fontsize": 16},
    {"type": "textarea", "left": 15, "bottom": 240, "width": 150, "content": "order",
     "fontsize": 12},
    {"type": "barcodearea", "left": 130, "bottom": 170, "size": 50},
]  # fmt: skip


def url(world: World, rest: str, event: Event | None = None) -> str:
    event_slug = (event or world.event).slug
    return f"/api/v1/organizers/{world.org.slug}/events/{event_slug}/{rest}"


def text_element(content: str, bottom: float = 200, **kw: Any) -> dict[str, Any]:
    return {
        "type": "textarea",
        "left": 15,
        "bottom": bottom,
        "width": 150,
        "content": content,
        **kw,
    }


def background_pdf(
    pagesize: tuple[float, float] = A4, marker: str = "BACKGROUND-MARK", rotate: int = 0
) -> bytes:
    """A background with a text marker, shapes and an image (so it has real resources)."""
    from PIL import Image
    from reportlab.lib.utils import ImageReader

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=pagesize)
    pdf.setFont("Helvetica-Bold", 18)
    pdf.drawString(30, pagesize[1] - 40, marker)
    shuffle = random.Random(7)
    for _ in range(40):
        pdf.setFillColorRGB(shuffle.random(), shuffle.random(), shuffle.random())
        pdf.circle(shuffle.random() * pagesize[0], shuffle.random() * 200, 8, fill=1, stroke=0)
    image = io.BytesIO()
    Image.new("RGB", (16, 16), (200, 40, 40)).save(image, "PNG")
    image.seek(0)
    pdf.drawImage(ImageReader(image), 20, 20, 40, 40)
    pdf.showPage()
    pdf.save()
    data = buffer.getvalue()
    if rotate:
        reader = pypdf.PdfReader(io.BytesIO(data))
        writer = pypdf.PdfWriter(clone_from=reader)
        writer.pages[0].rotate(rotate)
        out = io.BytesIO()
        writer.write(out)
        data = out.getvalue()
    return data


def png_bytes(
    size: tuple[int, int] = (60, 40), color: tuple[int, int, int] = (0, 90, 200)
) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


async def store_upload(app: Any, content: bytes, content_type: str, filename: str) -> UploadedFile:
    """A used upload (no expiry) with its content in the app's file store."""
    handle = uuid.uuid4().hex
    key = f"uploads/{handle[:2]}/{handle}"
    async with app.state.background.store.writer(key) as out:
        out.write(content)
    async with app.state.db.sessionmaker() as session:
        upload = UploadedFile(
            uuid=handle,
            owner_kind="token",
            owner_id=0,
            filename=filename,
            content_type=content_type,
            size=len(content),
            key=key,
            created=utcnow(),
            expires=None,
        )
        session.add(upload)
        await session.commit()
        return upload


async def layout(
    app: Any,
    event: Event,
    elements: Any,
    *,
    background: bytes | None = None,
    default: bool = False,
    name: str = "Layout",
    items: dict[int, list[str]] | None = None,
) -> TicketLayout:
    """A layout row written directly (no validation: tests may store broken ones), with its
    background in the file store and item assignments ``{item_id: [channels]}``."""
    upload = (
        await store_upload(app, background, "application/pdf", "bg.pdf") if background else None
    )
    async with app.state.db.sessionmaker() as session:
        row = TicketLayout(
            event_id=event.id,
            name=name,
            default=default,
            layout=elements,
            background_id=upload.id if upload else None,
        )
        session.add(row)
        await session.flush()
        for item_id, channels in (items or {}).items():
            for channel in channels:
                session.add(
                    TicketLayoutItem(layout_id=row.id, item_id=item_id, sales_channel=channel)
                )
        await session.commit()
        return row


async def ticket_item(factory: Factory, event: Event, name: str = "Ticket", **kw: Any) -> Item:
    kw.setdefault("default_price", Decimal("23.00"))
    kw.setdefault("admission", True)
    return await factory._add(Item(event_id=event.id, name={"en": name}, **kw))  # type: ignore[return-value]


async def order(
    factory: Factory,
    event: Event,
    item: Item,
    names: list[str] = ("Ada Lovelace",),  # type: ignore[assignment]
    *,
    status: str = "p",
    position: dict[str, Any] | None = None,
    **kw: Any,
) -> tuple[Order, list[OrderPosition]]:
    """An order in ``status`` with a position of ``item`` per attendee name."""
    async with factory.sessionmaker() as session:
        obj = Order(
            event_id=event.id,
            code=f"T{next(_codes):04d}X",
            status=status,
            secret=secrets.token_hex(16),
            expires=utcnow() + dt.timedelta(days=1),
            email="buyer@example.org",
            total=Decimal("23.00") * len(names),
            **kw,
        )
        session.add(obj)
        await session.flush()
        positions = []
        for number, name in enumerate(names, start=1):
            pos = OrderPosition(
                order_id=obj.id,
                event_id=event.id,
                positionid=number,
                item_id=item.id,
                price=Decimal("23.00"),
                secret=secrets.token_hex(16),
                web_secret=secrets.token_hex(16),
                pseudonymization_id=secrets.token_hex(5).upper(),
                attendee_name_parts={"_legacy": name},
                attendee_name_cached=name,
                **(position or {}),
            )
            session.add(pos)
            positions.append(pos)
        await session.flush()
        await ledger.rebuild(session)  # written behind the API's back
        await session.commit()
        return obj, positions


async def jobs(app: Any, kind: str | None = None) -> list[Job]:
    async with app.state.db.sessionmaker() as session:
        query = select(Job).order_by(Job.id)
        if kind:
            query = query.where(Job.kind == kind)
        return list((await session.execute(query)).scalars())


async def run_waiting(app: Any) -> list[Job]:
    """Runs every waiting job in this process (no engine needs to be serving)."""
    engine = app.state.background.engine
    for job in await jobs(app):
        if job.status == "waiting":
            await engine.run(job.id)
    return await jobs(app)


# -- checking PDFs ------------------------------------------------------------------------------


def pdf_reader(content: bytes) -> pypdf.PdfReader:
    assert content.startswith(b"%PDF-"), content[:40]
    return pypdf.PdfReader(io.BytesIO(content))


def page_texts(content: bytes) -> list[str]:
    return [page.extract_text() for page in pdf_reader(content).pages]


def qr_codes(content: bytes, page: int = 0, scale: float = 3.0) -> list[str]:
    """The QR codes on a page, read from the page rasterized by pdfium."""
    document = pypdfium2.PdfDocument(content)
    try:
        image = document[page].render(scale=scale).to_pil()
    finally:
        document.close()
    return [
        code.text
        for code in zxingcpp.read_barcodes(image)
        if code.format == zxingcpp.BarcodeFormat.QRCode
    ]


def streams_with(content: bytes, data: bytes) -> int:
    """How many stream objects of the PDF decode to exactly ``data``."""
    reader = pdf_reader(content)
    count = 0
    for number in range(1, int(reader.trailer["/Size"])):
        try:
            obj = reader.get_object(number)
        except Exception:
            continue
        if isinstance(obj, pypdf.generic.StreamObject) and obj.get_data() == data:
            count += 1
    return count


def content_of(pdf: bytes) -> bytes:
    """The first page's content stream (what a background contributes once)."""
    return pdf_reader(pdf).pages[0].get_contents().get_data()
