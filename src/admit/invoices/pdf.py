"""An invoice's PDF, drawn with reportlab from the stored invoice (never from the order).

A4, the issuer top left with its tax and VAT IDs, the number, date and order on the right, the
recipient (with VAT ID), one table row per line (description, tax rate, net, gross), the totals
per tax rate and the invoice total, the reverse-charge note where it applies, the payment terms
and the footer. Text is set in the ticket fonts (:mod:`admit.kit.pdf.fonts`) with their
fallbacks, so names and addresses in any script print.

Pure function of the invoice: no database, no I/O besides the output, so a worker can draw
many in threads and a test can draw one straight away.
"""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import Image, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from admit.invoices.content import REVERSE_CHARGE_NOTE, totals_by_rate
from admit.invoices.pdfa import CREATOR, PRODUCER, FacturX, canvas_maker
from admit.kit.pdf import fonts
from admit.models import Invoice

MAX_TEXT = 2000
PADDING = 6  # reportlab's default left and right padding of a table cell (points)
LINE_WIDTHS = [95 * mm, 25 * mm, 25 * mm, 25 * mm]
TOTAL_WIDTHS = [70 * mm, 33 * mm, 33 * mm, 34 * mm]
# The box the organizer's logo is fitted into (aspect kept), top left of the first page.
LOGO_WIDTH = 60 * mm
LOGO_HEIGHT = 22 * mm


def _markup(text: str, font: str) -> str:
    text = text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
    parts = []
    for name, run in fonts.split_by_font(text, font):
        body = escape(run).replace("\n", "<br/>")
        parts.append(body if name == font else f'<font name="{name}">{body}</font>')
    return "".join(parts)


def money(value: Decimal, currency: str) -> str:
    return f"{value:,.2f} {currency}"


class _Styles:
    def __init__(self) -> None:
        self.regular = fonts.font_name()
        self.bold = fonts.font_name(bold=True)
        base = {"fontName": self.regular, "fontSize": 9, "leading": 11.5}
        self.body = ParagraphStyle("body", **base)
        self.small = ParagraphStyle("small", **{**base, "fontSize": 7.5, "leading": 9.5})
        self.right = ParagraphStyle("right", **{**base, "alignment": 2})
        self.title = ParagraphStyle(
            "title", **{**base, "fontName": self.bold, "fontSize": 16, "leading": 20}
        )
        self.strong = ParagraphStyle("strong", **{**base, "fontName": self.bold})
        self.strong_right = ParagraphStyle("strongr", **{**base, "fontName": self.bold})
        self.strong_right.alignment = 2

    def p(self, text: str, style: ParagraphStyle | None = None) -> Paragraph:
        style = style or self.body
        return Paragraph(_markup(text, style.fontName), style)

    def cell(self, text: str, width: float, style: ParagraphStyle | None = None) -> Any:
        """A table cell: the plain string when it is printable ASCII that fits the column on
        one line (drawn by the table in the cell's font, no Paragraph to lay out: most cells
        are amounts and rates), else a Paragraph that wraps and falls back to other fonts."""
        style = style or self.body
        if text.isascii() and text.isprintable():
            if stringWidth(text, style.fontName, style.fontSize) <= width - 2 * PADDING:
                return text
        return self.p(text, style)


def _issuer_text(inv: Invoice) -> str:
    place = " ".join(p for p in (inv.invoice_from_zipcode, inv.invoice_from_city) if p)
    lines = [inv.invoice_from_name, inv.invoice_from, place, inv.invoice_from_state or ""]
    lines.append(inv.invoice_from_country or "")
    if inv.invoice_from_tax_id:
        lines.append(f"Tax ID: {inv.invoice_from_tax_id}")
    if inv.invoice_from_vat_id:
        lines.append(f"VAT ID: {inv.invoice_from_vat_id}")
    return "\n".join(line for line in lines if line)


def _meta(inv: Invoice, order_code: str, refers: str | None) -> list[tuple[str, str]]:
    rows = [("Invoice number", inv.full_invoice_no), ("Invoice date", inv.date.isoformat())]
    rows.append(("Order", order_code))
    if refers:
        rows.append(("Cancels invoice", refers))
    if inv.due_date is not None:
        rows.append(("Due date", inv.due_date.isoformat()))
    if inv.expire_date is not None:
        rows.append(("Order expires", inv.expire_date.isoformat()))
    return rows


def _text_style(s: _Styles, right_from: int) -> list[tuple[Any, ...]]:
    """How the plain-string cells are set: the body's font and size, the header row bold,
    the amount columns right-aligned (Paragraph cells carry their own style)."""
    return [
        ("FONTNAME", (0, 0), (-1, -1), s.regular),
        ("FONTNAME", (0, 0), (-1, 0), s.bold),
        ("FONTSIZE", (0, 0), (-1, -1), s.body.fontSize),
        ("LEADING", (0, 0), (-1, -1), s.body.leading),
        ("ALIGN", (right_from, 0), (-1, -1), "RIGHT"),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ]


