"""The event settings the reference exposes at ``E/settings/``, as far as Admit has them.

:data:`EVENT_SETTINGS` is the registry (``kit/resources/settings.py``); this module declares the
core keys with the reference's names and defaults, and other packages register theirs (the waiting
list its voucher keys, stored in its own table). Values that were set live in
``events.settings`` (JSON), so every path that has the event row (the order lane included)
reads them without another query: :func:`value` is the one way to read a setting.

Write permissions follow the reference's split: general keys need
``event.settings.general:write``, payment keys ``event.settings.payment:write``, invoice keys
``event.settings.invoicing:write``.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field
from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.resources.schema import Date, I18n, LocaleCode, TimeZoneName, email_type
from admit.kit.resources.settings import Binding, Setting, SettingsRegistry
from admit.models import Event

GENERAL = "event.settings.general:write"
PAYMENT = "event.settings.payment:write"
INVOICING = "event.settings.invoicing:write"

EVENT_SETTINGS = SettingsRegistry("EventSettingsIn")
# Keys that hold an uploaded file (the reference's ``invoice_logo_image``): written as
# ``file:<id>`` of the caller's upload (``POST /api/v1/upload``), of one of the content types
# given here; kept as the upload's media path, read as its absolute media URL.
FILE_KEYS: dict[str, frozenset[str]] = {}

# Payment plugins and the setting that switches their method on (the reference needs both).
PAYMENT_METHODS: dict[str, str] = {
    "banktransfer": "payment_banktransfer__enabled",
    "manualpayment": "payment_manual__enabled",
}


def value(event: Event, key: str) -> Any:
    """The event's setting ``key`` (its default when unset). Only for keys kept in the
    settings column: bound keys are read through their owner."""
    stored = event.settings or {}
    return stored[key] if key in stored else EVENT_SETTINGS.get(key).default


def _int_input(raw: Any) -> Any:
    if isinstance(raw, bool):
        raise ValueError("A valid integer is required.")
    return raw


def _check_url(raw: str) -> str:
    if not re.match(r"^https?://[^\s/$.?#][^\s]*$", raw, re.IGNORECASE):
        raise ValueError("Enter a valid URL.")
    return raw


def _check_iban(raw: str) -> str:
    compact = raw.replace(" ", "").upper()
    if not re.fullmatch(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}", compact):
        raise ValueError("Enter a valid IBAN.")
    digits = "".join(str(int(c, 36)) for c in compact[4:] + compact[:4])
    if int(digits) % 97 != 1:
        raise ValueError("Enter a valid IBAN.")
    return compact


def _check_bic(raw: str) -> str:
    compact = raw.replace(" ", "").upper()
    if not re.fullmatch(r"[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?", compact):
        raise ValueError("Enter a valid BIC.")
    return compact


ItemCount = Annotated[int, BeforeValidator(_int_input), Field(ge=1, le=10_000)]
Fee = Annotated[str, Field(pattern=r"^\d{1,8}(\.\d{1,2})?$")]
Days = Annotated[int, BeforeValidator(_int_input), Field(ge=0, le=1_000_000)]
Short = Annotated[str, Field(max_length=200)]
Url = Annotated[str, Field(max_length=200), AfterValidator(_check_url)]
Iban = Annotated[str, Field(max_length=64), AfterValidator(_check_iban)]
Bic = Annotated[str, Field(max_length=16), AfterValidator(_check_bic)]


NOT_A_NUMBER = "A valid number is required."
MAX_AMOUNT = Decimal("99999999.99")


def _number(raw: Any) -> Decimal:
    """A number from JSON (number or text); never a bool, NaN or infinity."""
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise ValueError(NOT_A_NUMBER)
    try:
        number = Decimal(str(raw).strip())
    except InvalidOperation:
        raise ValueError(NOT_A_NUMBER) from None
    if not number.is_finite():
        raise ValueError(NOT_A_NUMBER)
    return number


def _percent_text(raw: Any) -> Any:
    """A percentage as the reference shows it: decimal text with two places ("12.50"),
    from a number or text; anything else fails with the reference's sentence."""
    number = _number(raw)
    if not 0 <= number <= 100:
        raise ValueError("Ensure this value is between 0 and 100.")
    return str(number.quantize(Decimal("0.01")))


