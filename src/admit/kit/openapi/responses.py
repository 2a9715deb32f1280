"""Documented success answers of the routes that render their own JSON (or files).

Most routes declare ``response_model`` on their decorator; the hot ones (orders, check-in,
payments, refunds, seat bulk changes, downloads) answer with JSON rendered straight from rows
and are described here instead, keyed by method and route template, so their answers stay the
fast rendered bytes. Imported only when the OpenAPI document is built (never per request).
A key naming no route fails ``tests/openapi``; so does a route with neither.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from admit.checkin.checkin_out import (
    AnnulOut,
    CheckinListStatusOut,
    CheckinPositionOut,
    RedeemOut,
)
from admit.kit.resources.crud import Page
from admit.orders.order_out import (
    OrderOut,
    OrderPositionOut,
    PaymentOut,
    PrintLogOut,
    RefundOut,
)
from admit.teams.schemas import TokenOut


class Empty(BaseModel):
    """An empty object: the change was made, there is nothing to show."""

    model_config = ConfigDict(extra="forbid")


class OAuthTokenOut(BaseModel):
    """RFC 6749 §5.1."""

    access_token: str
    token_type: str
    expires_in: int
    refresh_token: str | None = None
    scope: str | None = None


class OAuthErrorOut(BaseModel):
    """RFC 6749 §5.2."""

    model_config = ConfigDict(extra="forbid")

    error: str
    error_description: str | None = None
    error_uri: str | None = None
    state: str | None = None


class JobWaitingOut(BaseModel):
    status: str
    percentage: int | None


class JobFailedOut(BaseModel):
    status: str
    message: str


class ShredUnknownOut(BaseModel):
    status: str
    detail: str


class SelectedEvent(BaseModel):
    slug: str
    name: dict[str, str] | str


class EventSelectionOut(BaseModel):
    """What a scanner should select now."""

    event: SelectedEvent
    subevent: int | None
    checkinlist: int | None


BINARY = "binary"  # a file of any media type
O = "/organizers/{organizer}"  # noqa: E741
E = f"{O}/events/{{event}}"
ORDER = f"{E}/orders/{{code}}"
PAYMENT = f"{ORDER}/payments/{{local_id}}"
REFUND = f"{ORDER}/refunds/{{local_id}}"
SEATS = (f"{E}/seats", f"{E}/subevents/{{subevent_id}}/seats")

ERROR = "Error"  # the ``{"detail": …}`` body of kit/http/errors.py
NO_BODY = "none"
Answer = type[BaseModel] | str

# The success answer; a (status, answer) pair replaces the status the route declares.
RESPONSES: dict[tuple[str, str], Answer | tuple[str, Answer]] = {
    ("GET", f"{E}/checkinlists/{{id}}/status/"): CheckinListStatusOut,
    ("GET", f"{E}/checkinlists/{{id}}/positions/"): Page[CheckinPositionOut],
    ("GET", f"{E}/checkinlists/{{list}}/positions/{{id}}/"): CheckinPositionOut,
    ("POST", f"{O}/checkinrpc/redeem/"): RedeemOut,
    ("POST", f"{O}/checkinrpc/annul/"): AnnulOut,
    ("GET", f"{O}/checkinrpc/search/"): Page[CheckinPositionOut],
    ("GET", f"{E}/orders/"): Page[OrderOut],
    ("POST", f"{E}/orders/"): OrderOut,
    ("GET", f"{O}/orders/"): Page[OrderOut],
    ("GET", f"{ORDER}/"): OrderOut,
    ("PATCH", f"{ORDER}/"): OrderOut,
    **{
        ("POST", f"{ORDER}/{action}/"): OrderOut
        for action in (
            "mark_paid",
            "mark_pending",
            "mark_expired",
            "mark_canceled",
            "reactivate",
            "extend",
            "approve",
            "deny",
            "regenerate_secrets",
            "change",
        )
    },
    ("GET", f"{E}/orderpositions/"): Page[OrderPositionOut],
    ("GET", f"{E}/orderpositions/{{id}}/"): OrderPositionOut,
    ("PATCH", f"{E}/orderpositions/{{id}}/"): OrderPositionOut,
    ("POST", f"{E}/orderpositions/{{id}}/printlog/"): PrintLogOut,
    ("GET", f"{ORDER}/payments/"): Page[PaymentOut],
    ("POST", f"{ORDER}/payments/"): PaymentOut,
    ("GET", f"{PAYMENT}/"): PaymentOut,
    ("POST", f"{PAYMENT}/confirm/"): PaymentOut,
    ("POST", f"{PAYMENT}/cancel/"): PaymentOut,
    ("POST", f"{PAYMENT}/refund/"): RefundOut,
    ("GET", f"{ORDER}/refunds/"): Page[RefundOut],
    ("POST", f"{ORDER}/refunds/"): RefundOut,
    ("GET", f"{REFUND}/"): RefundOut,
    ("POST", f"{REFUND}/done/"): RefundOut,
    ("POST", f"{REFUND}/process/"): RefundOut,
    ("POST", f"{REFUND}/cancel/"): RefundOut,
    **{
        (method, f"{seats}/{action}/"): Empty
        for seats in SEATS
        for action in ("bulk_block", "bulk_unblock")
        for method in ("POST", "PATCH")
    },
    ("POST", "/oauth/token"): OAuthTokenOut,
    ("GET", "/oauth/revoke_token"): Empty,
    ("POST", "/oauth/revoke_token"): Empty,
    ("GET", "/media/{uuid}/{name}"): BINARY,
    ("GET", f"{O}/jobs/{{job}}/download/{{secret}}/"): BINARY,
    ("GET", f"{E}/shredders/download/{{id1}}/{{id2}}/"): BINARY,
    ("GET", f"{E}/ticketpdfrenderer/download/{{id1}}/{{id2}}/"): BINARY,
    ("GET", f"{ORDER}/download/pdf/"): BINARY,
    ("GET", f"{E}/orderpositions/{{id}}/download/pdf/"): BINARY,
    ("GET", f"{E}/exporters/{{identifier}}/download/{{id1}}/{{id2}}/"): BINARY,
    ("GET", f"{O}/exporters/{{identifier}}/download/{{id1}}/{{id2}}/"): BINARY,
    # A token is deactivated, not deleted: the answer shows it.
    ("DELETE", f"{O}/teams/{{team}}/tokens/{{id}}/"): ("200", TokenOut),
    ("GET", "/device/eventselection"): EventSelectionOut,
}

# Further answers, by operation and status: bodies other than ``{"detail": …}``, statuses
# the general rules (kit/openapi/errors.py) do not give.
OTHER_ANSWERS: dict[tuple[str, str], dict[str, Answer]] = {
    ("POST", f"{O}/checkinrpc/redeem/"): {"201": RedeemOut, "400": RedeemOut, "404": RedeemOut},
    ("POST", "/oauth/token"): {"400": OAuthErrorOut, "401": OAuthErrorOut},
    ("GET", "/oauth/revoke_token"): {"400": OAuthErrorOut, "401": OAuthErrorOut},
    ("POST", "/oauth/revoke_token"): {"400": OAuthErrorOut, "401": OAuthErrorOut},
    ("GET", f"{E}/shredders/status/{{id1}}/{{id2}}/"): {
        "409": JobWaitingOut,
        "410": ShredUnknownOut,
        "417": JobFailedOut,
    },
    # Gift cards are never deleted (as in the reference): the method is refused.
    ("DELETE", f"{O}/giftcards/{{id}}/"): {"405": ERROR},
    ("GET", "/device/eventselection"): {"304": NO_BODY, "404": ERROR},
}

DESCRIPTIONS = {
    "201": "Checked in.",
    "304": "Keep the current selection.",
    "405": "Method not allowed.",
    "417": "The job failed.",
}

# What a job's download URL answers while the job runs (409) or after it failed (410).
DOWNLOAD_STATES: dict[str, type[BaseModel]] = {"409": JobWaitingOut, "410": JobFailedOut}


def models() -> list[type[BaseModel]]:
    """Every model the document refers to from here (for the components section)."""
    found: dict[str, type[BaseModel]] = {}
    answers: list[Answer] = [a[1] if isinstance(a, tuple) else a for a in RESPONSES.values()]
    answers += [a for more in OTHER_ANSWERS.values() for a in more.values()]
    for answer in answers:
        if not isinstance(answer, str):
            found[answer.__name__] = answer
    for model in DOWNLOAD_STATES.values():
        found[model.__name__] = model
    return list(found.values())
