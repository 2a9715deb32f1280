"""The renderer alone (no database): pages, text in any script, QR codes that scan, the
background embedded once, images, and layouts that cannot be drawn."""

from __future__ import annotations

import io
import secrets

import pytest
from reportlab.lib.pagesizes import A5, landscape

from admit.kit.pdf import fonts
from admit.tickets import render as render_module
from admit.tickets.render import (
    RenderError,
    RenderLayout,
    TicketPage,
    element_text,
    render_tickets,
    wrap,
)
from tests.tickets.helpers import (
    NAMES,
    TEXT_LAYOUT,
    background_pdf,
    content_of,
    page_texts,
    pdf_reader,
    png_bytes,
    qr_codes,
    streams_with,
    text_element,
)


def values(name: str, **kw: str) -> dict[str, str]:
    return {"attendee_name": name, "order": "ABC12", "secret": secrets.token_hex(16), **kw}


def rendered(pages: list[TicketPage]) -> bytes:
    out = io.BytesIO()
    assert render_tickets(pages, out) == len(pages)
    return out.getvalue()


def test_one_page_per_ticket_with_names_in_any_script_and_scannable_codes():
    layout = RenderLayout(1, "Main", TEXT_LAYOUT)
    tickets = [TicketPage(layout, values(name)) for name in NAMES]
    pdf = rendered(tickets)
    reader = pdf_reader(pdf)
    assert len(reader.pages) == len(NAMES)
    texts = page_texts(pdf)
    for number, ticket in enumerate(tickets):
        assert ticket.values["attendee_name"] in texts[number]
        assert "ABC12" in texts[number]
        assert qr_codes(pdf, number) == [ticket.values["secret"]]
    # Without a background the page is A4.
    box = reader.pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (595, 842)


def test_the_background_is_embedded_once_and_sets_the_page_size():
    background = background_pdf(landscape(A5))
    layout = RenderLayout(7, "With background", [text_element("attendee_name", 100)], background)
    pdf = rendered([TicketPage(layout, values(f"Guest {n}")) for n in range(25)])
    reader = pdf_reader(pdf)
    assert len(reader.pages) == 25
    assert streams_with(pdf, content_of(background)) == 1
    width, height = landscape(A5)
    for page in reader.pages:
        assert (round(float(page.mediabox.width)), round(float(page.mediabox.height))) == (
            round(width),
            round(height),
        )
        assert "BACKGROUND-MARK" in page.extract_text()
    # Every page shows the one form: the same object in each page's resources.
    forms = set()
    for page in reader.pages:
        xobjects = page["/Resources"]["/XObject"]
        forms |= {xobjects.raw_get(n).idnum for n in xobjects if "AdmitBackground" in n}
    assert len(forms) == 1
    # Well under the budget: twice the background plus 20 KB a ticket.
    assert len(pdf) < 2 * len(background) + 20_000 * 25


def test_a_turned_background_gives_a_turned_page():
    background = background_pdf(A5, rotate=90)
    layout = RenderLayout(3, "Turned", [text_element("attendee_name", 50)], background)
    pdf = rendered([TicketPage(layout, values("Ada"))])
    page = pdf_reader(pdf).pages[0]
    assert round(float(page.mediabox.width)) == round(A5[1])
    assert "BACKGROUND-MARK" in page.extract_text()


def test_two_layouts_in_one_document_keep_their_own_backgrounds():
    first = RenderLayout(1, "A", TEXT_LAYOUT, background_pdf(marker="FIRST-BG"))
    second = RenderLayout(2, "B", TEXT_LAYOUT, background_pdf(A5, marker="SECOND-BG"))
    pdf = rendered([TicketPage(first, values("A1")), TicketPage(second, values("B1")),
                    TicketPage(first, values("A2"))])  # fmt: skip
    texts = page_texts(pdf)
    assert "FIRST-BG" in texts[0] and "SECOND-BG" in texts[1] and "FIRST-BG" in texts[2]
    assert "SECOND-BG" not in texts[0] + texts[2]


def test_the_product_picture_is_drawn_and_embedded_once():
    layout = RenderLayout(
        1,
        "Pictures",
        [
            {
                "type": "imagearea",
                "left": 10,
                "bottom": 10,
                "width": 60,
                "height": 40,
                "content": "item_picture",
            }
        ],
    )
    picture = png_bytes()
    pdf = rendered([TicketPage(layout, values("A"), images={"item_picture": picture})] * 5)
    reader = pdf_reader(pdf)
    images = set()
    for page in reader.pages:
        for obj in page["/Resources"]["/XObject"].values():
            form = obj.get_object()
            for inner in form.get("/Resources", {}).get("/XObject", {}).values():
                images.add(inner.idnum)
    assert len(images) == 1


