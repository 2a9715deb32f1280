"""Reading a ``multipart/form-data`` form (the checkout with file questions), streamed.

python-multipart parses the body as it arrives. Text fields are bounded like an urlencoded form
(:data:`admit.web.forms.FORM_LIMIT` bytes, :data:`admit.web.forms.MAX_FIELDS` fields, UTF-8,
no NUL). Each file goes to a temporary file; a file past
:data:`admit.uploads.service.MAX_UPLOAD_BYTES` is dropped as it arrives and marked too large,
so the rest of the form is still read (the page answers with the other input kept). The whole
body is bounded by :data:`BODY_LIMIT`.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from typing import IO

from fastapi import Request
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.responses import Response

from admit.uploads.service import MAX_UPLOAD_BYTES
from admit.web.forms import FORM_LIMIT, MAX_FIELDS, FormError, Pairs
from admit.web.page import Page

MULTIPART = "multipart/form-data"
MAX_FILES = 20
BODY_LIMIT = 4 * MAX_UPLOAD_BYTES + FORM_LIMIT


@dataclass
class Incoming:
    """One file of the form: its name and declared type as the browser sent them."""

    field: str
    filename: str
    content_type: str
    spool: IO[bytes] | None
    size: int = 0
    too_large: bool = False


@dataclass
class Multipart:
    pairs: Pairs = field(default_factory=list)
    files: dict[str, Incoming] = field(default_factory=dict)

    def close(self) -> None:
        for incoming in self.files.values():
            if incoming.spool is not None:
                incoming.spool.close()


def is_multipart(request: Request) -> bool:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind == MULTIPART


class _Reader:
    def __init__(self) -> None:
        self.result = Multipart()
        self.headers: dict[str, str] = {}
        self.header_name = bytearray()
        self.header_value = bytearray()
        self.name = ""
        self.file: Incoming | None = None
        self.text = bytearray()
        self.text_total = 0
        self.problem: FormError | None = None

    def fail(self, status: int, message: str) -> None:
        if self.problem is None:
            self.problem = FormError(status, message)

    def on_part_begin(self) -> None:
        self.headers = {}
        self.file = None
        self.text = bytearray()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header_name += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]

    def on_header_end(self) -> None:
        name = self.header_name.decode("latin-1").strip().lower()
        self.headers[name] = self.header_value.decode("latin-1")
        self.header_name = bytearray()
        self.header_value = bytearray()

    def on_headers_finished(self) -> None:
        _kind, options = parse_options_header(self.headers.get("content-disposition"))
        self.name = _text(options.get(b"name", b""))
        filename = options.get(b"filename")
        if filename is None:
            return
        if len(self.result.files) >= MAX_FILES:
            self.fail(400, "Too many files in the request.")
            return
        name = re.split(r"[/\\]", _text(filename))[-1]
        kind = (self.headers.get("content-type") or "").split(";")[0].strip().lower()
        spool = tempfile.NamedTemporaryFile(prefix="admit-shop-") if name else None
        self.file = Incoming(self.name, name, kind, spool)

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        chunk = data[start:end]
        if self.file is not None:
            incoming = self.file
            incoming.size += len(chunk)
            if incoming.spool is None or incoming.too_large:
                return
            if incoming.size > MAX_UPLOAD_BYTES:
                incoming.too_large = True
                incoming.spool.close()
                incoming.spool = None
                return
            incoming.spool.write(chunk)
            return
        self.text_total += len(chunk)
        if self.text_total > FORM_LIMIT:
            self.fail(413, "Request body is too large.")
            return
        self.text += chunk

    def on_part_end(self) -> None:
        if self.file is not None:
            previous = self.result.files.pop(self.file.field, None)
            if previous is not None and previous.spool is not None:
                previous.spool.close()
            if self.file.spool is not None:
                self.file.spool.seek(0)
            if self.file.filename:
                self.result.files[self.file.field] = self.file
            elif self.file.spool is not None:
                self.file.spool.close()
            self.file = None
            return
        if len(self.result.pairs) >= MAX_FIELDS:
            self.fail(400, "Too many fields in the request.")
            return
        try:
            value = self.text.decode("utf-8")
        except UnicodeDecodeError:
            self.fail(400, "The request body is not valid UTF-8.")
            return
        if "\x00" in value or "\x00" in self.name:
            self.fail(400, "Null characters are not allowed.")
            return
        self.result.pairs.append((self.name, value))


def _text(raw: bytes) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return "".join(c for c in text if c.isprintable()).strip()[:255]


async def read_multipart(request: Request) -> Multipart:
    """The form's text fields and files; raises :class:`FormError` for a broken or too large
    body (the temporary files are closed then)."""
    _kind, options = parse_options_header(request.headers.get("content-type"))
    boundary = options.get(b"boundary")
    if not boundary or len(boundary) > 200:
        raise FormError(400, "The multipart form has no boundary.")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > BODY_LIMIT:
        raise FormError(413, "Request body is too large.")
    reader = _Reader()
    callbacks = {
        name: getattr(reader, name)
        for name in (
            "on_part_begin",
            "on_header_field",
            "on_header_value",
            "on_header_end",
            "on_headers_finished",
            "on_part_data",
            "on_part_end",
        )
    }
    try:
        parser = MultipartParser(boundary, callbacks)  # type: ignore[arg-type]
        total = 0
        async for chunk in request.stream():
            total += len(chunk)
            if total > BODY_LIMIT:
                raise FormError(413, "Request body is too large.")
            parser.write(chunk)
            if reader.problem is not None:
                raise reader.problem
        parser.finalize()
        if reader.problem is not None:
            raise reader.problem
    except (MultipartParseError, ValueError):
        reader.result.close()
        raise FormError(400, "The multipart form could not be read.") from None
    except BaseException:
        reader.result.close()
        if reader.file is not None and reader.file.spool is not None:
            reader.file.spool.close()
        raise
    return reader.result


async def posted_form(web: Page, request: Request) -> tuple[Pairs, Multipart] | Response:
    """A posted shop form's fields and files (an urlencoded form has none), its CSRF token
    checked; or the page refusing it (403, 4xx for a body that is no form)."""
    if not is_multipart(request):
        pairs, refused = await web.post()
        return refused if refused is not None else (pairs, Multipart())
    try:
        form = await read_multipart(request)
    except FormError as exc:
        return web.message("Bad request", exc.message, exc.status)
    refused = web.refuse_csrf(form.pairs)
    if refused is not None:
        form.close()
        return refused
    return form.pairs, form
