"""The names a ticket layout may print: the one list that validation and rendering share.

A text area's ``content`` is one of :data:`TEXT_VARIABLES`, ``question_<identifier>`` (the
position's answer to the event's question with that identifier), or ``other`` with its free
``text`` (which may embed any of the same names as ``{name}``). An image area's ``content`` is
one of :data:`IMAGE_VARIABLES`. A barcode area prints the position's secret unless its
``content`` names another text variable.
"""

from __future__ import annotations

TEXT_VARIABLES: dict[str, str] = {
    "event_name": "Event name",
    "event_date": "Event date",
    "event_date_range": "Event date range",
    "event_begin": "Event begin date and time",
    "event_begin_time": "Event begin time",
    "event_end": "Event end date and time",
    "event_admission": "Event admission date and time",
    "event_admission_time": "Event admission time",
    "event_location": "Event location",
    "organizer": "Organizer name",
    "order": "Order code",
    "order_email": "Order e-mail address",
    "order_date": "Order date",
    "order_total": "Order total",
    "positionid": "Position number within the order",
    "attendee_name": "Attendee name",
    "attendee_email": "Attendee e-mail address",
    "attendee_company": "Attendee company",
    "attendee_address": "Attendee address",
    "item": "Product name",
    "variation": "Variation name",
    "itemvar": "Product and variation name",
    "price": "Price",
    "seat": "Seat",
    "addons": "Add-on products",
    "secret": "Ticket secret",
    "pseudonymization_id": "Pseudonymization ID",
}

# Free text (``content: "other"``) carries its own ``text``.
FREE_TEXT = "other"
QUESTION_PREFIX = "question_"

IMAGE_VARIABLES: dict[str, str] = {
    "item_picture": "Product picture",
}


def is_text_variable(name: str) -> bool:
    return name in TEXT_VARIABLES or name == FREE_TEXT or name.startswith(QUESTION_PREFIX)
