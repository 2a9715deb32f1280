"""The invoice keys of the event settings (``E/settings/``), with the reference's names.

``invoice_generate`` itself (when invoices are issued) is a core key of
``admit.events.settings``; the keys here say how they are numbered and what they print. All are
kept in the event's settings column, so the order hooks read them from the event row they
already hold (no query). Writing them needs ``event.settings.invoicing:write``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from admit.events.settings import EVENT_SETTINGS, FILE_KEYS, INVOICING, value
from admit.kit.resources.schema import I18n
from admit.kit.resources.settings import Setting
from admit.models import Event
from admit.uploads.service import IMAGE_TYPES

Short = Annotated[str, Field(max_length=190)]
Line = Annotated[str, Field(max_length=255)]
Block = Annotated[str, Field(max_length=2000)]


def _int_input(raw: Any) -> Any:
    if isinstance(raw, bool):
        raise ValueError("A valid integer is required.")
    return raw


def _country(raw: str) -> str:
    if raw and not (len(raw) == 2 and raw.isalpha() and raw.isupper()):
        raise ValueError(f'"{raw}" is not a valid choice.')
    return raw


def _prefix(raw: str) -> str:
    """A prefix may carry ``%Y``, ``%y``, ``%m``, ``%d`` (the issue date); any other ``%``
    directive would make numbers depend on something else, so it is refused."""
    rest = raw
    for directive in ("%Y", "%y", "%m", "%d", "%%"):
        rest = rest.replace(directive, "")
    if "%" in rest:
        raise ValueError("Only %Y, %y, %m and %d can be used in an invoice number prefix.")
    if any(c in raw for c in "\n\r\t/\\"):
        raise ValueError("The prefix cannot contain slashes or line breaks.")
    return raw


Prefix = Annotated[str, Field(max_length=150), AfterValidator(_prefix)]
CounterLength = Annotated[int, BeforeValidator(_int_input), Field(ge=1, le=15)]
CountryCode = Annotated[str, Field(max_length=2), AfterValidator(_country)]
Language = Annotated[str, Field(max_length=32)]
# ``file:<id>`` on input (see ``events.settings.FILE_KEYS``), the media path once kept.
FileRef = Annotated[str, Field(max_length=2000)] | None


def _s(key: str, annotation: Any, default: Any, label: str) -> Setting:
    return Setting(
        key=key, annotation=annotation, default=default, label=label, permission=INVOICING
    )


KEYS = (
    _s("invoice_numbers_prefix", Prefix, "", "Invoice number prefix (empty: the event slug)"),
    _s(
        "invoice_numbers_prefix_cancellations",
        Prefix,
        "",
        "Invoice number prefix for cancellations (empty: the invoice prefix)",
    ),
    _s("invoice_numbers_consecutive", bool, True, "Generate invoices with consecutive numbers"),
    _s("invoice_numbers_counter_length", CounterLength, 5, "Minimum length of invoice number"),
    _s("invoice_include_free", bool, True, "Show free products on invoices"),
    _s("invoice_attendee_name", bool, True, "Show attendee names on invoices"),
    _s("invoice_event_location", bool, False, "Show event location on invoices"),
    _s("invoice_include_expire_date", bool, False, "Show expiration date of order"),
    _s("invoice_reissue_after_modify", bool, False, "Re-issue invoice after order changes"),
    _s("invoice_email_attachment", bool, True, "Attach invoices to emails"),
    _s("invoice_language", Language, "__user__", "Invoice language"),
    _s("invoice_address_from_name", Line, "", "Company name"),
    _s("invoice_address_from", Block, "", "Address line"),
    _s("invoice_address_from_zipcode", Short, "", "ZIP code"),
    _s("invoice_address_from_city", Line, "", "City"),
    _s("invoice_address_from_state", Line, "", "State"),
    _s("invoice_address_from_country", CountryCode, "", "Country"),
    _s("invoice_address_from_tax_id", Line, "", "Domestic tax ID"),
    _s("invoice_address_from_vat_id", Line, "", "EU VAT ID"),
    _s("invoice_introductory_text", I18n, {}, "Introductory text"),
    _s("invoice_additional_text", I18n, {}, "Additional text"),
    _s("invoice_footer_text", I18n, {}, "Footer"),
    _s("invoice_logo_image", FileRef, None, "Logo image (PNG, JPEG or GIF upload)"),
)


def register() -> None:
    if KEYS[0].key in EVENT_SETTINGS:
        return
    EVENT_SETTINGS.register(*KEYS)
    FILE_KEYS["invoice_logo_image"] = IMAGE_TYPES


register()


def setting(event: Event, key: str) -> Any:
    """The event's value of an invoice key (or of ``invoice_generate``)."""
    return value(event, key)
