"""Question and question option schemas.

Input is validated field by field here; rules that span fields or need the database (types,
dependencies, identifiers, references) live in ``service.py``.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, PlainSerializer

from admit.kit.resources.schema import (
    DateTime,
    I18n,
    ReadModel,
    RequiredI18n,
    WriteModel,
    check_date_range,
)

QuestionType = Literal["N", "S", "T", "B", "C", "M", "F", "D", "H", "W", "CC", "TEL"]
CHOICE_TYPES = frozenset({"C", "M"})
DEPENDABLE_TYPES = frozenset({"B", "C", "M"})

IDENTIFIER_RE = re.compile(r"^[a-zA-Z0-9.\-_]+$")


def _check_identifier(value: str) -> str:
    if not IDENTIFIER_RE.match(value):
        raise ValueError(
            "The identifier may only contain letters, numbers, dots, dashes, and underscores."
        )
    return value


# Required on create (and PUT), as the reference has it: integrations and dependency values
# match on it, so the client names it rather than receiving a random one.
Identifier = Annotated[str, Field(min_length=1, max_length=190), AfterValidator(_check_identifier)]


def _number_input(value: Any) -> Any:
    """Numbers or numeric strings; never booleans (JSON true is no number)."""
    if isinstance(value, bool):
        raise ValueError("A valid number is required.")
    if isinstance(value, float):
        return Decimal(repr(value))
    return value


def _pk_input(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("Incorrect type. Expected pk value, received bool.")
    return value


# A referenced object's id; JSON true/false would otherwise pass as 1/0.
Pk = Annotated[int, BeforeValidator(_pk_input)]


def _six_places(value: Decimal) -> str:
    return f"{value:.6f}"


# The bounds of number questions: up to 14 digits before and 6 after the point, as stored.
Bound = Annotated[
    Decimal,
    BeforeValidator(_number_input),
    Field(max_digits=20, decimal_places=6, allow_inf_nan=False),
    PlainSerializer(_six_places, return_type=str, when_used="json"),
]


def _date_text(value: Any) -> Any:
    """ISO dates as text only: pydantic would also take Unix timestamps."""
    if isinstance(value, dt.date) or (isinstance(value, str) and len(value) == 10):
        return value
    raise ValueError("Date has wrong format. Use one of these formats instead: YYYY-MM-DD.")


Date = Annotated[dt.date, BeforeValidator(_date_text), AfterValidator(check_date_range)]


class OptionIn(WriteModel):
    identifier: Identifier
    position: int = Field(default=0, ge=-(2**31), le=2**31 - 1)
    answer: RequiredI18n


class OptionOut(ReadModel):
    id: int
    identifier: str
    position: int
    answer: dict[str, str]


class QuestionIn(WriteModel):
    question: RequiredI18n
    help_text: I18n | None = None
    type: QuestionType
    required: bool = False
    items: list[Pk] = []
    position: int = Field(default=0, ge=-(2**31), le=2**31 - 1)
    identifier: Identifier
    ask_during_checkin: bool = False
    show_during_checkin: bool = False
    hidden: bool = False
    print_on_invoice: bool = False
    options: list[OptionIn] | None = None
    dependency_question: Pk | None = None
    dependency_values: list[Annotated[str, Field(max_length=190)]] = []
    # Deprecated single-value form of dependency_values, still accepted from old clients.
    dependency_value: Annotated[str, Field(max_length=190)] | None = None
    valid_number_min: Bound | None = None
    valid_number_max: Bound | None = None
    valid_date_min: Date | None = None
    valid_date_max: Date | None = None
    valid_datetime_min: DateTime | None = None
    valid_datetime_max: DateTime | None = None
    valid_string_length_min: int | None = Field(default=None, ge=0, le=2**31 - 1)
    valid_string_length_max: int | None = Field(default=None, ge=1, le=2**31 - 1)
    valid_file_portrait: bool = False


class QuestionOut(ReadModel):
    id: int
    question: dict[str, str]
    help_text: dict[str, str] | None
    type: str
    required: bool
    items: list[int]
    position: int
    identifier: str
    ask_during_checkin: bool
    show_during_checkin: bool
    hidden: bool
    print_on_invoice: bool
    options: list[OptionOut]
    dependency_question: int | None
    dependency_values: list[str]
    dependency_value: str | None
    valid_number_min: Bound | None
    valid_number_max: Bound | None
    valid_date_min: dt.date | None
    valid_date_max: dt.date | None
    valid_datetime_min: dt.datetime | None
    valid_datetime_max: dt.datetime | None
    valid_string_length_min: int | None
    valid_string_length_max: int | None
    valid_file_portrait: bool
