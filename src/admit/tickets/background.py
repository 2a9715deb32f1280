"""A layout's background PDF, embedded once per document and shown on every page that uses it.

reportlab cannot import a page of another PDF, and pypdf's ``merge_page`` copies the merged
page's content into every page it is merged into: 1,000 tickets would carry 1,000 copies of the
background. Instead pypdf reads the background's first page once, and that page goes into the
reportlab document as one form XObject: its content stream plus its resources (fonts, images,
graphics states), whose objects are copied byte for byte (streams keep their encoded data)
into reportlab's output as it writes the file. Every ticket page then paints that form
(``/Name Do``) before its own elements. The output is written in one pass by reportlab, with
no second pass over 1,000 pages.

reportlab's document model is open for this: an object with a ``format(document)`` method,
registered under a form's name with ``document.Reference``, is what ``canvas.doForm(name)``
refers to, and objects it names are registered as it is written (:class:`_Copier`).

Backgrounds are uploads (checked to be PDFs when uploaded) but are not trusted here: a file
pypdf cannot read, an encrypted one, or one without pages raises :class:`BackgroundError`.
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass, field
from typing import Any

from pypdf import PdfReader
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, StreamObject
from reportlab.pdfbase.pdfdoc import PDFObject, PDFObjectReference, xObjectName
from reportlab.pdfgen.canvas import Canvas


class BackgroundError(ValueError):
    """The background PDF cannot be used; the message says why."""


@dataclass(eq=False)
class BackgroundPage:
    """The first page of a background PDF, ready to become a form XObject."""

    width: float  # pt, as shown (after the page's /Rotate)
    height: float
    content: bytes  # the page's decoded content stream(s)
    bbox: tuple[float, float, float, float]  # the crop box in the page's own space
    matrix: tuple[float, ...]  # crop box + rotation -> (0, 0, width, height)
    resources: Any  # pypdf dictionary (its indirect objects stay readable through the reader)
    reader: PdfReader = field(repr=False)


def _matrix(rotate: int, box: tuple[float, float, float, float]) -> tuple[float, ...]:
    """Maps the crop box, turned as ``/Rotate`` says (clockwise), onto ``(0, 0, w, h)``."""
    x0, y0, x1, y1 = box
    return {
        0: (1, 0, 0, 1, -x0, -y0),
        90: (0, -1, 1, 0, -y0, x1),
        180: (-1, 0, 0, -1, x1, y1),
        270: (0, 1, -1, 0, y1, -x0),
    }[rotate]


def read_background(data: bytes) -> BackgroundPage:
    """The first page of ``data``; raises :class:`BackgroundError` when it is not usable."""
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise BackgroundError("The background PDF is encrypted.")
        if len(reader.pages) == 0:
            raise BackgroundError("The background PDF has no pages.")
        page = reader.pages[0]
        crop = page.cropbox
        xs = sorted((float(crop.left), float(crop.right)))
        ys = sorted((float(crop.bottom), float(crop.top)))
        box = (xs[0], ys[0], xs[1], ys[1])
        if xs[1] - xs[0] < 1 or ys[1] - ys[0] < 1:
            raise BackgroundError("The background PDF's page has no size.")
        rotate = int(page.get("/Rotate", 0) or 0) % 360
        if rotate not in (0, 90, 180, 270):
            rotate = 0
        contents = page.get("/Contents")
        content = b""
        if contents is not None:
            contents = contents.get_object()
            streams = contents if isinstance(contents, list) else [contents]
            content = b"\n".join(s.get_object().get_data() for s in streams)
        resources = page.get("/Resources")
        resources = resources.get_object() if resources is not None else DictionaryObject()
        if not isinstance(resources, DictionaryObject):
            resources = DictionaryObject()
    except BackgroundError:
        raise
    except Exception as exc:  # pypdf raises many kinds for broken files
        name = type(exc).__name__
        raise BackgroundError(f"The background PDF cannot be read ({name}).") from None
    width, height = xs[1] - xs[0], ys[1] - ys[0]
    if rotate in (90, 270):
        width, height = height, width
    return BackgroundPage(width, height, content, box, _matrix(rotate, box), resources, reader)


def _name(key: Any) -> bytes:
    out = io.BytesIO()
    key.write_to_stream(out)
    return out.getvalue()


_DOCUMENT = ("/Page", "/Pages", "/Catalog")


class _Copier:
    """Writes pypdf objects of one background into a reportlab document as it is formatted:
    each indirect object once, under a name of its own, references renumbered."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.names: dict[tuple[int, int], str] = {}

    def reference(self, ref: IndirectObject, document: Any) -> bytes:
        key = (ref.idnum, ref.generation)
        name = self.names.get(key)
        if name is None:
            target = ref.get_object()
            if isinstance(target, DictionaryObject) and target.get("/Type") in _DOCUMENT:
                return b"null"  # a back-reference into the other document's page tree
            name = self.names[key] = f"{self.prefix}.{ref.idnum}.{ref.generation}"
            document.Reference(_Copied(self, target), name)
        return PDFObjectReference(name).format(document)

    def value(self, obj: Any, document: Any) -> bytes:
        if isinstance(obj, IndirectObject):
            return self.reference(obj, document)
        if isinstance(obj, StreamObject):  # streams are indirect in a file; copied as objects
            return self.stream(obj, document)
        if isinstance(obj, DictionaryObject):
            return self.dictionary(obj, document)
        if isinstance(obj, ArrayObject):
            return b"[" + b" ".join(self.value(item, document) for item in obj) + b"]"
        if obj is None:
            return b"null"
        out = io.BytesIO()
        obj.write_to_stream(out)
        return out.getvalue()

    def dictionary(self, obj: DictionaryObject, document: Any, skip: tuple[str, ...] = ()) -> bytes:
        parts = [
            _name(key) + b" " + self.value(obj.raw_get(key), document)
            for key in obj
            if key not in skip
        ]
        return b"<<" + b"\n".join(parts) + b">>"

    def stream(self, obj: StreamObject, document: Any) -> bytes:
        # The data as it was in the file (still encoded); its dictionary keeps the filters.
        raw = obj._data or b""
        head = self.dictionary(obj, document, skip=("/Length",))
        return b"%s\n" % head[:-2] + b"/Length %d>>\nstream\n" % len(raw) + raw + b"\nendstream"


