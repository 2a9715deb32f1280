"""Form fields of the back office's edit pages, and the two translations they need: a stored
object as the API shows it -> the form's texts, and the submitted form -> the JSON body the
API's handler validates. The translation adds no rule of its own: a text that is no number or
no date is passed on as typed, so the API's own message is the one shown by the field.

Kinds: ``text``, ``textarea``, ``i18n`` (one language, ``{"en": ...}``), ``number``,
``decimal`` (money as text), ``bool`` (a checkbox), ``select`` / ``multi`` (ids or names from
``choices``), ``datetime`` (``datetime-local`` in the event's time zone), ``lines`` (one
object a line, ``name = price``: a new product's variations).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from admit.control.render import text_of
from admit.kit.resources.filtering import PK_MAX
from admit.web.forms import Pairs, every, first


@dataclass
class Field:
    name: str
    label: str
    kind: str = "text"
    required: bool = False
    help: str = ""
    choices: list[tuple[str, str]] = field(default_factory=list)
    optional_null: bool = True  # an empty optional text is sent as null, not ""
    locale: str = "en"
    default: Any = None  # what a new object's form starts with (the API's default)


def whole_number(text: str, high: int) -> int | None:
    """``text`` as a number from 0 to ``high``; None for anything else. ASCII digits only:
    ``str.isdigit`` also takes "²" or Arabic digits, which ``int`` refuses or reads otherwise,
    and a very long number costs ``int`` time (or raises past 4,300 digits)."""
    if text.isascii() and text.isdigit() and len(text) <= len(str(high)) and int(text) <= high:
        return int(text)
    return None


def as_id(text: str) -> int | str:
    """An id typed or chosen in a form as the API's number; anything else (letters, digits
    that are not ASCII, a number past the id columns' range) is passed on as typed, so the
    API refuses it with its message instead of the JSON encoder failing on it."""
    number = whole_number(text, PK_MAX)
    return text if number is None else number


def defaults(fields: list[Field]) -> dict[str, Any]:
    """A new object's form: the API's defaults where they are not empty."""
    return {f.name: f.default for f in fields if f.default is not None}


def _zone(name: str) -> dt.tzinfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def to_form(fields: list[Field], data: dict[str, Any], tz: str = "UTC") -> dict[str, Any]:
    """The API's JSON of an object as the texts (or lists) the form shows."""
    out: dict[str, Any] = {}
    for f in fields:
        value = data.get(f.name)
        if f.kind == "i18n":
            out[f.name] = text_of(value, f.locale)
        elif f.kind == "bool":
            out[f.name] = bool(value)
        elif f.kind == "multi":
            out[f.name] = [str(v) for v in value or []]
        elif f.kind == "datetime":
            out[f.name] = _local(value, tz)
        else:
            out[f.name] = "" if value is None else str(value)
    return out


def _local(value: Any, tz: str) -> str:
    if not value:
        return ""
    try:
        moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(_zone(tz)).strftime("%Y-%m-%dT%H:%M")


def typed(fields: list[Field], pairs: Pairs) -> dict[str, Any]:
    """What was typed, to show again beside the errors."""
    out: dict[str, Any] = {}
    for f in fields:
        if f.kind == "bool":
            out[f.name] = bool(first(pairs, f.name))
        elif f.kind == "multi":
            out[f.name] = every(pairs, f.name)
        else:
            out[f.name] = first(pairs, f.name)
    return out


def _aware(text: str, tz: str) -> str:
    """A ``datetime-local`` text as an ISO moment with the offset of the time zone ``tz``;
    anything else as typed (the API says what is wrong with it)."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return text
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_zone(tz))
    return moment.isoformat()


def _line(line: str, locale: str) -> dict[str, Any]:
    """``Balcony = 120.00`` as a variation (no price: the product's)."""
    name, _, price = line.partition("=")
    out: dict[str, Any] = {"value": {locale: name.strip()}}
    if price.strip():
        out["default_price"] = price.strip()
    return out


def to_body(
    fields: list[Field], pairs: Pairs, tz: str = "UTC", current: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The JSON body of the form: every field present (a checkbox left off is false). A
    multi-language text changes the form's language only: the ``current`` object's other
    languages are kept."""
    body: dict[str, Any] = {}
    current = current or {}
    for f in fields:
        raw = first(pairs, f.name).strip()
        if f.kind == "bool":
            body[f.name] = bool(first(pairs, f.name))
        elif f.kind == "multi":
            body[f.name] = [v for v in every(pairs, f.name) if v]
        elif f.kind == "i18n":
            stored = current.get(f.name)
            texts = dict(stored) if isinstance(stored, dict) else {}
            texts.pop(f.locale, None)
            body[f.name] = {f.locale: raw, **texts} if raw else texts
        elif f.kind == "lines":
            body[f.name] = [_line(line, f.locale) for line in raw.splitlines() if line.strip()]
        elif raw == "" and not f.required and f.optional_null:
            body[f.name] = None
        elif f.kind == "datetime":
            body[f.name] = _aware(raw, tz)
        else:
            body[f.name] = raw
    return body
