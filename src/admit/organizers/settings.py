"""The organizer's settings: what holds for all of an organizer's events at once, read and
written through ``O/settings/`` as one object, as the reference has it.

The keys Admit acts on: customer accounts in the shop (``customer_accounts``: buyers may sign
up and log in, so an order can be linked to them and use their memberships;
``customer_accounts_native``: with Admit's own e-mail and password login;
``customer_accounts_link_by_email``: a guest order whose e-mail is a customer's shows in that
customer's account), and the organizer's contact address and imprint, shown on the pages
that belong to no one event (the customer account pages).
"""

from __future__ import annotations

from typing import Any

from admit.events.settings import Email, Url
from admit.kit.resources.settings import Setting, SettingsRegistry
from admit.models import Organizer

WRITE = "organizer.settings.general:write"

ORGANIZER_SETTINGS = SettingsRegistry("OrganizerSettingsIn")
ORGANIZER_SETTINGS.register(
    Setting("customer_accounts", bool, False, "Allow customers to create accounts", WRITE),
    Setting(
        "customer_accounts_native",
        bool,
        True,
        "Allow customers to log in with e-mail address and password",
        WRITE,
    ),
    Setting(
        "customer_accounts_link_by_email",
        bool,
        False,
        "Match orders based on e-mail address",
        WRITE,
        help_text="Orders placed without logging in show in the account of the customer "
        "with the same, verified e-mail address.",
    ),
    Setting("contact_mail", Email, None, "Contact address", WRITE),
    Setting("imprint_url", Url | None, None, "Imprint URL", WRITE),
)


def value(organizer: Organizer, key: str) -> Any:
    """The organizer's setting ``key`` (its default when unset)."""
    stored = organizer.settings or {}
    return stored[key] if key in stored else ORGANIZER_SETTINGS.get(key).default


def accounts_open(organizer: Organizer) -> bool:
    """Whether buyers may sign up and log in with an e-mail address and a password."""
    return bool(value(organizer, "customer_accounts")) and bool(
        value(organizer, "customer_accounts_native")
    )


def load(organizer: Organizer) -> dict[str, Any]:
    """Every registered key of ``organizer`` with its value."""
    return ORGANIZER_SETTINGS.values(organizer.settings or {})


def save(organizer: Organizer, changes: dict[str, Any]) -> None:
    """Writes the checked ``changes`` (None resets a key to its default)."""
    stored = ORGANIZER_SETTINGS.applied(organizer.settings or {}, changes)
    if stored != (organizer.settings or {}):
        organizer.settings = stored  # a new dict: the JSON column sees the change