def _lines_table(s: _Styles, inv: Invoice) -> Table:
    w = LINE_WIDTHS
    rows: list[list[Any]] = [["Description", "Tax rate", "Net", "Gross"]]
    for line in inv.lines:
        description = line.description
        if line.attendee_name:
            description += f"\nAttendee: {line.attendee_name}"
        if line.event_date_from is not None and line.fee_type is None:
            description += f"\nDate: {line.event_date_from:%Y-%m-%d %H:%M} UTC"
        if line.event_location:
            description += f"\n{line.event_location}"
        rate = f"{line.tax_rate:.2f} %" + (f" ({line.tax_code})" if line.tax_code else "")
        rows.append(
            [
                s.p(description),
                s.cell(rate, w[1], s.right),
                s.cell(money(line.gross_value - line.tax_value, inv.currency), w[2], s.right),
                s.cell(money(line.gross_value, inv.currency), w[3], s.right),
            ]
        )
    table = Table(rows, colWidths=w, repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                *_text_style(s, 1),
                ("LINEBELOW", (0, 0), (-1, 0), 0.8, colors.black),
                ("LINEBELOW", (0, 1), (-1, -1), 0.25, colors.grey),
            ]
        )
    )
    return table


def _totals_table(s: _Styles, inv: Invoice) -> Table:
    w = TOTAL_WIDTHS
    rows: list[list[Any]] = [["Tax rate", "Net", "Tax", "Gross"]]
    for group in totals_by_rate(inv.lines):
        label = f"{group['tax_rate']:.2f} % {group['tax_name']}".strip()
        if group["tax_code"]:
            label += f" ({group['tax_code']})"
        rows.append(
            [s.cell(label, w[0])]
            + [
                s.cell(money(group[k], inv.currency), w[i], s.right)
                for i, k in enumerate(("net", "tax", "gross"), start=1)
            ]
        )
    rows.append(
        ["Invoice total", "", "", s.cell(money(inv.total, inv.currency), w[3], s.strong_right)]
    )
    table = Table(rows, colWidths=w)
    table.setStyle(
        TableStyle(
            [
                *_text_style(s, 1),
                ("FONTNAME", (0, -1), (-1, -1), s.bold),
                ("LINEBELOW", (0, 0), (-1, 0), 0.8, colors.black),
                ("LINEABOVE", (0, -1), (-1, -1), 0.8, colors.black),
            ]
        )
    )
    return table


def _logo(data: bytes) -> Image:
    width, height = ImageReader(io.BytesIO(data)).getSize()
    scale = min(LOGO_WIDTH / width, LOGO_HEIGHT / height)
    return Image(io.BytesIO(data), width * scale, height * scale, hAlign="LEFT")


def render(
    inv: Invoice,
    order_code: str,
    refers: str | None = None,
    *,
    logo: bytes | None = None,
    xml: bytes | None = None,
) -> bytes:
    """The PDF of ``inv`` (its ``lines`` loaded); ``refers``: the number it cancels;
    ``logo``: an opaque image (``drawing.prepare_logo``) drawn above the issuer; ``xml``:
    the Factur-X XML, embedded with its PDF/A-3 metadata."""
    s = _Styles()
    out = io.BytesIO()
    title = "Cancellation" if inv.is_cancellation else "Invoice"
    doc = SimpleDocTemplate(
        out,
        pagesize=A4,
        leftMargin=20 * mm,
        rightMargin=20 * mm,
        topMargin=18 * mm,
        bottomMargin=22 * mm,
        title=f"{title} {inv.full_invoice_no}",
        author=inv.invoice_from_name or "Admit",
        subject=f"{title} {inv.full_invoice_no}",
        creator=CREATOR,
        producer=PRODUCER,
        keywords="",
        initialFontName=s.regular,  # not Helvetica: PDF/A embeds every font
    )
    meta = Table(
        [[k, s.cell(v, 45 * mm, s.right)] for k, v in _meta(inv, order_code, refers)],
        colWidths=[30 * mm, 45 * mm],
    )
    head = Table([[s.p(_issuer_text(inv)), meta]], colWidths=[95 * mm, 75 * mm])
    head.setStyle(
        TableStyle([("VALIGN", (0, 0), (-1, -1), "TOP"), ("FONTNAME", (0, 0), (-1, -1), s.regular)])
    )
    meta.setStyle(TableStyle([*_text_style(s, 1), ("FONTNAME", (0, 0), (0, -1), s.bold)]))
    story: list[Any] = [_logo(logo), Spacer(0, 4 * mm)] if logo else []
    story += [head, Spacer(0, 8 * mm)]
    if inv.invoice_to:
        story += [s.p(inv.invoice_to), Spacer(0, 8 * mm)]
    story += [s.p(f"{title} {inv.full_invoice_no}", s.title), Spacer(0, 4 * mm)]
    if inv.introductory_text:
        story += [s.p(inv.introductory_text), Spacer(0, 4 * mm)]
    story += [_lines_table(s, inv), Spacer(0, 6 * mm), _totals_table(s, inv)]
    if inv.reverse_charge:
        story += [Spacer(0, 4 * mm), s.p(REVERSE_CHARGE_NOTE, s.strong)]
    for extra in (inv.additional_text, inv.payment_provider_text):
        if extra:
            story += [Spacer(0, 4 * mm), s.p(extra)]
    footer = inv.footer_text

    def on_page(canvas: Any, _doc: Any) -> None:
        canvas.saveState()
        canvas.setFont(s.regular, 7.5)
        if footer:
            canvas.drawCentredString(A4[0] / 2, 12 * mm, footer[:200])
        canvas.drawRightString(A4[0] - 20 * mm, 8 * mm, f"{inv.full_invoice_no} · {_doc.page}")
        canvas.restoreState()

    doc.build(
        story,
        onFirstPage=on_page,
        onLaterPages=on_page,
        canvasmaker=canvas_maker(
            FacturX(
                xml,
                f"{title} {inv.full_invoice_no}",
                inv.invoice_from_name or "Admit",
                inv.locale or "en",
            )
            if xml is not None
            else None
        ),
    )
    return out.getvalue()
