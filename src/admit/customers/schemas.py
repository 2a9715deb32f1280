"""Customer, membership type and membership shapes."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from admit.kit.resources.schema import (
    DateTime,
    I18nName,
    LongText,
    Phone,
    Pk,
    ReadModel,
    WriteModel,
    email_type,
)

EMAIL_MAX_LENGTH = 190  # the width of the email column
NamePart = Annotated[str, Field(max_length=255)]


def _password(value: str | None) -> str | None:
    if value is not None and len(value) < 8:
        raise ValueError("This password is too short. It must contain at least 8 characters.")
    return value


Email = email_type(EMAIL_MAX_LENGTH)
Password = Annotated[str | None, Field(max_length=4096), AfterValidator(_password)]


class CustomerOut(ReadModel):
    identifier: str
    external_identifier: str | None
    email: str | None
    phone: str | None
    name: str | None
    name_parts: dict[str, Any]
    is_active: bool
    is_verified: bool
    last_login: dt.datetime | None
    date_joined: dt.datetime
    locale: str
    last_modified: dt.datetime
    notes: str | None


class CustomerIn(WriteModel):
    external_identifier: Annotated[str, Field(max_length=255)] | None = None
    email: Email = None
    phone: Phone = None
    name_parts: dict[str, NamePart] = {}
    is_active: bool = True
    is_verified: bool = True
    locale: Annotated[str, Field(min_length=1, max_length=32)] = "en"
    notes: LongText | None = None
    # Only on creation: never rendered, and not changeable through the API afterwards.
    password: Password = None
    send_email: bool = False


class MembershipTypeOut(ReadModel):
    id: int
    name: dict[str, str]
    transferable: bool
    allow_parallel_usage: bool
    max_usages: int | None


class MembershipTypeIn(WriteModel):
    name: I18nName
    transferable: bool = False
    allow_parallel_usage: bool = False
    max_usages: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None


class MembershipOut(ReadModel):
    id: int
    customer: str
    membership_type: int
    testmode: bool
    date_start: dt.datetime
    date_end: dt.datetime
    attendee_name_parts: dict[str, Any]
    canceled: bool


class MembershipIn(WriteModel):
    # customer and testmode are fixed at creation; updates ignore them.
    customer: Annotated[str, Field(max_length=32)] | None = None
    testmode: bool = False
    membership_type: Pk
    date_start: DateTime
    date_end: DateTime
    attendee_name_parts: dict[str, NamePart] = {}
    canceled: bool = False
