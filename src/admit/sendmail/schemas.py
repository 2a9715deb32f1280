"""Scheduled e-mail rule shapes; rules across fields and references live in the service."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator

from admit.kit.resources.filtering import PK_MAX
from admit.kit.resources.schema import DateTime, ReadModel, RequiredI18n, WriteModel, i18n_name
from admit.kit.resources.schema import Pk as AnyPk

Subject = i18n_name(255)  # as the reference's e-mail subjects

# Order states a rule can be limited to (see the spec's order states).
STATUSES: tuple[str, ...] = (
    "p",
    "e",
    "c",
    "n__pending_approval",
    "n__not_pending_approval_and_not_valid_if_pending",
    "n__valid_if_pending",
    "n__pending_overdue",
)
DEFAULT_STATUSES: tuple[str, ...] = ("p", "n__valid_if_pending")
# What the deprecated include_pending stands for, and what setting it true adds.
PENDING = "n__not_pending_approval_and_not_valid_if_pending"

Pk = Annotated[AnyPk, Field(ge=1, le=PK_MAX)]


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("A valid integer is required.")
    return value


OffsetDays = Annotated[int, BeforeValidator(_not_bool), Field(ge=0, le=3650)]


def _time_text(value: Any) -> Any:
    """A time of day as text ("09:00" or "09:00:00"), without an offset: the event's time
    zone applies. Numbers are not times."""
    if isinstance(value, dt.time):
        return value
    if not isinstance(value, str):
        raise ValueError("Time has wrong format. Use one of these formats instead: hh:mm[:ss].")
    if any(c in value for c in "+Zz") or value.count("-"):
        raise ValueError("Enter a time of day without an offset: the event's time zone applies.")
    return value


TimeOfDay = Annotated[dt.time, BeforeValidator(_time_text)]


class SendMailRuleIn(WriteModel):
    enabled: bool = True
    subject: Subject
    template: RequiredI18n
    all_products: bool = True
    limit_products: list[Pk] = Field(default_factory=list)
    include_pending: bool | None = None  # deprecated: maps onto restrict_to_status
    restrict_to_status: list[Literal[STATUSES]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: list(DEFAULT_STATUSES)
    )
    checked_in_status: Literal["checked_in", "no_checkin"] | None = None
    date_is_absolute: bool = True
    send_date: DateTime | None = None
    send_offset_days: OffsetDays | None = None
    send_offset_time: TimeOfDay | None = None
    offset_to_event_end: bool = False
    offset_is_after: bool = False
    send_to: Literal["orders", "attendees", "both"] = "orders"

    @field_validator("limit_products", "restrict_to_status")
    @classmethod
    def _unique(cls, value: list[Any]) -> list[Any]:
        return list(dict.fromkeys(value))


class SendMailRuleOut(ReadModel):
    id: int
    enabled: bool
    subject: dict[str, str]
    template: dict[str, str]
    all_products: bool
    limit_products: list[int]
    include_pending: bool
    restrict_to_status: list[str]
    checked_in_status: str | None
    date_is_absolute: bool
    send_date: dt.datetime | None
    send_offset_days: int | None
    send_offset_time: dt.time | None
    offset_to_event_end: bool
    offset_is_after: bool
    send_to: str
