"""Plugins and sales channels known to Admit, with the ``pretix.plugins.`` alias on input."""

from __future__ import annotations

PLUGINS: tuple[str, ...] = (
    "autocheckin",
    "badges",
    "banktransfer",
    "checkinlists",
    "manualpayment",
    "reports",
    "sendmail",
    "statistics",
    "ticketoutputpdf",
    "webcheckin",
)

SALES_CHANNELS: tuple[str, ...] = ("web", "api", "box_office", "resellers")

_ALIAS_PREFIX = "pretix.plugins."


def canonical_plugin(name: str) -> str:
    return name[len(_ALIAS_PREFIX) :] if name.startswith(_ALIAS_PREFIX) else name
