"""Unicode fonts for PDFs (tickets, attendee lists), registered with reportlab on first use and
embedded (subset) in every PDF that uses them, so a ticket prints the same in every viewer.

reportlab's built-in fonts know only Latin-1. The faces come from packages made to ship fonts:

- the three families a layout chooses from, each with real bold and italic faces: Noto Sans and
  Cascadia Mono (``pymupdf-fonts``) and PT Serif (``fontpkg-pt-serif``); Latin, Greek (sans,
  mono) and Cyrillic;
- the fallbacks, tried glyph by glyph for what the chosen face lacks (:func:`split_by_font`):
  Noto Sans in the same style, WenQuanYi Micro Hei for Chinese, Japanese and Korean
  (``paperang-p2-fonts-cjk``), Noto Emoji, a monochrome emoji set, Noto Sans Symbols and Noto
  Sans for the other scripts (Arabic, Hebrew, Devanagari, Thai, ...; ``manimgx-fonts``).

reportlab embeds TrueType outlines only (it refuses CFF, the outlines of the Noto CJK fonts on
PyPI): every face here is TrueType. Nothing is written to disk; nothing is fetched.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from importlib.resources import files
from typing import Any, BinaryIO

# reportlab loads on first use: API processes validate layouts (family names) without it.

STYLES = ("Regular", "Bold", "Italic", "BoldItalic")


def _pymupdf(code: str) -> Callable[[], BinaryIO]:
    def load() -> BinaryIO:
        import pymupdf_fonts

        return io.BytesIO(pymupdf_fonts.fontbuffers[code]())

    return load


def _packaged(package: str, path: str) -> Callable[[], str]:
    return lambda: str(files(package) / path)


def _pt_serif(style: str) -> Callable[[], str]:
    return _packaged("fontpkg_pt_serif", f"files/PT_Serif-Web-{style}.ttf")


# family -> its (regular, bold, italic, bold italic) faces
_FAMILIES: dict[str, tuple[Callable[[], Any], ...]] = {
    "Noto Sans": tuple(_pymupdf(c) for c in ("notos", "notosbo", "notosit", "notosbi")),
    "PT Serif": tuple(_pt_serif(s) for s in STYLES),
    "Cascadia Mono": tuple(
        _pymupdf(c) for c in ("cascadia", "cascadiab", "cascadiai", "cascadiabi")
    ),
}
DEFAULT_FAMILY = "Noto Sans"
# The families of earlier releases (stored layouts name them): the same kind of face.
LEGACY_FAMILIES = {
    "DejaVu Sans": "Noto Sans",
    "DejaVu Serif": "PT Serif",
    "DejaVu Sans Mono": "Cascadia Mono",
}

CJK = "WenQuanYiMicroHei"
EMOJI = "NotoEmoji"
# Fallbacks after the same-style Noto Sans, in order: name -> (source, index in a collection)
_FALLBACKS: dict[str, tuple[Callable[[], Any], int]] = {
    CJK: (_packaged("paperang_p2_fonts_cjk", "fonts/wqy-microhei.ttc"), 0),
    EMOJI: (_packaged("manimgx_fonts", "NotoEmoji[wght].ttf"), 0),
    "NotoSansSymbols": (_packaged("manimgx_fonts", "NotoSansSymbols[wght].ttf"), 0),
    "NotoSansSymbols2": (_pymupdf("symbol2"), 0),
    "NotoSansMath": (_pymupdf("math"), 0),
}
# Noto Sans for scripts the faces above lack (manimgx-fonts' file names).
_SCRIPTS = (
    "Arabic", "Armenian", "Bengali", "Devanagari", "Ethiopic", "Georgian", "Gujarati",
    "Gurmukhi", "Hebrew", "Kannada", "Khmer", "Lao", "Malayalam", "Myanmar", "Oriya",
    "Sinhala", "Tamil", "Telugu", "Thai",
)  # fmt: skip
for _script in _SCRIPTS:
    _FALLBACKS[f"NotoSans{_script}"] = (
        _packaged("manimgx_fonts", f"NotoSans{_script}[wght].ttf"),
        0,
    )

# Characters that print nothing (joiners, variation selectors, tags): dropped, not boxed.
_INVISIBLE = frozenset(
    (
        0x00AD,
        0x200B,
        0x200C,
        0x200D,
        0x2060,
        0xFEFF,
        *range(0xFE00, 0xFE10),
        *range(0xE0020, 0xE0080),
    )
)


def families() -> tuple[str, ...]:
    return tuple(_FAMILIES)


def canonical_family(family: str) -> str:
    """The family ``family`` prints in (an unknown one: the default)."""
    family = LEGACY_FAMILIES.get(family, family)
    return family if family in _FAMILIES else DEFAULT_FAMILY


def _utf16_hex(code: int) -> str:
    return chr(code).encode("utf-16-be").hex().upper()


@functools.cache
def _fix_to_unicode_maps() -> None:
    """reportlab writes a character beyond U+FFFF (emoji, rare CJK) into a subset's ToUnicode
    map as five hex digits, which readers take as the first four: the emoji prints but copies
    and searches as another character. The map is written here with the UTF-16 code units
    the PDF format asks for (a surrogate pair for those characters)."""
    from reportlab.pdfbase import ttfonts

    original = ttfonts.makeToUnicodeCMap

    def to_unicode_cmap(fontname: str, subset: list[int]) -> str:
        text = original(fontname, subset)
        head, _, rest = text.partition(" beginbfchar\n")
        _, _, tail = rest.partition("endbfchar")
        pairs = "\n".join(f"<{i:02X}> <{_utf16_hex(v)}>" for i, v in enumerate(subset))
        return f"{head} beginbfchar\n{pairs}\nendbfchar{tail}"

    ttfonts.makeToUnicodeCMap = to_unicode_cmap


def _register(name: str, source: Any, index: int = 0) -> str:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    _fix_to_unicode_maps()
    pdfmetrics.registerFont(TTFont(name, source, subfontIndex=index))
    return name


# registered name -> style index (which same-style Noto Sans face its fallbacks start with)
_STYLE_OF: dict[str, int] = {}


@functools.cache
def font_name(family: str = DEFAULT_FAMILY, bold: bool = False, italic: bool = False) -> str:
    """The registered reportlab font name for the family and style (registered on first
    use); an unknown family is the default one."""
    family = canonical_family(family)
    index = (2 if italic else 0) + (1 if bold else 0)
    name = f"{family.replace(' ', '')}-{STYLES[index]}"
    _STYLE_OF[name] = index
    return _register(name, _FAMILIES[family][index]())


@functools.cache
def _fallback(name: str) -> str:
    source, index = _FALLBACKS[name]
    return _register(name, source(), index)


@functools.cache
def _glyphs(font: str) -> frozenset[int]:
    from reportlab.pdfbase import pdfmetrics

    face = pdfmetrics.getFont(font).face
    return frozenset(getattr(face, "charToGlyph", {}) or ())


def _chain(font: str) -> tuple[Callable[[], str], ...]:
    style = _STYLE_OF.get(font, 0)
    same_style = functools.partial(font_name, DEFAULT_FAMILY, bool(style & 1), bool(style & 2))
    return (same_style, *(functools.partial(_fallback, name) for name in _FALLBACKS))


@functools.lru_cache(maxsize=65536)
def _font_for(font: str, code: int) -> str:
    """The first font of ``font``'s fallback chain with a glyph for ``code`` (``font`` itself
    when none has one: its missing-glyph box marks what no face can print)."""
    if code in _glyphs(font):
        return font
    for candidate in _chain(font):
        name = candidate()
        if code in _glyphs(name):
            return name
    return font


def split_by_font(text: str, font: str) -> list[tuple[str, str]]:
    """``text`` cut into runs of ``(font, text)``: characters ``font`` has no glyph for go to
    the first fallback that has one, so any script (and emoji) prints rather than boxes."""
    glyphs = _glyphs(font)
    runs: list[tuple[str, str]] = []
    for char in text:
        code = ord(char)
        if code in _INVISIBLE:
            continue
        chosen = font if (code in glyphs or char in "\n\t ") else _font_for(font, code)
        if runs and runs[-1][0] == chosen:
            runs[-1] = (chosen, runs[-1][1] + char)
        else:
            runs.append((chosen, char))
    return runs


def string_width(text: str, font: str, size: float) -> float:
    from reportlab.pdfbase import pdfmetrics

    return sum(pdfmetrics.stringWidth(part, name, size) for name, part in split_by_font(text, font))
