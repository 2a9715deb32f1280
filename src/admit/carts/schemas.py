"""Cart position schemas: what a client may send (top level and nested) and what it gets back.

Shapes are checked here; references (item, variation, subevent, questions, options) and the
rules that need the event live in ``service.py`` and ``answers.py``.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from admit.catalog.questions.answers import AnswerIn
from admit.kit.resources.schema import DateTime, Money, Pk, Price, ReadModel, WriteModel, email_type

EMAIL_MAX_LENGTH = 254  # the width of the attendee_email column
CART_ID_MAX_LENGTH = 255


Email = email_type(EMAIL_MAX_LENGTH)


def _cart_id(value: str | None) -> str | None:
    if value and not value.endswith("@api"):
        raise ValueError("Cart ID should end in @api or be empty.")
    return value or None


CartId = Annotated[
    Annotated[str, Field(max_length=CART_ID_MAX_LENGTH)] | None, AfterValidator(_cart_id)
]
NamePart = Annotated[str, Field(max_length=255)]


class NestedPositionIn(WriteModel):
    """An add-on or bundled position inside a create request (cart and expiry are inherited)."""

    item: Pk
    variation: Pk | None = None
    price: Price
    attendee_name: Annotated[str, Field(max_length=255)] | None = None
    attendee_name_parts: dict[str, NamePart] | None = None
    attendee_email: Email = None
    subevent: Pk | None = None
    includes_tax: bool | None = None
    seat: Annotated[str, Field(max_length=190)] | None = None
    voucher: Annotated[str, Field(max_length=255)] | None = None
    answers: list[AnswerIn] = []


class CartPositionIn(NestedPositionIn):
    cart_id: CartId = None
    expires: DateTime | None = None
    sales_channel: Annotated[str, Field(max_length=32)] = "web"
    addons: list[NestedPositionIn] = []
    bundled: list[NestedPositionIn] = []


class AnswerOut(ReadModel):
    question: int
    answer: str
    question_identifier: str
    options: list[int]
    option_identifiers: list[str]


class CartPositionOut(ReadModel):
    id: int
    cart_id: str
    datetime: dt.datetime
    expires: dt.datetime
    item: int
    variation: int | None
    price: Money
    attendee_name: str | None
    attendee_name_parts: dict[str, str]
    attendee_email: str | None
    voucher: int | None
    addon_to: int | None
    is_bundled: bool
    subevent: int | None
    includes_tax: bool
    answers: list[AnswerOut]
    seat: dict[str, Any] | None
    addons: list[CartPositionOut] = []
    bundled: list[CartPositionOut] = []


class BulkResult(ReadModel):
    success: bool
    errors: dict[str, Any] | None
    data: CartPositionOut | None


class BulkResponse(ReadModel):
    results: list[BulkResult]