def test_free_text_with_placeholders_and_translations():
    element = {"content": "other", "text": "Order {order} – {unknown}", "text_i18n": {}}
    assert element_text(element, {"order": "XY"}, "en") == "Order XY – {unknown}"
    element = {"content": "other", "text": "", "text_i18n": {"en": "Hello", "de": "Hallo {order}"}}
    assert element_text(element, {"order": "XY"}, "de-informal") == "Hallo XY"
    assert element_text(element, {"order": "XY"}, "fr") == "Hello"


def test_wrapping_stays_within_the_width_and_cuts_long_words():
    font = fonts.font_name()
    width = 100.0
    lines = wrap("A rather long sentence that must wrap " + "x" * 80 + "\nnext", font, 12, width)
    assert len(lines) > 3
    assert all(line_width <= width + 0.01 for _, line_width in lines)
    assert lines[-1][0] == "next"
    cjk = wrap("山田太郎" * 20, font, 12, width)
    assert len(cjk) > 1 and "".join(text for text, _ in cjk) == "山田太郎" * 20


def test_aligned_rotated_and_downward_text_still_prints():
    elements = [
        text_element("attendee_name", 200, align="right", color=[200, 0, 0, 0.5], bold=True),
        text_element("order", 150, align="center", rotation=90, italic=True, downward=True),
        text_element(
            "other", 120, text="Line one\nLine two", lineheight=1.5, fontfamily="DejaVu Serif"
        ),
    ]
    pdf = rendered([TicketPage(RenderLayout(1, "Styles", elements), values("Zoë"))])
    text = page_texts(pdf)[0]
    assert "Zoë" in text and "ABC12" in text and "Line two" in text


def test_the_reportlab_encoder_is_used_without_zxing(monkeypatch):
    monkeypatch.setattr(render_module, "zxingcpp", None)
    ticket = TicketPage(RenderLayout(1, "Main", TEXT_LAYOUT), values("Ada"))
    assert qr_codes(rendered([ticket])) == [ticket.values["secret"]]


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ({"not": "a list"}, "is not valid"),
        ([{"type": "hologram", "left": 1, "bottom": 1}], "Element 0"),
        ([{"type": "textarea", "left": 1, "bottom": 1, "width": -5, "content": "order"}], "width"),
        ([{"type": "textarea", "left": 1, "bottom": 1, "width": 50, "content": "nope"}], "nope"),
    ],
)
def test_a_layout_that_is_not_valid_raises_a_render_error(layout, message):
    with pytest.raises(RenderError) as caught:
        rendered([TicketPage(RenderLayout(9, "Broken", layout), values("Ada"))])
    assert message in str(caught.value)
    assert '"Broken" (id 9)' in str(caught.value)


def test_a_value_too_long_for_a_qr_code_raises_a_render_error():
    element = {"type": "barcodearea", "left": 10, "bottom": 10, "size": 40}
    layout = RenderLayout(5, "Big code", [{**element, "content": "other", "text": "x" * 5000}])
    with pytest.raises(RenderError, match="too long for a QR code"):
        rendered([TicketPage(layout, values("Ada"))])


def test_a_background_that_is_no_pdf_raises_a_render_error():
    layout = RenderLayout(4, "Bad background", TEXT_LAYOUT, b"%PDF-1.4 this is not really a pdf")
    with pytest.raises(RenderError, match="background PDF cannot be read"):
        rendered([TicketPage(layout, values("Ada"))])


def test_a_picture_that_is_no_image_raises_a_render_error():
    layout = RenderLayout(
        1,
        "Pictures",
        [
            {
                "type": "imagearea",
                "left": 10,
                "bottom": 10,
                "width": 60,
                "height": 40,
                "content": "item_picture",
            }
        ],
    )
    with pytest.raises(RenderError, match="picture cannot be read"):
        rendered([TicketPage(layout, values("A"), images={"item_picture": b"GIF89a broken"})])


def _split_background() -> bytes:
    """A background whose content is two streams and whose resources sit on the page tree
    (inherited), as other PDF producers write them."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, DecodedStreamObject, NameObject

    reader = PdfReader(io.BytesIO(background_pdf(marker="SPLIT-MARK")))
    writer = PdfWriter(clone_from=reader)
    page = writer.pages[0]
    data = page.get_contents().get_data()
    middle = data.index(b"\n", len(data) // 2) + 1
    parts = []
    for chunk in (data[:middle], data[middle:]):
        stream = DecodedStreamObject()
        stream.set_data(chunk)
        parts.append(writer._add_object(stream))
    page[NameObject("/Contents")] = ArrayObject(parts)
    pages = writer.root_object["/Pages"].get_object()
    pages[NameObject("/Resources")] = page["/Resources"]
    del page["/Resources"]
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_background_with_split_content_and_inherited_resources():
    background = _split_background()
    layout = RenderLayout(2, "Split", TEXT_LAYOUT, background)
    ticket = TicketPage(layout, values("Ada"))
    pdf = rendered([ticket, ticket])
    texts = page_texts(pdf)
    assert all("SPLIT-MARK" in text and "Ada" in text for text in texts)
    assert qr_codes(pdf, 1) == [ticket.values["secret"]]
