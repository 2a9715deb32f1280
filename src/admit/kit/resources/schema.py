"""Base schemas and field types shared by every resource."""

from __future__ import annotations

import datetime as dt
import functools
import re
import zoneinfo
from decimal import Decimal
from typing import Annotated, Any

from email_validator import EmailNotValidError, validate_email
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
)


class ReadModel(BaseModel):
    """Output schema: built from ORM objects (or dicts), serialised to JSON."""

    model_config = ConfigDict(from_attributes=True)


class WriteModel(BaseModel):
    """Input schema: unknown and read-only fields are ignored, as the reference does."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False)


# Text limits. Names are shown in lists, on tickets and in e-mail subjects; free texts
# (descriptions, comments, notes, templates) are bounded so one request cannot store megabytes
# in a field nobody reads whole. The messages are the reference's.
NAME_MAX_LENGTH = 200
TEXT_MAX_LENGTH = 100_000


def too_long(max_length: int) -> str:
    return f"Ensure this field has no more than {max_length} characters."


# A name or title (plain text); a column-bound field keeps its column's own limit.
Name = Annotated[str, Field(max_length=NAME_MAX_LENGTH)]
# A free text: a description, comment, note or template.
LongText = Annotated[str, Field(max_length=TEXT_MAX_LENGTH)]


def _to_i18n(value: Any) -> Any:
    if isinstance(value, str):
        return {"en": value}
    return value


def _check_i18n(value: dict[str, str]) -> dict[str, str]:
    for key, text in value.items():
        if not key or len(key) > 16:
            raise ValueError(f'"{key}" is not a valid language code.')
        if len(text) > TEXT_MAX_LENGTH:
            raise ValueError(too_long(TEXT_MAX_LENGTH))
    return value


# Multi-lingual text: {"en": "...", "de": "..."}; a plain string is taken as English. Each
# translation is a free text (at most TEXT_MAX_LENGTH characters).
I18n = Annotated[dict[str, str], BeforeValidator(_to_i18n), AfterValidator(_check_i18n)]


def _require_nonempty_i18n(value: dict[str, str]) -> dict[str, str]:
    if not any(v.strip() for v in value.values()):
        raise ValueError("This field may not be blank.")
    return value


RequiredI18n = Annotated[I18n, AfterValidator(_require_nonempty_i18n)]


def i18n_name(max_length: int = NAME_MAX_LENGTH) -> Any:
    """A required multi-lingual name whose every translation has at most ``max_length``
    characters (the reference allows 255 for products and categories, 200 for events)."""

    def check(value: dict[str, str]) -> dict[str, str]:
        if any(len(text) > max_length for text in value.values()):
            raise ValueError(too_long(max_length))
        return value

    return Annotated[RequiredI18n, AfterValidator(check)]


I18nName = i18n_name()

SLUG_RE = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9.\-]*$")


def _check_slug(value: str) -> str:
    if not SLUG_RE.match(value):
        raise ValueError(
            "The slug may only contain letters, numbers, dots and dashes, and must start "
            "with a letter or number."
        )
    return value


Slug = Annotated[str, AfterValidator(_check_slug)]


@functools.cache
def _timezones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones() - {"localtime", "Factory"})


def _check_timezone(value: str) -> str:
    if value not in _timezones():
        raise ValueError(f'"{value}" is not a valid choice.')
    return value


TimeZoneName = Annotated[str, AfterValidator(_check_timezone)]

# The languages the reference offers (event locales, export headers, texts).
LOCALES: frozenset[str] = frozenset(
    "ar ca cs da de de-informal el en es et eu fi fr gl he hu id it ja ko lt lv nb-no nl "
    "nl-be nl-informal pl pt-br pt-pt ro ru sk sl sq sv th tr uk zh-hans zh-hant".split()
)


def _check_locale(value: str) -> str:
    if value not in LOCALES:
        raise ValueError(f'"{value}" is not a valid choice.')
    return value


LocaleCode = Annotated[str, AfterValidator(_check_locale)]


def _money_str(value: Decimal) -> str:
    return f"{value:.2f}"


def _decimal_input(value: Any) -> Any:
    """Numbers or numeric strings; never booleans."""
    if isinstance(value, bool):
        raise ValueError("A valid number is required.")
    if isinstance(value, float):
        return Decimal(repr(value))
    return value


# Money: Decimal in Python, "23.00" in JSON; input as "23.00", "23" or 23, two places at most.
Money = Annotated[
    Decimal,
    BeforeValidator(_decimal_input),
    Field(max_digits=13, decimal_places=2, allow_inf_nan=False),
    PlainSerializer(_money_str, return_type=str, when_used="json"),
]

# A price a customer pays: never below zero (a discount is a lower price or a fee, not a
# negative ticket).
Price = Annotated[Money, Field(ge=0)]

# A percentage or rate with two decimal places ("19.00").
Percent = Annotated[
    Decimal,
    BeforeValidator(_decimal_input),
    Field(max_digits=10, decimal_places=2, allow_inf_nan=False),
    PlainSerializer(_money_str, return_type=str, when_used="json"),
]


# Every datetime and date the API accepts lies in these years. Stored values are shifted
# into any time zone (UTC+14 and -12), validity windows and payment terms add up to a century
# (``+ timedelta(days=…)``), reminders go back days: year 1 and 9999 overflow in those
# computations (a 500 at render time, long after the write), years 1900 to 9000 never do.
MIN_YEAR = 1900
MAX_YEAR = 9000
OUT_OF_RANGE = f"Enter a date between the years {MIN_YEAR} and {MAX_YEAR}."


def _assume_utc(value: dt.datetime) -> dt.datetime:
    value = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    try:
        utc = value.astimezone(dt.UTC)  # stored as UTC: year 1 / 9999 with an offset overflows
    except OverflowError:
        raise ValueError(OUT_OF_RANGE) from None
    if not MIN_YEAR <= utc.year <= MAX_YEAR:
        raise ValueError(OUT_OF_RANGE)
    return value


def check_datetime_range(value: dt.datetime) -> dt.datetime:
    """The shared bound for datetimes parsed outside a schema (e.g. answers): an aware value
    (naive ones are taken as UTC) within :data:`MIN_YEAR`..:data:`MAX_YEAR`."""
    return _assume_utc(value)


def check_date_range(value: dt.date) -> dt.date:
    """The shared bound (:data:`MIN_YEAR`..:data:`MAX_YEAR`) for date-only inputs."""
    if not MIN_YEAR <= value.year <= MAX_YEAR:
        raise ValueError(OUT_OF_RANGE)
    return value


def _require_date_text(value: Any) -> Any:
    """ISO 8601 date text (``YYYY-MM-DD``), or a date."""
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if not isinstance(value, str) or len(value) != 10:
        raise ValueError("Date has wrong format. Use one of these formats instead: YYYY-MM-DD.")
    return value


# A calendar date (``YYYY-MM-DD``) within the supported years.
Date = Annotated[dt.date, BeforeValidator(_require_date_text), AfterValidator(check_date_range)]


_DATETIME_FORMAT = (
    "Datetime has wrong format. Use one of these formats instead: "
    "YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."
)


def _require_datetime_text(value: Any) -> Any:
    """ISO 8601 text with a time part only: no Unix timestamps, no bare dates."""
    if isinstance(value, dt.datetime):
        return value
    if not isinstance(value, str) or len(value) < 16 or value[10] not in "Tt ":
        raise ValueError(_DATETIME_FORMAT)
    return value


# Datetimes are timezone-aware; a value sent without an offset is taken as UTC.
DateTime = Annotated[
    dt.datetime, BeforeValidator(_require_datetime_text), AfterValidator(_assume_utc)
]


def _reject_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("A valid number is required.")
    return value


# A JSON number (or numeric string); true/false are not numbers here.
Number = Annotated[float, BeforeValidator(_reject_bool)]


def _pk_input(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("Incorrect type. Expected pk value, received bool.")
    return value


# A referenced object's id; JSON true/false would otherwise pass as 1/0.
Pk = Annotated[int, BeforeValidator(_pk_input)]


def email_address(value: str | None, max_length: int = 254) -> str | None:
    """A checked, normalised e-mail address (empty means none); no DNS lookups."""
    if value is None or value.strip() == "":
        return None
    try:
        address = validate_email(value.strip(), check_deliverability=False).normalized
    except EmailNotValidError:
        raise ValueError("Enter a valid email address.") from None
    if len(address) > max_length:
        raise ValueError(f"Ensure this field has no more than {max_length} characters.")
    return address


def email_type(max_length: int = 254) -> Any:
    """An optional e-mail field for a column ``max_length`` wide."""
    return Annotated[
        str | None, AfterValidator(functools.partial(email_address, max_length=max_length))
    ]


Email = email_type()

PHONE_RE = re.compile(r"^\+?[0-9 ()./-]{3,30}$")


def phone_number(value: str | None) -> str | None:
    """A plausible phone number, trimmed (empty means none)."""
    if value is None or not value.strip():
        return None
    if not PHONE_RE.match(value.strip()):
        raise ValueError("Enter a valid phone number.")
    return value.strip()


Phone = Annotated[Annotated[str, Field(max_length=64)] | None, AfterValidator(phone_number)]