def _amount_text(raw: Any) -> str:
    """An amount of money: 0 or more, at most two places, kept as decimal text ("1.50")."""
    number = _number(raw)
    if number < 0:
        raise ValueError("Ensure this value is greater than or equal to 0.")
    if number > MAX_AMOUNT:
        raise ValueError(f"Ensure this value is less than or equal to {MAX_AMOUNT}.")
    if number != number.quantize(Decimal("0.01")):
        raise ValueError("Ensure that there are no more than 2 decimal places.")
    return str(number.quantize(Decimal("0.01")))


Percent = Annotated[str, BeforeValidator(_percent_text)]
Amount = Annotated[str, BeforeValidator(_amount_text)]
Locales = Annotated[list[LocaleCode], Field(min_length=1, max_length=50)]
Email = email_type()


def _setting(
    key: str, annotation: Any, default: Any, label: str, permission: str = GENERAL
) -> Setting:
    return Setting(
        key=key, annotation=annotation, default=default, label=label, permission=permission
    )


# -- time zone: the event's own column -----------------------------------------------------


async def _load_timezone(_session: AsyncSession, event: Event) -> Any:
    return event.timezone


async def _store_timezone(_session: AsyncSession, event: Event, raw: Any) -> None:
    event.timezone = raw if raw is not None else "UTC"


EVENT_SETTINGS.register(
    Setting(
        key="timezone",
        annotation=TimeZoneName,
        default="UTC",
        label="Event timezone",
        permission=GENERAL,
        binding=Binding(load=_load_timezone, store=_store_timezone),
    ),
    _setting("locales", Locales, ["en"], "Available languages"),
    _setting("locale", LocaleCode, "en", "Default language"),
    _setting("contact_mail", Email, None, "Contact address"),
    _setting("imprint_url", Url | None, None, "Imprint URL"),
    _setting("frontpage_text", I18n, {}, "Frontpage text"),
    _setting("attendee_names_asked", bool, True, "Ask for attendee names"),
    _setting("attendee_names_required", bool, False, "Require attendee names"),
    _setting("attendee_emails_asked", bool, False, "Ask for email addresses per ticket"),
    _setting("attendee_emails_required", bool, False, "Require email addresses per ticket"),
    _setting("max_items_per_order", ItemCount, 10, "Maximum number of items per order"),
    _setting("ticket_download", bool, False, "Allow users to download tickets"),
    _setting("ticket_download_addons", bool, False, "Generate tickets for add-on products"),
    _setting("ticket_download_nonadm", bool, True, "Generate tickets for all products"),
    _setting("ticket_download_pending", bool, False, "Generate tickets for pending orders"),
    _setting("waiting_list_enabled", bool, False, "Enable waiting list"),
    _setting("cancel_allow_user", bool, True, "Customers can cancel their unpaid orders"),
    _setting("cancel_allow_user_paid", bool, False, "Customers can cancel their paid orders"),
    _setting("cancel_allow_user_paid_keep", Fee, "0.00", "Keep a fixed cancellation fee"),
    _setting(
        "cancel_allow_user_paid_keep_fees", bool, False, "Keep payment, shipping and service fees"
    ),
    _setting(
        "cancel_allow_user_paid_keep_percentage",
        Percent,
        "0.00",
        "Keep a percentual cancellation fee",
    ),
    # Payment terms: orders expire at the end of the day this many days after they are
    # placed (in the event's time zone), never after ``payment_term_last``.
    _setting("payment_term_days", Days, 14, "Payment term in days", PAYMENT),
    _setting("payment_term_last", Date | None, None, "Last date of payments", PAYMENT),
    _setting("payment_term_weekdays", bool, True, "Only end payment terms on weekdays", PAYMENT),
    _setting(
        "payment_term_expire_automatically",
        bool,
        True,
        "Automatically expire unpaid orders",
        PAYMENT,
    ),
    _setting("payment_term_accept_late", bool, True, "Accept late payments", PAYMENT),
    _setting("payment_explanation", I18n, {}, "Guidance text", PAYMENT),
    _setting("payment_banktransfer__enabled", bool, False, "Enable bank transfer", PAYMENT),
    _setting(
        "payment_banktransfer_bank_details_type",
        Literal["sepa", "other"],
        "sepa",
        "Bank account type",
        PAYMENT,
    ),
    _setting(
        "payment_banktransfer_bank_details_sepa_name",
        Short | None,
        None,
        "Name of account holder",
        PAYMENT,
    ),
    _setting("payment_banktransfer_bank_details_sepa_iban", Iban | None, None, "IBAN", PAYMENT),
    _setting("payment_banktransfer_bank_details_sepa_bic", Bic | None, None, "BIC", PAYMENT),
    _setting(
        "payment_banktransfer_bank_details_sepa_bank", Short | None, None, "Name of bank", PAYMENT
    ),
    _setting("payment_banktransfer_bank_details", I18n, {}, "Bank account details", PAYMENT),
    _setting("payment_manual__enabled", bool, False, "Enable manual payment", PAYMENT),
    _setting("invoice_address_asked", bool, True, "Ask for invoice address", INVOICING),
    _setting("invoice_address_required", bool, False, "Require invoice address", INVOICING),
    _setting("invoice_address_vatid", bool, False, "Ask for VAT ID", INVOICING),
    _setting(
        "invoice_address_company_required", bool, False, "Require a business address", INVOICING
    ),
    _setting("invoice_name_required", bool, False, "Require customer name", INVOICING),
    _setting(
        "invoice_generate",
        Literal["False", "admin", "user", "paid", "True"],
        "False",
        "Generate invoices",
        INVOICING,
    ),
)


