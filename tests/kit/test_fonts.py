"""Tickets print every script: a ticket with Latin, Greek, Cyrillic, Chinese, Japanese, Korean
and emoji text, in every family and style, reads back the same text (pdfium's extraction), and
every font the PDF uses is embedded (a font file in its descriptor): what is printed does not
depend on the fonts of the viewer or the printer."""

from __future__ import annotations

import io
import secrets

import pypdf
import pypdfium2
import pytest

from admit.kit.pdf import fonts
from admit.tickets.render import RenderLayout, TicketPage, render_tickets
from admit.tickets.selection import BUILTIN_LAYOUT
from tests.tickets.helpers import text_element

SCRIPTS = {
    "latin": "Zoë Ångström-Łukasiewicz",
    "greek": "Αλέξανδρος Παπαδόπουλος",
    "cyrillic": "Дмитрий Шостакович",
    "chinese": "王小明 張偉",
    "japanese": "やまだ タロウ 山田太郎",
    "korean": "김철수",
    "emoji": "🎉 🎟 😀 ❤",
}
MIXED = "Zoë Αλέξης Дмитрий 山田太郎 김철수 🎉"


def _render(elements: list[dict], names: list[str]) -> bytes:
    layout = RenderLayout(1, "Scripts", elements)
    pages = [
        TicketPage(layout, {"attendee_name": n, "order": "ABC12", "secret": secrets.token_hex(8)})
        for n in names
    ]
    out = io.BytesIO()
    assert render_tickets(pages, out) == len(pages)
    return out.getvalue()


def _texts(pdf: bytes) -> list[str]:
    document = pypdfium2.PdfDocument(pdf)
    try:
        texts = []
        for page in document:
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return texts
    finally:
        document.close()


def _fonts_of(resources: pypdf.generic.DictionaryObject | None, seen: set[int]) -> list:
    """Every font dictionary reachable from ``resources`` (forms' resources included)."""
    found = []
    if resources is None:
        return found
    resources = resources.get_object()
    for font in (resources.get("/Font") or {}).values():
        found.append(font.get_object())
    for xobject in (resources.get("/XObject") or {}).values():
        ref = getattr(xobject, "idnum", None)
        if ref in seen:
            continue
        seen.add(ref)
        form = xobject.get_object()
        found += _fonts_of(form.get("/Resources"), seen)
    return found


def _embedded(font: pypdf.generic.DictionaryObject) -> bool:
    if font.get("/Subtype") == "/Type0":
        font = font["/DescendantFonts"][0].get_object()
    descriptor = font.get("/FontDescriptor")
    if descriptor is None:
        return False
    descriptor = descriptor.get_object()
    return any(key in descriptor for key in ("/FontFile", "/FontFile2", "/FontFile3"))


def _used_fonts(pdf: bytes) -> list[tuple[str, bool]]:
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    used = []
    seen: set[int] = set()
    for page in reader.pages:
        for font in _fonts_of(page.get("/Resources"), seen):
            used.append((str(font.get("/BaseFont")), _embedded(font)))
    return used


@pytest.mark.parametrize(
    ("family", "bold", "italic"),
    [
        ("Noto Sans", False, False),
        ("Noto Sans", True, False),
        ("PT Serif", False, True),
        ("Cascadia Mono", True, True),
        ("DejaVu Sans", False, False),  # a family of earlier releases (stored layouts)
    ],
)
def test_every_script_prints_in_embedded_fonts(family: str, bold: bool, italic: bool):
    element = text_element("attendee_name", fontfamily=family, bold=bold, italic=italic)
    pdf = _render([element], [*SCRIPTS.values(), MIXED])
    texts = _texts(pdf)
    for number, text in enumerate([*SCRIPTS.values(), MIXED]):
        assert text in texts[number].replace("\r\n", "\n"), (text, texts[number])
    used = _used_fonts(pdf)
    assert used, "no fonts found"
    assert [name for name, embedded in used if not embedded] == []
    names = {name for name, _ in used}
    assert any(fonts.CJK in name for name in names), names
    assert any(fonts.EMOJI in name for name in names), names


def test_the_default_layout_embeds_every_font():
    powered_by = {"type": "poweredby", "left": 15, "bottom": 20, "size": 20}
    pdf = _render([*BUILTIN_LAYOUT, powered_by], [MIXED])
    assert MIXED in " ".join(_texts(pdf)[0].split())  # wrapped at the element's width
    used = _used_fonts(pdf)
    assert used and all(embedded for _, embedded in used), used


@pytest.mark.parametrize(("script", "text"), SCRIPTS.items())
def test_every_character_has_a_glyph_in_the_font_it_prints_in(script: str, text: str):
    """No character of these scripts falls through every face (a box in the print)."""
    from reportlab.pdfbase import pdfmetrics

    for family in fonts.families():
        primary = fonts.font_name(family)
        for name, run in fonts.split_by_font(text, primary):
            glyphs = pdfmetrics.getFont(name).face.charToGlyph
            missing = [c for c in run if c != " " and ord(c) not in glyphs]
            assert missing == [], (script, family, name, missing)


def test_invisible_joiners_are_dropped_not_boxed():
    runs = fonts.split_by_font("❤\ufe0f👨\u200d👩", fonts.font_name())
    assert "".join(run for _, run in runs) == "❤👨👩"


def test_families_of_earlier_releases_print_in_the_same_kind_of_face():
    assert fonts.canonical_family("DejaVu Serif") == "PT Serif"
    assert fonts.canonical_family("DejaVu Sans Mono") == "Cascadia Mono"
    assert fonts.canonical_family("DejaVu Sans") == "Noto Sans"
    assert fonts.canonical_family("Comic Sans") == fonts.DEFAULT_FAMILY
