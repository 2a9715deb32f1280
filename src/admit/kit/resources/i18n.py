"""Multi-lingual texts as the reference stores them (``{"en": ..., "de": ...}``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def language_of(locale: str) -> str:
    """The base language of a locale: ``de`` for ``de-informal`` or ``de_AT``."""
    return locale.split("-")[0].split("_")[0]


def localized(value: Any, locale: str) -> str:
    """A multi-lingual value in ``locale``: that language, else its base language, else
    English, else any language it has; a plain value as text, None as ""."""
    if value is None:
        return ""
    if not isinstance(value, Mapping):
        return str(value)
    for key in (locale, language_of(locale), "en"):
        found = value.get(key)
        if found:
            return str(found)
    return str(next((v for v in value.values() if v), ""))
