"""The ticket layout format: checked element by element on write, normalized for the renderer.

A layout is a list of elements, as in the reference (its published layout schema). Every
element has a ``type`` and a position: ``left`` and ``bottom`` in mm from the page's lower
left corner, on ``page`` (1-based, default 1). Numbers may be JSON numbers or numeric strings
(``"17.50"``), as the reference's editor writes them. Keys a type does not use are ignored.

``textarea``
    ``width`` (mm, required), ``content`` (required): a name from
    :data:`admit.tickets.variables.TEXT_VARIABLES`, ``question_<identifier>`` (an identifier
    of one of the event's questions), ``other`` (prints ``text``) or ``other_i18n`` (prints
    ``text_i18n`` in the order's language); ``fontfamily``, ``fontsize`` (pt), ``lineheight``
    (times the font size), ``bold``, ``italic``, ``align`` (left/center/right), ``color``
    ([r, g, b] or [r, g, b, alpha]: 0..255, alpha 0..1), ``rotation`` (degrees),
    ``downward`` (text flows down from the position), ``locale``.
``barcodearea``
    ``size`` (mm, the QR code's side, required), ``content`` (a text variable as above,
    default ``secret``), ``text``/``text_i18n`` for ``other``/``other_i18n``, ``nowhitespace``.
``imagearea``
    ``width``, ``height`` (mm, required), ``content``: one of
    :data:`admit.tickets.variables.IMAGE_VARIABLES` (required).
``poweredby``
    ``size`` (mm, required), ``content``: ``dark`` (default) or ``white``.

Font families are those of :mod:`admit.kit.pdf.fonts`; the reference's family names are taken and
mapped to the closest of ours (serif, monospace, or else sans), case-insensitively.

Validation (:func:`check_layout`) refuses unknown types and variables, missing or non-numeric
values, zero or negative sizes, and positions outside the page (A4, or the background's page
of that number, with :data:`EDGE_TOLERANCE_MM` of slack at the far edges), and layouts of more
than :data:`MAX_ELEMENTS` elements or :data:`MAX_LAYOUT_BYTES` of JSON. Messages start with
``Element <i>:``, ``i`` being the element's position in the list counted from 0.

:func:`normalized_elements` gives the renderer every element as a plain dict with every key of
its type present and typed (defaults filled), in list order::

    common:      {"index": int, "type": str, "page": int >= 1, "left": float, "bottom": float}
    textarea:    + {"width": float > 0, "content": str, "text": str, "text_i18n": {lang: str},
                    "locale": str | None, "fontfamily": str (a kit.pdf.fonts family),
                    "fontsize": float > 0, "lineheight": float > 0, "bold": bool,
                    "italic": bool, "align": "left" | "center" | "right",
                    "color": [int r, int g, int b, float alpha], "rotation": float in [0, 360),
                    "downward": bool}
    barcodearea: + {"size": float > 0, "content": str, "text": str, "text_i18n": {lang: str},
                    "nowhitespace": bool}
    imagearea:   + {"width": float > 0, "height": float > 0, "content": str}
    poweredby:   + {"size": float > 0, "content": "dark" | "white"}

``content`` of a text or barcode element is a ``TEXT_VARIABLES`` name,
``question_<identifier>``, or ``other``: free text, where ``other_i18n`` is normalized to
``other`` with its ``text_i18n`` kept (``text_i18n`` is ``{}`` for plain ``other``). The
renderer prints ``text_i18n`` in the order's locale (falling back as it sees fit) when it is
not empty, else ``text``. Defaults: page 1, content ``secret`` (barcode) / ``dark``
(poweredby), text "", fontfamily ``Noto Sans``, fontsize 13, lineheight 1, bold/italic/
downward/nowhitespace false, align left, color [0, 0, 0, 1.0], rotation 0, locale None.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from admit.kit.pdf.fonts import DEFAULT_FAMILY, families
from admit.tickets.variables import FREE_TEXT, IMAGE_VARIABLES, QUESTION_PREFIX, TEXT_VARIABLES

A4_MM = (210.0, 297.0)
MAX_ELEMENTS = 500
MAX_LAYOUT_BYTES = 1_000_000
MAX_TEXT = 10_000
# Text of all elements together (each translation counted): drawing wraps every character,
# and a layout is drawn once per ticket; with the time limit of a render job, this keeps one
# ticket's page far below a second.
MAX_TOTAL_TEXT = 50_000
MAX_MESSAGES = 50
EDGE_TOLERANCE_MM = 1.0
MAX_FONT_SIZE = 500.0

TYPES = ("textarea", "barcodearea", "imagearea", "poweredby")
ALIGNS = ("left", "center", "right")
POWERED_BY = ("dark", "white")
FREE_TEXT_I18N = "other_i18n"

_NUMERIC = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")
_LANG = re.compile(r"^[A-Za-z][A-Za-z_-]{0,15}$")

_SERIF = ("PT Serif", ("droid serif", "vollkorn", "noto serif", "times", "times-roman",
                       "times new roman", "serif", "dejavu serif"))  # fmt: skip
_MONO = ("Cascadia Mono", ("space mono", "courier", "courier new", "monospace",
                           "dejavu sans mono"))  # fmt: skip
_SANS = ("Noto Sans", ("open sans", "roboto", "roboto condensed", "lato",
                       "montserrat", "oswald", "poppins", "titillium", "titillium upright",
                       "titillium semibold upright", "helvetica", "arial", "sans-serif",
                       "dejavu sans"))  # fmt: skip
FONT_ALIASES: dict[str, str] = {
    alias: family for family, aliases in (_SERIF, _MONO, _SANS) for alias in aliases
}


def font_family(name: str) -> str | None:
    """Our family for a family name of ours or of the reference; None when unknown."""
    for family in families():
        if name == family:
            return family
    return FONT_ALIASES.get(name.strip().lower())


class LayoutError(ValueError):
    """The layout is not valid; ``messages`` say where and why (for ``{"layout": [...]}``)."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


