"""Placeholders in the subject and text of scheduled e-mails, and the language a mail is in.

A placeholder is a name in braces; ``{{`` and ``}}`` stand for literal braces. Known names:

=================  ==================================================================
``{event}``        the event's name
``{event_slug}``   the event's short form in URLs
``{order}``        the order code
``{order_email}``  the e-mail address of the order
``{name}``         the attendee's name (mails to attendees), else the invoice address
                   name, else the first attendee name of the order
``{url}``          the link to the order (``ADMIT_BASE_URL``/organizer/event/order/...)
``{date}``         start of the event (in a series: of the date) in the event's time zone
``{organizer}``    the organizer's name
=================  ==================================================================

Texts are checked when a rule is saved: an unknown name, an attribute or index
(``{order.secret}``, ``{name[0]}``), a conversion or format spec (``{event!r}``,
``{date:>99}``) or an unbalanced brace is a 400 naming it. Rendering parses the text again
with :class:`string.Formatter` and only ever substitutes the values given here, so a text can
never reach an attribute of a Python object.
"""

from __future__ import annotations

import string
from collections.abc import Mapping

PLACEHOLDERS: tuple[str, ...] = (
    "event",
    "event_slug",
    "order",
    "order_email",
    "name",
    "url",
    "date",
    "organizer",
)

_formatter = string.Formatter()


def problems(text: str) -> list[str]:
    """What is wrong with the placeholders of ``text`` (an empty list when nothing is)."""
    try:
        parts = list(_formatter.parse(text))
    except ValueError as exc:
        return [f"The text is not a valid template: {exc}. Write {{{{ and }}}} for braces."]
    found = []
    for _literal, field, spec, conversion in parts:
        if field is None:
            continue
        shown = (
            "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
        )
        shown += "}"
        if field not in PLACEHOLDERS:
            known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            found.append(f'Unknown placeholder "{shown}". Known placeholders: {known}.')
        elif conversion or spec:
            found.append(f'Placeholder "{shown}" may not have a conversion or format.')
    return found


def render(text: str, values: Mapping[str, str]) -> str:
    """``text`` with its placeholders replaced; an unknown one (only possible for texts saved
    before a check existed) is left as written."""
    try:
        parts = list(_formatter.parse(text))
    except ValueError:
        return text
    out = []
    for literal, field, spec, conversion in parts:
        out.append(literal)
        if field is None:
            continue
        if field in values and not spec and not conversion:
            out.append(values[field])
        else:
            out.append("{" + field + "}")
    return "".join(out)


def pick(texts: Mapping[str, str] | None, locale: str | None, fallback: str = "") -> str:
    """The text for ``locale``: that language, its base language (``de`` for ``de-informal``),
    English (the default language), else the first non-empty one."""
    texts = {k: v for k, v in (texts or {}).items() if isinstance(v, str) and v}
    candidates = [locale or "", (locale or "").split("-")[0].split("_")[0], "en"]
    for key in candidates:
        if key and key in texts:
            return texts[key]
    return next(iter(texts.values()), fallback)
