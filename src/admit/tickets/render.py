"""Drawing tickets: one PDF page per ticket, its layout's elements over its background.

Each page first paints its layout's background (the first page of the background PDF,
embedded once per document as a form XObject: :mod:`admit.tickets.background`), then
reportlab draws the dynamic elements over it (text areas, QR codes, images). The page size is
the background's first page, or A4 without one. Elements placed on further pages of a
multi-page background are left out: a ticket is one page.

Stored layouts are not trusted: they pass through
:func:`admit.tickets.layout_format.normalized_elements` again, and anything that goes wrong
while a layout is drawn (a value that does not fit a QR code, a broken background or picture)
raises :class:`RenderError` naming the layout, for the job to fail with.

Geometry, in mm from the page's lower left corner as the layout format says: a text area's
block of lines ends at ``bottom`` (it grows upwards) or, with ``downward``, starts there and
flows down; lines wrap within ``width`` (at spaces, or anywhere in a word wider than the
area); ``rotation`` turns the area clockwise about (``left``, ``bottom``). A QR code fills the
``size`` square, with a white quiet zone of 4 modules inside it unless ``nowhitespace``.
Images keep their aspect ratio, centred in their box.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from reportlab import rl_config
from reportlab.graphics.barcode import qrencoder
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfgen.canvas import Canvas

from admit.kit.pdf import fonts
from admit.kit.resources.i18n import localized
from admit.tickets.background import (
    BackgroundError,
    BackgroundPage,
    add_background,
    read_background,
)
from admit.tickets.errors import RenderError
from admit.tickets.layout_format import LayoutError, normalized_elements

# Streams as binary Flate data, not ASCII85 on top: a quarter smaller and quicker to write
# (any PDF reader takes both; set for the process, which is harmless for other reportlab use).
rl_config.useA85 = 0

try:  # the fast QR encoder (see qr_modules)
    import zxingcpp
except ImportError:  # pragma: no cover - reportlab's encoder then
    zxingcpp = None

QR_QUIET_MODULES = 4
PROGRESS_EVERY = 50  # pages
_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_]{1,200})\}")


@dataclass(frozen=True, eq=False)
class RenderLayout:
    """A layout as stored (untrusted) with its background's bytes."""

    id: int | None  # None: the built-in default layout
    name: str
    layout: Any
    background: bytes | None = None


@dataclass(frozen=True)
class TicketPage:
    """One ticket: its layout and the values its variables print (see ``values.py``)."""

    layout: RenderLayout
    values: Mapping[str, str]
    locale: str = "en"
    images: Mapping[str, bytes | None] = field(default_factory=dict)


@dataclass
class _Prepared:
    elements: list[dict[str, Any]]
    background: str | None  # the name of the background's form
    size: tuple[float, float]


def _describe(layout: RenderLayout) -> str:
    if layout.id is None:
        return "The built-in ticket layout"
    return f'The ticket layout "{layout.name[:100]}" (id {layout.id})'


def substitute(text: str, values: Mapping[str, str]) -> str:
    """Free text with ``{name}`` placeholders filled in; unknown names stay as they are."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def element_text(element: dict[str, Any], values: Mapping[str, str], locale: str) -> str:
    """What a text or barcode element prints: a variable's value, or its free text."""
    content = element["content"]
    if content != "other":
        return values.get(content, "")
    texts = element.get("text_i18n") or {}
    text = localized(texts, element.get("locale") or locale) if texts else element["text"]
    return substitute(text, values)


# -- text ---------------------------------------------------------------------------------------


def _break_word(word: str, font: str, size: float, width: float) -> Iterator[str]:
    """A word wider than the area, cut into pieces that fit (at least one character each)."""
    piece = ""
    for char in word:
        if piece and fonts.string_width(piece + char, font, size) > width:
            yield piece
            piece = ""
        piece += char
    if piece:
        yield piece


def wrap(text: str, font: str, size: float, width: float) -> list[tuple[str, float]]:
    """Lines of ``text`` within ``width`` points and their widths; explicit line breaks kept."""
    lines: list[tuple[str, float]] = []
    space = fonts.string_width(" ", font, size)
    for paragraph in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line, line_width = "", 0.0
        for word in paragraph.replace("\t", " ").split(" "):
            if not word:
                continue
            word_width = fonts.string_width(word, font, size)
            if line and line_width + space + word_width <= width:
                line, line_width = f"{line} {word}", line_width + space + word_width
                continue
            if line:
                lines.append((line, line_width))
                line, line_width = "", 0.0
            if word_width <= width:
                line, line_width = word, word_width
                continue
            pieces = list(_break_word(word, font, size, width))
            lines += [(p, fonts.string_width(p, font, size)) for p in pieces[:-1]]
            line = pieces[-1]
            line_width = fonts.string_width(line, font, size)
        lines.append((line, line_width))
    while lines and not lines[-1][0]:
        lines.pop()
    return lines


def _set_color(canvas: Canvas, color: Sequence[float]) -> None:
    red, green, blue, alpha = [*color, 1.0][:4]
    canvas.setFillColorRGB(red / 255, green / 255, blue / 255, alpha=alpha)


