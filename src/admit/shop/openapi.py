"""The headless checkout's answers in the OpenAPI document: the routes render their own JSON,
so the shop registers the shapes (``kit/openapi/responses.document``)."""

from __future__ import annotations

from pydantic import BaseModel

from admit.kit.openapi import responses

P = "/public/organizers/{organizer}/events/{event}"


class ProviderOut(BaseModel):
    identifier: str
    label: str
    input_field: str | None


class InvoiceAskedOut(BaseModel):
    asked: bool
    required: bool
    vat_id: bool
    company_required: bool
    name_required: bool


class EventInfoOut(BaseModel):
    name: str
    organizer: str
    currency: str
    date_from: str
    location: str
    shop_open: bool
    closed_reason: str | None
    payment_providers: list[ProviderOut]
    attendee_names_asked: bool
    attendee_names_required: bool
    attendee_emails_asked: bool
    attendee_emails_required: bool
    terms_url: str | None
    contact_mail: str | None
    frontpage_text: str
    invoice_address: InvoiceAskedOut
    has_subevents: bool  # a series: pick a date (``dates/``) and pass it as ``subevent``


class ProductOut(BaseModel):
    item: int
    variation: int | None
    name: str
    description: str
    category: str
    price: str
    original_price: str | None
    free_price: bool
    tax_note: str
    availability: str  # available | sold_out | reserved | not_yet | ended
    available_number: int | None
    min_per_order: int
    max_per_order: int


class CatalogOut(BaseModel):
    products: list[ProductOut]


class OptionOut(BaseModel):
    id: int
    answer: str


class QuestionOut(BaseModel):
    id: int
    question: str
    help_text: str
    type: str
    required: bool
    items: list[int]
    options: list[OptionOut]
    dependency_question: int | None
    dependency_values: list[str]


class QuestionsOut(BaseModel):
    questions: list[QuestionOut]


class CartLineOut(BaseModel):
    id: int
    item: int
    variation: int | None
    name: str
    price: str
    voucher: str | None
    subevent: int | None
    date: str | None
    addon_to: int | None  # the main position of an add-on or bundled position
    bundled: bool  # part of its main product's bundle (its price is in the main price)
    expired: bool  # the reservation ran out: the checkout checks availability again


class PaymentFeeOut(BaseModel):
    provider: str  # a payment method offered for the cart's total
    fee: str  # what the method adds ("0.00": nothing)
    total: str  # the order's total when paid so


class CartOut(BaseModel):
    cart_id: str
    positions: list[CartLineOut]
    total: str
    reverse_charge: bool
    payment_fees: list[PaymentFeeOut]
    expires: str | None
    seconds_left: int


class InstructionsOut(BaseModel):
    title: str
    text: str
    details: dict[str, str]


class OrderPositionOut(BaseModel):
    id: int
    positionid: int
    name: str
    price: str
    subevent: int | None
    date: str | None
    attendee_name: str | None
    canceled: bool
    answers: list[str]


class OrderFeeOut(BaseModel):
    fee_type: str  # payment | shipping | service | cancellation | ...
    label: str  # e.g. "Payment fee (Bank transfer)"
    value: str  # gross, included in the total
    tax_rate: str
    tax_value: str


class PublicOrderOut(BaseModel):
    code: str
    status: str
    status_text: str
    total: str
    email: str | None
    expires: str
    url: str
    positions: list[OrderPositionOut]
    fees: list[OrderFeeOut]
    payment_instructions: InstructionsOut | None
    can_cancel: bool
    tickets: bool
    redirect_url: str | None = None


class AddonProductOut(ProductOut):
    chosen: int


class AddonCategoryOut(BaseModel):
    category: int
    name: str
    min_count: int
    max_count: int
    multi_allowed: bool
    price_included: bool
    products: list[AddonProductOut]


class AddonChoiceOut(BaseModel):
    position: int
    name: str
    categories: list[AddonCategoryOut]


class AddonsOut(BaseModel):
    positions: list[AddonChoiceOut]


class DateOut(BaseModel):
    id: int
    name: str
    label: str
    date_from: str
    date_to: str | None
    location: str
    availability: str  # available | sold_out | not_yet | ended


class DatesOut(BaseModel):
    dates: list[DateOut]


class FileOut(BaseModel):
    id: str


class WaitingOut(BaseModel):
    id: int
    email: str


class CustomerOut(BaseModel):
    identifier: str
    email: str | None
    name: str | None
    locale: str


class LoginOut(BaseModel):
    token: str  # send as "Authorization: Customer <token>"
    expires_in: int  # seconds
    customer: CustomerOut


class MembershipTypeBriefOut(BaseModel):
    id: int
    name: dict[str, str]
    max_usages: int | None
    allow_parallel_usage: bool


class CustomerMembershipOut(BaseModel):
    id: int  # what a checkout position names as used_membership
    membership_type: MembershipTypeBriefOut
    date_start: str
    date_end: str
    attendee_name: str | None
    canceled: bool
    testmode: bool
    usages: int
    valid_now: bool


class CustomerAccountOut(CustomerOut):
    memberships: list[CustomerMembershipOut]


ORDER = f"{P}/orders/{{code}}/{{secret}}"
C = "/public/organizers/{organizer}/customer"

responses.document(
    {
        ("GET", f"{P}/"): EventInfoOut,
        ("GET", f"{P}/catalog/"): CatalogOut,
        ("GET", f"{P}/dates/"): DatesOut,
        ("GET", f"{P}/questions/"): QuestionsOut,
        ("POST", f"{P}/carts/"): ("201", CartOut),
        ("GET", f"{P}/carts/{{cart_id}}/"): CartOut,
        ("GET", f"{P}/carts/{{cart_id}}/addons/"): AddonsOut,
        ("PUT", f"{P}/carts/{{cart_id}}/positions/{{position}}/addons/"): CartOut,
        ("DELETE", f"{P}/carts/{{cart_id}}/positions/{{position}}/"): CartOut,
        ("POST", f"{P}/checkout/"): ("201", PublicOrderOut),
        ("GET", f"{ORDER}/"): PublicOrderOut,
        ("POST", f"{ORDER}/cancel/"): PublicOrderOut,
        ("POST", f"{P}/waitinglist/"): ("201", WaitingOut),
        ("POST", f"{P}/upload/"): ("201", FileOut),
        ("POST", f"{C}/login/"): LoginOut,
        ("GET", f"{C}/"): CustomerAccountOut,
    }
)
