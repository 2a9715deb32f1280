"""The headless checkout's request bodies (documented in the OpenAPI document)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from admit.catalog.questions.answers import AnswerIn
from admit.kit.resources.schema import Pk, Price, WriteModel

Text = Annotated[str, Field(max_length=255)]


class WantIn(WriteModel):
    item: Pk
    variation: Pk | None = None
    count: int = Field(default=1, ge=0, le=100)
    # only for products with a free price (at least the listed price)
    price: Price | None = None


class CartIn(WriteModel):
    """Adds products to a cart; without ``cart_id`` a new cart is made."""

    cart_id: Annotated[str, Field(max_length=80)] | None = None
    voucher: Text | None = None
    # an event series: the date (from ``dates/``) every product of this request is for
    subevent: Pk | None = None
    products: list[WantIn] = Field(min_length=1, max_length=50)


class AddonWantIn(WriteModel):
    item: Pk
    variation: Pk | None = None
    count: int = Field(default=1, ge=0, le=100)


class AddonsIn(WriteModel):
    """The add-ons of one cart position (all of them: those not listed are taken out)."""

    products: list[AddonWantIn] = Field(default_factory=list, max_length=50)


class PositionDetailsIn(WriteModel):
    id: Pk  # the cart position
    attendee_name: Text | None = None
    attendee_email: Annotated[str, Field(max_length=254)] | None = None
    answers: list[AnswerIn] = Field(default_factory=list, max_length=100)
    # a membership of the logged-in customer (``customer/``), for a product that requires one
    used_membership: Pk | None = None


class CheckoutIn(WriteModel):
    cart_id: Annotated[str, Field(max_length=80)]
    email: Annotated[str, Field(max_length=254)]
    email_repeat: Annotated[str, Field(max_length=254)] | None = None
    locale: Annotated[str, Field(min_length=2, max_length=32)] = "en"
    payment_provider: Annotated[str, Field(max_length=64)] | None = None
    # what the provider asks for, e.g. {"gift_card": "CODE"}
    payment_data: dict[str, Text] = Field(default_factory=dict)
    accept_terms: bool = False
    positions: list[PositionDetailsIn] = Field(default_factory=list, max_length=100)
    invoice_address: dict[str, Any] | None = None


class WaitingIn(WriteModel):
    item: Pk
    variation: Pk | None = None
    email: Annotated[str, Field(max_length=254)]
    name: Text | None = None
    locale: Annotated[str, Field(min_length=2, max_length=32)] = "en"
    # the date of an event series (required there, refused otherwise)
    subevent: Pk | None = None