def _draw_text(canvas: Canvas, element: dict[str, Any], text: str) -> None:
    font = fonts.font_name(element["fontfamily"], element["bold"], element["italic"])
    size = float(element["fontsize"])
    width = float(element["width"]) * mm
    lines = wrap(text, font, size, width)
    if not lines:
        return
    leading = size * float(element["lineheight"])
    ascent = pdfmetrics.getAscent(font, size)
    descent = -pdfmetrics.getDescent(font, size)
    if element["downward"]:
        first = -ascent
    else:
        first = descent + (len(lines) - 1) * leading
    canvas.saveState()
    canvas.translate(float(element["left"]) * mm, float(element["bottom"]) * mm)
    if element["rotation"]:
        canvas.rotate(-float(element["rotation"]))
    _set_color(canvas, element["color"])
    align = element["align"]
    for number, (line, line_width) in enumerate(lines):
        x = {"left": 0.0, "center": (width - line_width) / 2, "right": width - line_width}[align]
        text_object = canvas.beginText(x, first - number * leading)
        for name, run in fonts.split_by_font(line, font):
            text_object.setFont(name, size)
            text_object.textOut(run)
        canvas.drawText(text_object)
    canvas.restoreState()


# -- QR codes -----------------------------------------------------------------------------------


def _reportlab_modules(text: str) -> tuple[int, bytes]:
    code = qrencoder.QRCode(None, qrencoder.QRErrorCorrectLevel.M)
    code.addData(text)
    code.make()
    return code.getModuleCount(), bytes(0 if m else 255 for row in code.modules for m in row)


def _zxing_modules(text: str) -> tuple[int, bytes]:
    symbol = zxingcpp.create_barcode(text, zxingcpp.BarcodeFormat.QRCode, ec_level="M")
    image = memoryview(symbol.to_image(scale=1, add_quiet_zones=False))
    return image.shape[0], image.tobytes()


def qr_modules(text: str) -> tuple[int, bytes]:
    """The QR code of ``text`` (UTF-8, error correction M): its side in modules and its
    modules row by row, 0 for dark and 255 for light.

    zxing-cpp's encoder (C++) when it is installed: reportlab's pure-Python one needs about
    35 ms a code, most of it choosing the mask, which alone would make 1,000 tickets take
    half a minute; zxing-cpp needs well under a millisecond. Both choose the mask as the QR
    standard says, so either code scans the same."""
    try:
        return _zxing_modules(text) if zxingcpp is not None else _reportlab_modules(text)
    except Exception as exc:  # both raise plain exceptions for data that does not fit
        raise RenderError(f"The value is too long for a QR code ({len(text)} characters).") from exc


_DARK_RUN = re.compile(rb"\x00+")


def qr_operators(side: int, modules: bytes, border: int) -> str:
    """PDF path operators filling the dark modules, one rectangle per run of them in a row,
    in module units (whole numbers, so the stream is short and cheap to write)."""
    count = side + 2 * border
    ops = []
    for number in range(side):
        y = count - border - number - 1
        row = modules[number * side : (number + 1) * side]
        ops += [
            f"{run.start() + border} {y} {run.end() - run.start()} 1 re"
            for run in _DARK_RUN.finditer(row)
        ]
    return "\n".join(ops)


def _draw_qr(canvas: Canvas, element: dict[str, Any], text: str) -> None:
    modules, data = qr_modules(text)
    border = 0 if element.get("nowhitespace") else QR_QUIET_MODULES
    side = float(element["size"]) * mm
    count = modules + 2 * border
    canvas.saveState()
    canvas.translate(float(element["left"]) * mm, float(element["bottom"]) * mm)
    canvas.scale(side / count, side / count)
    quiet = f"1 g 0 0 {count} {count} re f\n" if border else ""
    # reportlab's path API formats every number through Python (about 50 µs each): the
    # few hundred rectangles of a code go in as one literal instead.
    canvas.addLiteral(f"{quiet}0 g\n{qr_operators(modules, data, border)}\nf")
    canvas.restoreState()


# -- images and the rest ------------------------------------------------------------------------


class _Images:
    """Pictures defined once per document as forms, placed on any number of pages."""

    def __init__(self) -> None:
        self.forms: dict[str, tuple[str, float, float]] = {}

    def form(self, canvas: Canvas, data: bytes) -> tuple[str, float, float]:
        digest = hashlib.sha256(data).hexdigest()[:24]
        if digest not in self.forms:
            try:
                reader = ImageReader(io.BytesIO(data))
                width, height = (float(v) for v in reader.getSize())
            except Exception as exc:
                raise RenderError(f"The picture cannot be read ({type(exc).__name__}).") from exc
            name = f"AdmitImg{digest}"
            canvas.beginForm(name, 0, 0, width, height)
            canvas.drawImage(reader, 0, 0, width, height, mask="auto")
            canvas.endForm()
            self.forms[digest] = (name, width, height)
        return self.forms[digest]