@EVENT_SETTINGS.rule
def _locale_is_offered(merged: dict[str, Any]) -> dict[str, list[str]]:
    if merged["locale"] not in merged["locales"]:
        return {"locale": ["The default locale must be one of the enabled locales."]}
    return {}


@EVENT_SETTINGS.rule
def _names_required_are_asked(merged: dict[str, Any]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    if merged["attendee_names_required"] and not merged["attendee_names_asked"]:
        errors["attendee_names_required"] = [
            "You cannot require specifying attendee names if you do not ask for them."
        ]
    if merged["attendee_emails_required"] and not merged["attendee_emails_asked"]:
        errors["attendee_emails_required"] = [
            "You have to ask for attendee emails if you want to make them required."
        ]
    if merged["invoice_address_required"] and not merged["invoice_address_asked"]:
        errors["invoice_address_required"] = [
            "You have to ask for invoice addresses if you want to make them required."
        ]
    return errors


async def load(session: AsyncSession, event: Event) -> dict[str, Any]:
    """Every registered key of ``event`` with its value."""
    stored = dict(event.settings or {})
    for setting in EVENT_SETTINGS:
        if setting.binding is not None:
            stored[setting.key] = await setting.binding.load(session, event)
    return EVENT_SETTINGS.values(stored)


async def save(session: AsyncSession, event: Event, changes: dict[str, Any]) -> None:
    """Writes the checked ``changes`` (None resets a key to its default)."""
    for key, raw in changes.items():
        if (binding := EVENT_SETTINGS.get(key).binding) is not None:
            await binding.store(session, event, raw)
    stored = EVENT_SETTINGS.applied(event.settings or {}, changes)
    if stored != (event.settings or {}):
        event.settings = stored  # a new dict: the JSON column sees the change


def enabled_payment_methods(event: Event, plugins: list[str]) -> list[str]:
    """The payment plugins whose method is switched on (plugin enabled and its setting)."""
    return [p for p, key in PAYMENT_METHODS.items() if p in plugins and value(event, key)]
