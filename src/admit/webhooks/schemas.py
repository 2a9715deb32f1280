"""Webhook input and output shapes, and the delivery log's."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, model_validator

from admit.kit.resources.schema import ReadModel, WriteModel
from admit.notifications.types import ACTION_TYPES, PREFIXES, canonical, is_known

MAX_URL_LENGTH = 1000
EITHER_EVENTS = "You can set either limit_events or all_events."


def check_target_url(value: str) -> str:
    """An absolute http(s) URL with a host; what httpx could not send is refused here."""
    import httpx  # loaded where webhooks are configured, not in every API process

    text = value.strip()
    if any(ord(c) < 33 or ord(c) == 127 for c in text):
        raise ValueError("Enter a valid URL.")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018  (raises for a port that is not a number in range)
        parsed = httpx.URL(text)
    except (ValueError, httpx.InvalidURL):
        raise ValueError("Enter a valid URL.") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError("Enter a valid URL with the scheme http or https.")
    if not parts.hostname or not parsed.host:
        raise ValueError("Enter a valid URL with a host name.")
    return text


def _family_named(prefix: str) -> bool:
    """Whether ``<prefix>*`` (prefix ending in a dot) covers some action type."""
    return any(t.startswith(prefix) for t in ACTION_TYPES) or any(
        p.startswith(prefix) or prefix.startswith(p) for p in PREFIXES
    )


def check_action_type(value: str) -> str:
    """A known action type or a family ending in ``.*``, in either family (``service.`` or
    ``pretix.``); kept as the client wrote it (the deliveries answer in its family)."""
    sent = value.strip()
    action = canonical(sent)
    if action.endswith(".*") and len(action) > 2 and _family_named(action[:-1]):
        return sent
    if is_known(action):
        return sent
    raise ValueError(f'Invalid action type "{value}".')  # the reference's words


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


TargetURL = Annotated[str, Field(max_length=MAX_URL_LENGTH), AfterValidator(check_target_url)]
ActionType = Annotated[str, Field(max_length=190), AfterValidator(check_action_type)]
Slug = Annotated[str, Field(max_length=190)]


class WebhookOut(ReadModel):
    id: int
    enabled: bool
    target_url: str
    all_events: bool
    limit_events: list[str]
    action_types: list[str]
    comment: str | None


class WebhookSecretOut(WebhookOut):
    """The answer of create and ``rotate_secret``: the only time the secret is shown."""

    secret: str


class WebhookIn(WriteModel):
    enabled: bool = True
    target_url: TargetURL
    all_events: bool = True
    limit_events: Annotated[list[Slug], AfterValidator(_unique)] = []
    action_types: Annotated[list[ActionType], AfterValidator(_unique)]
    comment: Annotated[str, Field(max_length=2000)] | None = None

    @model_validator(mode="after")
    def _events_or_all(self) -> WebhookIn:
        # The reference's rule and words (a non-field error), on the merged state of a PATCH.
        if self.all_events and self.limit_events:
            raise ValueError(EITHER_EVENTS)
        return self


class CallOut(ReadModel):
    """One entry of the delivery log (an Admit extension)."""

    id: int
    notification_id: int
    action: str
    payload: dict[str, Any]
    status: str
    attempts: int
    response_status: int | None
    response_body: str | None
    error: str | None
    duration_ms: int | None
    next_retry: dt.datetime | None
    last_attempt: dt.datetime | None
    redelivery_of: int | None
    created: dt.datetime
