"""Real small files (PDFs drawn with reportlab, images drawn with Pillow) and upload calls."""

from __future__ import annotations

import io
import re
from typing import Any

import httpx
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas
from sqlalchemy import select

from admit.models import UploadedFile
from tests.factories import auth

UPLOAD = "/api/v1/upload"
FILE_ID = re.compile(r"^file:[0-9a-f]{32}$")
MM = 72 / 25.4


def pdf_bytes(
    pagesize: tuple[float, float] = A4, pages: int = 1, text: str = "Background"
) -> bytes:
    """A real PDF of ``pages`` pages of ``pagesize`` (points)."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=pagesize)
    for number in range(pages):
        pdf.drawString(72, 72, f"{text} {number + 1}")
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def pdf_of_size(size: int) -> bytes:
    """A valid one-page PDF of exactly ``size`` bytes (a filler stream makes up the rest)."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, NameObject

    def build(filler: int) -> bytes:
        writer = PdfWriter()
        page = writer.add_blank_page(595, 842)
        stream = DecodedStreamObject()
        stream.set_data(b" " * filler)
        page[NameObject("/Filler")] = writer._add_object(stream)
        buffer = io.BytesIO()
        writer.write(buffer)
        return buffer.getvalue()

    filler = size - len(build(0))
    for _ in range(3):
        content = build(filler)
        if len(content) == size:
            return content
        filler += size - len(content)
    raise AssertionError("could not hit the size")


def image_bytes(fmt: str = "PNG", size: tuple[int, int] = (40, 30)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(buffer, format=fmt)
    return buffer.getvalue()


async def upload(
    client: httpx.AsyncClient,
    token: str,
    content: bytes,
    content_type: str = "application/pdf",
    filename: str | None = "background.pdf",
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    sent = {**auth(token), "Content-Type": content_type, **(headers or {})}
    if filename is not None:
        sent["Content-Disposition"] = f'attachment; filename="{filename}"'
    return await client.post(UPLOAD, content=content, headers=sent)


async def upload_id(client: httpx.AsyncClient, token: str, content: bytes, **kw: Any) -> str:
    response = await upload(client, token, content, **kw)
    assert response.status_code == 201, response.text
    file_id = response.json()["id"]
    assert FILE_ID.match(file_id), file_id
    return file_id


async def upload_pdf(client: httpx.AsyncClient, token: str, **kw: Any) -> str:
    return await upload_id(client, token, pdf_bytes(**kw))


async def upload_png(client: httpx.AsyncClient, token: str) -> str:
    return await upload_id(
        client, token, image_bytes("PNG"), content_type="image/png", filename="logo.png"
    )


async def stored(app: Any, file_id: str) -> UploadedFile | None:
    async with app.state.db.sessionmaker() as session:
        query = select(UploadedFile).where(UploadedFile.uuid == file_id.removeprefix("file:"))
        return (await session.execute(query)).scalar_one_or_none()