class _Copied(PDFObject):
    def __init__(self, copier: _Copier, obj: Any) -> None:
        self.copier = copier
        self.obj = obj

    def format(self, document: Any) -> bytes:
        return self.copier.value(self.obj, document)


def _numbers(values: tuple[float, ...]) -> bytes:
    """PDF numbers (no exponent notation, which PDF does not know)."""
    return " ".join(f"{v:.4f}".rstrip("0").rstrip(".") or "0" for v in values).encode()


class _Form(PDFObject):
    """The background page as a form XObject (content compressed, resources copied)."""

    def __init__(self, page: BackgroundPage, copier: _Copier) -> None:
        self.page = page
        self.copier = copier

    def format(self, document: Any) -> bytes:
        data = zlib.compress(self.page.content)
        resources = self.copier.dictionary(self.page.resources, document)
        return (
            b"<</Type /XObject /Subtype /Form /FormType 1 /BBox [%s] /Matrix [%s]\n"
            b"/Resources %s\n/Filter /FlateDecode /Length %d>>\nstream\n"
            % (_numbers(self.page.bbox), _numbers(self.page.matrix), resources, len(data))
            + data
            + b"\nendstream"
        )


def form_name(index: int) -> str:
    return f"AdmitBackground{index}"


def add_background(canvas: Canvas, index: int, page: BackgroundPage) -> str:
    """Puts ``page`` into the canvas's document as a form; returns the name to draw it with
    (``canvas.doForm(name)``), as often as wanted."""
    name = form_name(index)
    canvas._doc.Reference(_Form(page, _Copier(f"AdmitBg{index}")), xObjectName(name))
    return name
