"""Webhook rules: creating and changing webhooks, rotating secrets, re-sending a call, and the
``wake_at`` mark that tells the fan-out a webhook has calls to send."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import or_, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.db import utcnow
from admit.kit.http.errors import FieldErrors
from admit.models import Webhook, WebhookCall
from admit.teams.service import resolve_events
from admit.webhooks.addresses import Refused, check_on_save
from admit.webhooks.schemas import WebhookIn
from admit.webhooks.signing import new_secret

# How long a rotated-out secret keeps signing deliveries next to the new one.
PREVIOUS_SECRET_HOURS = 24
# How long saving a webhook waits for its host name to resolve (a name that does not resolve
# in time passes: every call is checked again when it is sent).
SAVE_LOOKUP_SECONDS = 3.0

WEBHOOK_LOAD = (selectinload(Webhook.limit_events),)


def webhook_to_read(webhook: Webhook) -> dict[str, Any]:
    return {
        "id": webhook.id,
        "enabled": webhook.enabled,
        "target_url": webhook.target_url,
        "all_events": webhook.all_events,
        "limit_events": [e.slug for e in webhook.limit_events],
        # Sorted, as the reference lists them (whatever order they were sent in).
        "action_types": sorted(webhook.action_types or []),
        "comment": webhook.comment,
    }


def call_to_read(call: WebhookCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "notification_id": call.source_id,
        "action": call.action,
        "payload": call.payload,
        "status": call.status,
        "attempts": call.attempts,
        "response_status": call.response_status,
        "response_body": call.response_body,
        "error": call.error,
        "duration_ms": call.duration_ms,
        "next_retry": call.next_retry if call.status == "pending" else None,
        "last_attempt": call.last_attempt,
        "redelivery_of": call.redelivery_of,
        "created": call.created,
    }


async def check_target(url: str, *, allow_private: bool) -> None:
    """400 on ``target_url`` for a URL that can never be delivered to: its host is, or
    resolves to, an address that is not public (while ``webhook_allow_private`` is off)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    try:
        await check_on_save(host, port, allow_private=allow_private, seconds=SAVE_LOOKUP_SECONDS)
    except Refused as exc:
        raise FieldErrors.single("target_url", str(exc)) from None


async def create_webhook(
    session: AsyncSession, organizer_id: int, data: WebhookIn, *, allow_private: bool
) -> Webhook:
    await check_target(data.target_url, allow_private=allow_private)
    events = await resolve_events(session, organizer_id, data.limit_events)
    webhook = Webhook(
        organizer_id=organizer_id,
        enabled=data.enabled,
        target_url=data.target_url,
        all_events=data.all_events,
        action_types=list(data.action_types),
        comment=data.comment,
        secret=new_secret(),
        failure_streak=0,
        created=utcnow(),
        limit_events=events,
    )
    session.add(webhook)
    await session.flush()
    return webhook


async def update_webhook(
    session: AsyncSession,
    organizer_id: int,
    webhook: Webhook,
    data: WebhookIn,
    *,
    allow_private: bool,
) -> None:
    reenabled = data.enabled and not webhook.enabled
    if data.enabled and (reenabled or data.target_url != webhook.target_url):
        # A disabled webhook may keep a target it could not be sent to (turning it off must
        # always work); enabling it or changing its URL checks the target again.
        await check_target(data.target_url, allow_private=allow_private)
    events = await resolve_events(session, organizer_id, data.limit_events)
    webhook.enabled = data.enabled
    webhook.target_url = data.target_url
    webhook.all_events = data.all_events
    webhook.action_types = list(data.action_types)
    webhook.comment = data.comment
    webhook.limit_events = events
    if reenabled:
        # Calls kept while it was disabled go out now (those past the retry window fail).
        webhook.failure_streak = 0
        webhook.blocked_until = None
        webhook.wake_at = utcnow()
    await session.flush()


async def disable_webhook(session: AsyncSession, webhook: Webhook) -> None:
    """DELETE: the webhook stays, disabled (nothing more is sent to it)."""
    webhook.enabled = False
    await session.flush()


async def rotate_secret(session: AsyncSession, webhook: Webhook, now: dt.datetime) -> str:
    """A new secret; the current one keeps signing (as a second signature) for a day.

    The row is locked and read again first: of two rotations at once, the second must keep
    the first one's new secret as its previous, or the first caller's secret would be lost."""
    await session.refresh(webhook, with_for_update=True)
    webhook.previous_secret = webhook.secret
    webhook.previous_secret_until = now + dt.timedelta(hours=PREVIOUS_SECRET_HOURS)
    webhook.secret = new_secret()
    await session.flush()
    return webhook.secret


def signing_secrets(webhook: Any, now: dt.datetime) -> list[str]:
    """The secrets a delivery is signed with now: the current one, then a recent previous."""
    keys = [webhook.secret]
    until = webhook.previous_secret_until
    if webhook.previous_secret and until is not None and until > now:
        keys.append(webhook.previous_secret)
    return keys


async def redeliver(session: AsyncSession, webhook: Webhook, call: WebhookCall) -> WebhookCall:
    """A copy of ``call`` queued for sending again (after the webhook's pending calls)."""
    if not webhook.enabled:
        raise FieldErrors.general("The webhook is disabled; enable it to send calls again.")
    if call.status == "pending":
        raise FieldErrors.general("The call has not ended yet; it is still being delivered.")
    now = utcnow()
    copy = WebhookCall(
        webhook_id=webhook.id,
        source=call.source,
        source_id=call.source_id,
        action=call.action,
        payload=call.payload,
        status="pending",
        attempts=0,
        next_retry=now,
        redelivery_of=call.redelivery_of or call.id,
        created=now,
    )
    session.add(copy)
    await session.flush()
    await arm(session, webhook.id, now)
    return copy


async def arm(session: AsyncSession, webhook_id: int, when: dt.datetime) -> None:
    """Marks the webhook to be delivered to at ``when`` (an earlier mark stays)."""
    await session.execute(
        update(Webhook)
        .where(
            Webhook.id == webhook_id,
            or_(Webhook.wake_at.is_(None), Webhook.wake_at > when),
        )
        .values(wake_at=when)
        .execution_options(synchronize_session=False)
    )
