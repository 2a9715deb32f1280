"""The printed attendee sheet of a check-in list: landscape A4, one row per ticket with a box
to tick at the door, the header row repeated on every page.

reportlab's ``build()`` wants the whole story up front, which for a large list means every
row's flowables in memory at once. :class:`ChunkedDocument` feeds the document template one
part at a time instead (a table of at most a few hundred rows): each part is laid out and
drawn as it comes and then dropped; only the finished pages, compressed, stay until the file
is written. Text goes through :func:`admit.kit.pdf.fonts.split_by_font`, so a name in Cyrillic,
Greek or Chinese prints in a font that has its glyphs rather than as boxes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, BinaryIO
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.platypus import Flowable, Paragraph, Spacer, Table, TableStyle
from reportlab.platypus.doctemplate import BaseDocTemplate, PageTemplate
from reportlab.platypus.frames import Frame

from admit.kit.pdf import fonts

PADDING = 3  # points left and right of a cell's text
# A cell never grows past a page: long texts are cut (reportlab cannot split a table row).
MAX_TEXT = 300


def markup(text: str, font: str) -> str:
    """Paragraph markup for ``text``: each run in a font that has its glyphs."""
    text = text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
    parts = []
    for name, run in fonts.split_by_font(text, font):
        body = escape(run).replace("\n", "<br/>")
        parts.append(body if name == font else f'<font name="{name}">{body}</font>')
    return "".join(parts)


def plain_fits(text: str, font: str, size: float, width: float) -> bool:
    """Whether ``text`` prints in ``font`` alone (no fallback glyphs) within ``width``."""
    runs = fonts.split_by_font(text, font)
    if len(runs) > 1 or (runs and runs[0][0] != font):
        return False
    return pdfmetrics.stringWidth(text, font, size) <= width


class Checkbox(Flowable):
    """A box to tick; crossed when the ticket was already checked in."""

    def __init__(self, checked: bool, size: float = 4 * mm) -> None:
        super().__init__()
        self.checked = checked
        self.size = size

    def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
        return self.size, self.size

    def draw(self) -> None:
        canvas, s = self.canv, self.size
        canvas.setLineWidth(0.8)
        canvas.rect(0, 0, s, s)
        if self.checked:
            canvas.line(0.8, 0.8, s - 0.8, s - 0.8)
            canvas.line(0.8, s - 0.8, s - 0.8, 0.8)


class ChunkedDocument:
    """A platypus document whose story arrives in parts (see the module docstring)."""

    def __init__(self, handle: BinaryIO, *, title: str, footer: str) -> None:
        self.regular = fonts.font_name()
        self.bold = fonts.font_name(bold=True)
        self.footer = footer
        self.doc = BaseDocTemplate(
            handle,
            pagesize=landscape(A4),
            leftMargin=12 * mm,
            rightMargin=12 * mm,
            topMargin=12 * mm,
            bottomMargin=14 * mm,
            title=title,
            pageCompression=1,
            initialFontName=self.regular,  # the page preamble's font: embedded, too
        )
        frame = Frame(
            self.doc.leftMargin, self.doc.bottomMargin, self.doc.width, self.doc.height, id="body"
        )
        self.doc.addPageTemplates([PageTemplate(id="sheet", frames=[frame], onPage=self._page)])
        self.text = ParagraphStyle("cell", fontName=self.regular, fontSize=8, leading=10)
        self.head = ParagraphStyle("head", fontName=self.bold, fontSize=8, leading=10)
        self.title = ParagraphStyle("title", fontName=self.bold, fontSize=14, leading=18)
        self.subtitle = ParagraphStyle("subtitle", fontName=self.regular, fontSize=10, leading=13)

    @property
    def width(self) -> float:
        return float(self.doc.width)

    def _page(self, canvas: Any, doc: Any) -> None:
        canvas.saveState()
        canvas.setFont(self.regular, 7)
        canvas.drawString(doc.leftMargin, 7 * mm, f"{self.footer} · {doc.page}")
        canvas.restoreState()

    def start(self) -> None:
        self.doc._startBuild()
        self.doc.canv._doctemplate = self.doc

    def add(self, flowables: list[Any]) -> None:
        """Lays out and draws ``flowables``; they are not kept afterwards."""
        while flowables:
            self.doc.clean_hanging()
            self.doc.handle_flowable(flowables)

    def finish(self) -> None:
        del self.doc.canv._doctemplate
        self.doc._endBuild()

    def cell(self, text: str, *, bold: bool = False) -> Paragraph:
        style = self.head if bold else self.text
        return Paragraph(markup(text, style.fontName), style)

    def body_cell(self, text: str, width: float) -> Any:
        """A row's text: a plain string when it fits on one line in the regular font (the
        table draws those directly, several times faster than laying out a paragraph),
        else a paragraph that wraps and switches fonts where a script needs it."""
        if (
            "\n" not in text
            and len(text) < 120
            and plain_fits(text, self.regular, self.text.fontSize, width - 2 * PADDING)
        ):
            return text
        return self.cell(text)

    def heading(self, title: str, subtitle: str) -> list[Any]:
        parts: list[Any] = [Paragraph(markup(title, self.bold), self.title)]
        if subtitle:
            parts.append(Paragraph(markup(subtitle, self.regular), self.subtitle))
        parts.append(Spacer(1, 4 * mm))
        return parts

    def table(
        self,
        headers: Sequence[str],
        rows: Sequence[tuple[Sequence[Any], bool]],
        widths: Sequence[float],
    ) -> Table:
        """One part of the sheet: the header row (repeated on each page) and ``rows`` of
        ``(cells, unpaid)``; a cell is text or a flowable (the check box). An unpaid
        ticket's status cell is marked red."""
        data: list[list[Any]] = [[self.cell(h, bold=True) for h in headers]]
        style: list[tuple[Any, ...]] = [
            ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8e8e8")),
            ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.HexColor("#999999")),
            ("FONT", (0, 1), (-1, -1), self.regular, self.text.fontSize, self.text.leading),
            ("LEFTPADDING", (0, 0), (-1, -1), PADDING),
            ("RIGHTPADDING", (0, 0), (-1, -1), PADDING),
            ("TOPPADDING", (0, 0), (-1, -1), 2),
            ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
        ]
        for row, unpaid in rows:
            cells = [
                c if isinstance(c, Flowable) else self.body_cell(str(c), w)
                for c, w in zip(row, widths, strict=True)
            ]
            if unpaid:
                r = len(data)
                style.append(("BACKGROUND", (4, r), (4, r), colors.HexColor("#f4c7c3")))
            data.append(cells)
        table = Table(data, colWidths=list(widths), repeatRows=1, hAlign="LEFT")
        table.setStyle(TableStyle(style))
        return table


def column_widths(total: float, questions: int) -> list[float]:
    """Box, order code, name, product, paid, then the questions sharing what is left."""
    fixed = [9 * mm, 28 * mm]
    paid = 18 * mm
    rest = total - sum(fixed) - paid
    if questions:
        share = rest * 0.42 / questions
        return [*fixed, rest * 0.29, rest * 0.29, paid, *([share] * questions)]
    return [*fixed, rest * 0.5, rest * 0.5, paid]