def _draw_image(canvas: Canvas, element: dict[str, Any], data: bytes, images: _Images) -> None:
    name, width, height = images.form(canvas, data)
    box_w, box_h = float(element["width"]) * mm, float(element["height"]) * mm
    scale = min(box_w / width, box_h / height)
    canvas.saveState()
    canvas.translate(
        float(element["left"]) * mm + (box_w - width * scale) / 2,
        float(element["bottom"]) * mm + (box_h - height * scale) / 2,
    )
    canvas.scale(scale, scale)
    canvas.doForm(name)
    canvas.restoreState()


def _draw_powered_by(canvas: Canvas, element: dict[str, Any]) -> None:
    font = fonts.font_name(bold=True)
    text = "powered by Admit"
    side = float(element["size"]) * mm
    size = max(1.0, side / max(1.0, fonts.string_width(text, font, 1.0)))
    canvas.saveState()
    shade = 1.0 if element["content"] == "white" else 0.2
    canvas.setFillColorRGB(shade, shade, shade)
    canvas.setFont(font, size)
    canvas.drawString(float(element["left"]) * mm, float(element["bottom"]) * mm, text)
    canvas.restoreState()


def _draw_page(canvas: Canvas, page: TicketPage, prepared: _Prepared, images: _Images) -> None:
    for element in prepared.elements:
        if element["page"] != 1:
            continue  # one page per ticket: elements for further background pages are left out
        kind = element["type"]
        try:
            if kind == "textarea":
                text = element_text(element, page.values, page.locale)
                if text:
                    _draw_text(canvas, element, text)
            elif kind == "barcodearea":
                text = element_text(element, page.values, page.locale)
                if element.get("nowhitespace"):
                    text = "".join(text.split())
                if text:
                    _draw_qr(canvas, element, text)
            elif kind == "imagearea":
                data = page.images.get(element["content"])
                if data:
                    _draw_image(canvas, element, data, images)
            elif kind == "poweredby":
                _draw_powered_by(canvas, element)
        except RenderError as exc:
            raise RenderError(
                f"{_describe(page.layout)}, element {element['index']}: {exc}"
            ) from None
        except Exception as exc:
            raise RenderError(
                f"{_describe(page.layout)}, element {element['index']}, could not be drawn "
                f"({type(exc).__name__})."
            ) from exc


# -- documents ----------------------------------------------------------------------------------


class _Layouts:
    """Each layout of a document checked, and its background read, once; each background
    (by content) becomes one form in the document."""

    def __init__(self, canvas: Canvas) -> None:
        self.canvas = canvas
        self.prepared: dict[int, _Prepared] = {}
        self._forms: dict[str, tuple[str, BackgroundPage]] = {}

    def get(self, layout: RenderLayout) -> _Prepared:
        found = self.prepared.get(id(layout))
        if found is None:
            found = self.prepared[id(layout)] = self._prepare(layout)
        return found

    def _prepare(self, layout: RenderLayout) -> _Prepared:
        try:
            elements = normalized_elements(layout.layout)
        except LayoutError as exc:
            raise RenderError(f"{_describe(layout)} is not valid: {exc}") from None
        if not layout.background:
            return _Prepared(elements, None, A4)
        digest = hashlib.sha256(layout.background).hexdigest()
        if digest not in self._forms:
            try:
                page = read_background(layout.background)
            except BackgroundError as exc:
                raise RenderError(f"{_describe(layout)}: {exc}") from None
            name = add_background(self.canvas, len(self._forms), page)
            self._forms[digest] = (name, page)
        name, page = self._forms[digest]
        return _Prepared(elements, name, (page.width, page.height))


def render_tickets(
    pages: Sequence[TicketPage],
    out: BinaryIO,
    *,
    title: str = "Tickets",
    progress: Callable[[int], None] | None = None,
    stopped: Callable[[], bool] | None = None,
) -> int:
    """Writes one PDF with a page per ticket to ``out``; returns the number of pages.
    ``progress`` hears the number of pages drawn now and then; ``stopped`` is asked before
    each page (the job's time limit passed: the drawing thread ends, raising RenderError).
    Raises :class:`RenderError` when a layout cannot be drawn."""
    if not pages:
        raise RenderError("There are no tickets to render.")
    # The page preamble names a font too: an embedded one, not the viewer's Helvetica.
    canvas = Canvas(
        out, pagesize=A4, pageCompression=1, invariant=1, initialFontName=fonts.font_name()
    )
    canvas.setTitle(title)
    canvas.setCreator("Admit")
    layouts = _Layouts(canvas)
    images = _Images()
    for number, page in enumerate(pages, start=1):
        if stopped is not None and stopped():
            raise RenderError("Rendering was stopped: it took too long.")
        ready = layouts.get(page.layout)
        canvas.setPageSize(ready.size)
        if ready.background is not None:
            canvas.doForm(ready.background)  # under everything else on the page
        _draw_page(canvas, page, ready, images)
        canvas.showPage()
        if progress is not None and number % PROGRESS_EVERY == 0:
            progress(number)
    try:
        canvas.save()
    except Exception as exc:  # copying a background's objects can meet anything
        raise RenderError(f"The PDF could not be written ({type(exc).__name__}).") from exc
    return len(pages)