@dataclass(frozen=True)
class LayoutContext:
    """What validation checks against: the page sizes (mm) of the background, or A4 without
    one (None: positions are not checked); the event's question identifiers (None: not
    checked)."""

    pages: Sequence[tuple[float, float]] | None = (A4_MM,)
    questions: Collection[str] | None = None


def check_layout(layout: Any, context: LayoutContext) -> list[dict[str, Any]]:
    """The normalized elements of a valid layout; raises :class:`LayoutError` otherwise."""
    if not isinstance(layout, list):
        raise LayoutError(["A layout is a list of elements."])
    if len(layout) > MAX_ELEMENTS:
        raise LayoutError([f"A layout has at most {MAX_ELEMENTS} elements, not {len(layout)}."])
    try:
        size = len(orjson.dumps(layout))
    except (TypeError, orjson.JSONEncodeError):
        raise LayoutError(["The layout is not JSON data."]) from None
    if size > MAX_LAYOUT_BYTES:
        raise LayoutError([f"A layout may hold at most {MAX_LAYOUT_BYTES:,} bytes of JSON."])
    elements: list[dict[str, Any]] = []
    messages: list[str] = []
    for index, raw in enumerate(layout):
        element = _Element(index, raw, context)
        normalized = element.parse()
        if element.problems:
            messages += [f"Element {index}: {p}" for p in element.problems]
        else:
            elements.append(normalized)
        if len(messages) >= MAX_MESSAGES:
            messages = [*messages[:MAX_MESSAGES], "More problems were not listed."]
            break
    if messages:
        raise LayoutError(messages)
    total = sum(
        len(e.get("text") or "") + sum(len(v) for v in (e.get("text_i18n") or {}).values())
        for e in elements
    )
    if total > MAX_TOTAL_TEXT:
        raise LayoutError(
            [f"A layout's texts may hold at most {MAX_TOTAL_TEXT:,} characters together."]
        )
    return elements


def normalized_elements(layout: Any) -> list[dict[str, Any]]:
    """The renderer's view of a stored layout (see the module docstring for the shape).

    Positions and question identifiers were checked when the layout was written (against its
    background and the event's questions then); here only the structure is, and an element
    that no longer fits is the renderer's to handle. Raises :class:`LayoutError`."""
    return check_layout(layout, LayoutContext(pages=None, questions=None))


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        if len(value) > 40 or not _NUMERIC.match(value.strip()):
            return None
        value = value.strip()
    elif not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except (OverflowError, ValueError):
        return None
    return number if math.isfinite(number) else None


