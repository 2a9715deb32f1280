"""Unicode fonts for PDFs (tickets, attendee lists), registered with reportlab once.

reportlab's built-in fonts know only Latin-1, so a name in Greek, Cyrillic, Hebrew or Arabic
would print as boxes. DejaVu (shipped inside matplotlib's package data, a maintained wheel on
every platform) covers those scripts; text it lacks glyphs for (CJK) falls back per glyph to
reportlab's CID fonts, which every PDF viewer supplies (:func:`split_by_font`).
"""

from __future__ import annotations

import functools
from pathlib import Path

# reportlab loads on first use: API processes validate layouts (family names) without it.

# family -> (regular, bold, italic, bold italic) file names in matplotlib's font folder
_FAMILIES = {
    "DejaVu Sans": (
        "DejaVuSans.ttf",
        "DejaVuSans-Bold.ttf",
        "DejaVuSans-Oblique.ttf",
        "DejaVuSans-BoldOblique.ttf",
    ),
    "DejaVu Serif": (
        "DejaVuSerif.ttf",
        "DejaVuSerif-Bold.ttf",
        "DejaVuSerif-Italic.ttf",
        "DejaVuSerif-BoldItalic.ttf",
    ),
    "DejaVu Sans Mono": (
        "DejaVuSansMono.ttf",
        "DejaVuSansMono-Bold.ttf",
        "DejaVuSansMono-Oblique.ttf",
        "DejaVuSansMono-BoldOblique.ttf",
    ),
}
DEFAULT_FAMILY = "DejaVu Sans"
# CJK fallback: Japanese and Simplified Chinese CID fonts cover the Han script between them.
CJK_FONTS = ("HeiseiKakuGo-W5", "STSong-Light", "HYSMyeongJo-Medium")


def font_dir() -> Path:
    import matplotlib

    return Path(matplotlib.__file__).parent / "mpl-data" / "fonts" / "ttf"


def families() -> tuple[str, ...]:
    return tuple(_FAMILIES)


@functools.cache
def font_name(family: str = DEFAULT_FAMILY, bold: bool = False, italic: bool = False) -> str:
    """The registered reportlab font name for the family and style (registered on first
    use); an unknown family is the default one."""
    files = _FAMILIES.get(family) or _FAMILIES[DEFAULT_FAMILY]
    family = family if family in _FAMILIES else DEFAULT_FAMILY
    index = (2 if italic else 0) + (1 if bold else 0)
    name = f"{family.replace(' ', '')}-{('Regular', 'Bold', 'Italic', 'BoldItalic')[index]}"
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    pdfmetrics.registerFont(TTFont(name, str(font_dir() / files[index])))
    return name


@functools.cache
def _cid_font(name: str) -> str:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont

    pdfmetrics.registerFont(UnicodeCIDFont(name))
    return name


@functools.cache
def _glyphs(font: str) -> frozenset[int]:
    from reportlab.pdfbase import pdfmetrics

    face = pdfmetrics.getFont(font).face
    return frozenset(getattr(face, "charToGlyph", {}) or ())


def _fallback_for(char: str) -> str:
    code = ord(char)
    if 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
        return _cid_font("HYSMyeongJo-Medium")  # Hangul
    if 0x3040 <= code <= 0x30FF:
        return _cid_font("HeiseiKakuGo-W5")  # Kana
    return _cid_font("STSong-Light")


def split_by_font(text: str, font: str) -> list[tuple[str, str]]:
    """``text`` cut into runs of ``(font, text)``: characters the TrueType font has no glyph
    for go to a CJK CID font, so any script prints rather than boxes."""
    glyphs = _glyphs(font)
    runs: list[tuple[str, str]] = []
    for char in text:
        chosen = font if (ord(char) in glyphs or char in "\n\t ") else _fallback_for(char)
        if runs and runs[-1][0] == chosen:
            runs[-1] = (chosen, runs[-1][1] + char)
        else:
            runs.append((chosen, char))
    return runs


def string_width(text: str, font: str, size: float) -> float:
    from reportlab.pdfbase import pdfmetrics

    return sum(pdfmetrics.stringWidth(part, name, size) for name, part in split_by_font(text, font))
