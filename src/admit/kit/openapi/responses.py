"""Documented success answers of the routes that render their own JSON (or files).

Most routes declare ``response_model`` on their decorator; the hot ones (orders, check-in,
payments, refunds, seat bulk changes, downloads) answer with JSON rendered straight from rows
and are described here instead, keyed by method and route template, so their answers stay the
fast rendered bytes. Imported only when the OpenAPI document is built (never per request).
A key naming no route fails ``tests/openapi``; so does a route with neither. The answers of a
domain's own models are registered by the domain (:func:`document`, at the import of its routes):
this module imports no domain.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


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
SEATS = (f"{E}/seats", f"{E}/subevents/{{subevent_id}}/seats")

ERROR = "Error"  # the ``{"detail": …}`` body of kit/http/errors.py
NO_BODY = "none"
Answer = type[BaseModel] | str

# The success answer; a (status, answer) pair replaces the status the route declares.
RESPONSES: dict[tuple[str, str], Answer | tuple[str, Answer]] = {
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
    ("GET", "/device/eventselection"): EventSelectionOut,
}

# Further answers, by operation and status: bodies other than ``{"detail": …}``, statuses
# the general rules (kit/openapi/errors.py) do not give.
OTHER_ANSWERS: dict[tuple[str, str], dict[str, Answer]] = {
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


def document(
    answers: dict[tuple[str, str], Answer | tuple[str, Answer]],
    other: dict[tuple[str, str], dict[str, Answer]] | None = None,
) -> None:
    """Registers the answers of a domain's routes that render their own JSON (see
    :data:`RESPONSES` and :data:`OTHER_ANSWERS`): the domain owns its models."""
    RESPONSES.update(answers)
    OTHER_ANSWERS.update(other or {})


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