_MISSING = object()


def _shown(value: Any) -> str:
    """A value as a message names it (strings quoted and cut short)."""
    if value is None:
        return "missing"
    if isinstance(value, str):
        return f'"{value[:100]}"'
    return "not a string"


class _Element:
    """One element being checked: collects its problems, builds its normalized dict."""

    def __init__(self, index: int, raw: Any, context: LayoutContext) -> None:
        self.index = index
        self.raw = raw
        self.context = context
        self.problems: list[str] = []

    def problem(self, message: str) -> None:
        self.problems.append(message)

    # -- values -------------------------------------------------------------------------------

    def number(
        self,
        key: str,
        default: Any = _MISSING,
        *,
        positive: bool = False,
        at_most: float | None = None,
    ) -> float:
        value = self.raw.get(key, _MISSING)
        if value is _MISSING or value is None:
            if default is _MISSING:
                self.problem(f'"{key}" is required.')
                return 0.0
            return float(default)
        number = _number(value)
        if number is None:
            self.problem(f'"{key}" must be a number.')
            return 0.0
        if positive and number <= 0:
            self.problem(f'"{key}" must be greater than 0.')
        if at_most is not None and number > at_most:
            self.problem(f'"{key}" must be at most {at_most:g}.')
        return number

    def boolean(self, key: str) -> bool:
        value = self.raw.get(key, False)
        if value is None:
            return False
        if not isinstance(value, bool):
            self.problem(f'"{key}" must be true or false.')
            return False
        return value

    def string(self, key: str, default: str | None, *, limit: int = MAX_TEXT) -> str | None:
        value = self.raw.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            self.problem(f'"{key}" must be a string.')
            return default
        if len(value) > limit:
            self.problem(f'"{key}" may hold at most {limit} characters.')
        return value

    def choice(self, key: str, choices: Sequence[str], default: str | None = None) -> str:
        value = self.raw.get(key)
        if value is None and default is not None:
            return default
        if value not in choices:
            self.problem(f'"{key}" is {_shown(value)}; expected one of {", ".join(choices)}.')
            return default or choices[0]
        return value

    def translations(self) -> dict[str, str]:
        value = self.raw.get("text_i18n")
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and _LANG.match(k) and isinstance(v, str) and len(v) <= MAX_TEXT
            for k, v in value.items()
        ):
            self.problem(
                f'"text_i18n" must map language codes to strings of at most {MAX_TEXT} characters.'
            )
            return {}
        return dict(value)

    def color(self) -> list[int | float]:
        value = self.raw.get("color")
        if value is None:
            return [0, 0, 0, 1.0]
        numbers = [_number(v) for v in value] if isinstance(value, list) else []
        if not (3 <= len(numbers) <= 4) or any(n is None for n in numbers):
            self.problem('"color" must be [red, green, blue] or [red, green, blue, alpha].')
            return [0, 0, 0, 1.0]
        rgb = numbers[:3]
        alpha = numbers[3] if len(numbers) == 4 else 1.0
        if any(not (0 <= c <= 255) for c in rgb):  # type: ignore[operator]
            self.problem('"color" values must lie between 0 and 255.')
        if not (0 <= alpha <= 1):  # type: ignore[operator]
            self.problem('"color" alpha must lie between 0 and 1.')
        return [*(round(c) for c in rgb), float(alpha)]  # type: ignore[arg-type]

    def text_content(self, default: str | None) -> str:
        value = self.raw.get("content")
        if value is None and default is not None:
            return default
        if not isinstance(value, str) or not value:
            self.problem('"content" is required: the name of a variable, or "other".')
            return FREE_TEXT
        if value in TEXT_VARIABLES or value in (FREE_TEXT, FREE_TEXT_I18N):
            return value
        if value.startswith(QUESTION_PREFIX):
            identifier = value[len(QUESTION_PREFIX) :]
            questions = self.context.questions
            if not identifier or (questions is not None and identifier not in questions):
                self.problem(f'"content" names no question of this event: "{value[:100]}".')
            return value
        self.problem(f'"content" is an unknown variable: "{value[:100]}".')
        return value

    # -- elements -----------------------------------------------------------------------------

    def parse(self) -> dict[str, Any]:
        if not isinstance(self.raw, dict):
            self.problem("expected an object.")
            return {}
        kind = self.raw.get("type")
        if kind not in TYPES:
            self.problem(f"unknown type ({_shown(kind)}); expected one of {', '.join(TYPES)}.")
            return {}
        before = len(self.problems)
        page = self.number("page", 1)
        if len(self.problems) == before and (page != int(page) or page < 1):
            self.problem('"page" must be a whole number from 1.')
        element: dict[str, Any] = {
            "index": self.index,
            "type": kind,
            "page": max(1, int(page)),
            "left": self.number("left"),
            "bottom": self.number("bottom"),
        }
        parser: Callable[[dict[str, Any]], None] = getattr(self, f"_{kind}")
        parser(element)
        if not self.problems:
            self.check_position(element)
        return element

    def _free_text(self, element: dict[str, Any]) -> None:
        element["text"] = self.string("text", "")
        translations = self.translations()
        if element["content"] == FREE_TEXT_I18N:
            element["content"] = FREE_TEXT
            element["text_i18n"] = translations
        else:
            element["text_i18n"] = {}

    def _textarea(self, element: dict[str, Any]) -> None:
        element["width"] = self.number("width", positive=True)
        element["content"] = self.text_content(None)
        self._free_text(element)
        locale = self.string("locale", None, limit=16)
        element["locale"] = locale or None
        family = self.raw.get("fontfamily")
        if family is None:
            element["fontfamily"] = DEFAULT_FAMILY
        elif isinstance(family, str) and (found := font_family(family)):
            element["fontfamily"] = found
        else:
            self.problem(
                f'"fontfamily" is {_shown(family)}; expected one of {", ".join(families())} '
                "(or a family name of the reference)."
            )
            element["fontfamily"] = DEFAULT_FAMILY
        element["fontsize"] = self.number("fontsize", 13, positive=True, at_most=MAX_FONT_SIZE)
        element["lineheight"] = self.number("lineheight", 1, positive=True, at_most=10)
        element["bold"] = self.boolean("bold")
        element["italic"] = self.boolean("italic")
        element["align"] = self.choice("align", ALIGNS, "left")
        element["color"] = self.color()
        element["rotation"] = self.number("rotation", 0) % 360
        element["downward"] = self.boolean("downward")

    def _barcodearea(self, element: dict[str, Any]) -> None:
        element["size"] = self.number("size", positive=True)
        element["content"] = self.text_content("secret")
        self._free_text(element)
        element["nowhitespace"] = self.boolean("nowhitespace")

    def _imagearea(self, element: dict[str, Any]) -> None:
        element["width"] = self.number("width", positive=True)
        element["height"] = self.number("height", positive=True)
        element["content"] = self.choice("content", tuple(IMAGE_VARIABLES))

    def _poweredby(self, element: dict[str, Any]) -> None:
        element["size"] = self.number("size", positive=True)
        element["content"] = self.choice("content", POWERED_BY, "dark")

    def check_position(self, element: dict[str, Any]) -> None:
        pages = self.context.pages
        if pages is None:
            return
        page = element["page"]
        if page > len(pages):
            where = "the background has" if pages != (A4_MM,) else "without a background there is"
            self.problem(f'"page" is {page}, but {where} {len(pages)} page(s).')
            return
        width, height = pages[page - 1]
        left, bottom = element["left"], element["bottom"]
        extent_x = element.get("width", element.get("size", 0.0))
        extent_y = element.get("height", element.get("size", 0.0))
        if element["type"] == "textarea":
            extent_y = 0.0  # text height depends on the text; its box may run off the page
        if element.get("rotation"):
            extent_x = extent_y = 0.0  # a rotated box extends elsewhere: its anchor must fit
        for key, value, extent, limit in (
            ("left", left, extent_x, width),
            ("bottom", bottom, extent_y, height),
        ):
            if not (0 <= value <= limit):
                self.problem(f'"{key}" ({value:g} mm) lies outside the page (0 to {limit:.1f} mm).')
            elif value + extent > limit + EDGE_TOLERANCE_MM:
                self.problem(
                    f"the element ends {value + extent - limit:.1f} mm beyond the page "
                    f"({'width' if key == 'left' else 'height'} {limit:.1f} mm)."
                )
