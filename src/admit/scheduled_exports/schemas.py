"""Scheduled export shapes. The exporter and its input, the owner and the schedule are checked
in :mod:`admit.scheduled_exports.service` (they need the exporter registry and the caller)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from admit.kit.resources.schema import LOCALES, ReadModel, TimeZoneName, WriteModel, email_address

# The languages an export can be written in (column headers, fixed texts; a text without a
# translation stays English): ``LOCALES``, the languages the reference offers.
MAX_RECIPIENTS = 50  # per field


def _locale(value: str) -> str:
    if value not in LOCALES:
        raise ValueError(f'"{value}" is not a valid choice.')
    return value


def recipients(value: str) -> str:
    """Comma-separated e-mail addresses (or an empty string), each checked; stored
    normalised, separated by ", "."""
    found: list[str] = []
    for part in value.split(","):
        if not part.strip():
            continue
        try:
            address = email_address(part)
        except ValueError:
            raise ValueError(f'"{part.strip()[:100]}" is not a valid e-mail address.') from None
        if address and address not in found:
            found.append(address)
    if len(found) > MAX_RECIPIENTS:
        raise ValueError(f"Enter at most {MAX_RECIPIENTS} addresses.")
    return ", ".join(found)


def split_recipients(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _time_text(value: Any) -> Any:
    """A time of day as text ("09:00" or "09:00:00"), without an offset: the export's time
    zone applies. Numbers are not times."""
    if isinstance(value, dt.time):
        return value
    if not isinstance(value, str):
        raise ValueError("Time has wrong format. Use one of these formats instead: hh:mm[:ss].")
    if any(c in value for c in "+Zz-"):
        raise ValueError("Enter a time of day without an offset: the export's time zone applies.")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("This field may not be blank.")
    return value


def _whole_seconds(value: dt.time) -> dt.time:
    return value.replace(microsecond=0)


Locale = Annotated[str, AfterValidator(_locale)]
Recipients = Annotated[str, Field(max_length=20_000), AfterValidator(recipients)]
Text = Annotated[str, AfterValidator(_not_blank)]
TimeOfDay = Annotated[dt.time, BeforeValidator(_time_text), AfterValidator(_whole_seconds)]


class EventExportIn(WriteModel):
    export_identifier: str = Field(min_length=1, max_length=190)
    export_form_data: dict[str, Any] = Field(default_factory=dict)
    locale: Locale = "en"
    mail_additional_recipients: Recipients = ""
    mail_additional_recipients_cc: Recipients = ""
    mail_additional_recipients_bcc: Recipients = ""
    mail_subject: Text = Field(max_length=255)
    mail_template: Text = Field(max_length=100_000)
    schedule_rrule: Text = Field(max_length=2000)
    schedule_rrule_time: TimeOfDay


class OrganizerExportIn(EventExportIn):
    timezone: TimeZoneName = "UTC"


class EventExportOut(ReadModel):
    id: int
    owner: str
    export_identifier: str
    export_form_data: dict[str, Any]
    locale: str
    mail_additional_recipients: str
    mail_additional_recipients_cc: str
    mail_additional_recipients_bcc: str
    mail_subject: str
    mail_template: str
    schedule_rrule: str
    schedule_rrule_time: dt.time
    schedule_next_run: dt.datetime | None
    error_counter: int


class OrganizerExportOut(EventExportOut):
    timezone: str
