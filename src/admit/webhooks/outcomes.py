"""What one delivery attempt means for its call and its webhook, and writing the outcomes of
a few attempts, with the marks on the calls to be sent next, in one transaction.

A 2xx delivers the call; a 410 fails it and disables the webhook; anything else (another
status, a redirect, a timeout, a refused address) schedules a retry with exponential backoff
and jitter until the call is ``webhook_max_age_hours`` old, then fails it. After a failure
the run goes on with the next call (one bad payload does not hold up the rest); after two
failures in a row the webhook is blocked for a backoff that grows with the streak, so a
receiver that is down is not hammered.

A run marks calls (``claimed_by``) before it sends them and clears the mark when it writes
their outcomes. A call found marked by another run was being sent when that run stopped: its
answer was never recorded, so the receiver may have got it. That attempt is counted (and
explained in ``error`` until the next answer), so the log shows the call went out more than
once.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, bindparam, case, update

from admit.db import Database
from admit.models import Webhook, WebhookCall

if TYPE_CHECKING:
    from admit.webhooks.http import Answer

MAX_DELAY_SECONDS = 6 * 3600.0
EXPIRED = "Not delivered within the retry window."
INTERRUPTED = (
    "The delivery run sending this call stopped before its answer was recorded: the receiver "
    "may have got it already; it is sent again."
)
CALL_FIELDS = (
    "status",
    "attempts",
    "response_status",
    "response_body",
    "error",
    "duration_ms",
    "next_retry",
    "last_attempt",
)

_jitter = random.SystemRandom()
_calls = WebhookCall.__table__
# One statement for every outcome of a batch (executemany); a call that left ``pending``
# meanwhile, or that another run has marked since (this one lost its lock), is not overwritten.
_UPDATE_CALL = (
    update(_calls)
    .where(
        _calls.c.id == bindparam("call_id"),
        _calls.c.status == "pending",
        _calls.c.claimed_by == bindparam("owner"),
    )
    .values(
        {
            **{f: bindparam(f"v_{f}", type_=_calls.c[f].type) for f in CALL_FIELDS},
            "claimed_by": None,
        }
    )
)


def backoff(base: float, failures: int) -> float:
    """Seconds before the next try after ``failures`` failures: doubling, capped, jittered."""
    delay = min(base * 2 ** min(max(failures, 1) - 1, 40), max(base, MAX_DELAY_SECONDS))
    return delay * _jitter.uniform(0.5, 1.0)


def expiry(call: WebhookCall, settings: Any) -> dt.datetime:
    return call.created + dt.timedelta(hours=settings.webhook_max_age_hours)


@dataclass
class HookState:
    """The webhook's delivery state as a run changes it."""

    failure_streak: int
    enabled: bool = True
    blocked_until: dt.datetime | None = None
    changed: bool = False

    def succeeded(self) -> None:
        self.changed = self.changed or self.failure_streak != 0
        self.failure_streak = 0


def outcome(
    call: WebhookCall, answer: Answer | None, state: HookState, settings: Any, now: dt.datetime
) -> tuple[dict[str, Any], bool]:
    """The call's new values (for :func:`write`) and whether the run may go on."""
    values = {f"v_{f}": getattr(call, f) for f in CALL_FIELDS}
    values.update(call_id=call.id, v_next_retry=None, owner=call.claimed_by)
    if answer is None:  # not sent: past its retry window
        values.update(v_status="failed", v_error=EXPIRED)
        return values, True
    values.update(
        v_attempts=call.attempts + 1,
        v_last_attempt=now,
        v_response_status=answer.status,
        v_response_body=answer.body,
        v_error=answer.error,
        v_duration_ms=answer.duration_ms,
    )
    if answer.ok:
        values["v_status"] = "delivered"
        state.succeeded()
        return values, True
    if answer.status == 410:
        values["v_status"] = "failed"
        state.succeeded()
        state.enabled, state.changed = False, True
        return values, False
    base = settings.webhook_retry_base_seconds
    end = expiry(call, settings)
    if now >= end:
        values["v_status"] = "failed"
    else:
        retry = now + dt.timedelta(seconds=backoff(base, call.attempts + 1))
        values.update(v_status="pending", v_next_retry=min(retry, end))
    state.failure_streak += 1
    state.changed = True
    if state.failure_streak >= 2:
        state.blocked_until = now + dt.timedelta(seconds=backoff(base, state.failure_streak - 1))
        return values, False
    return values, True


def _interrupted(owner: str) -> Any:
    return and_(_calls.c.claimed_by.is_not(None), _calls.c.claimed_by != owner)


async def write(
    db: Database,
    webhook_id: int,
    owner: str,
    outcomes: list[dict[str, Any]],
    state: HookState,
    *,
    claim: Sequence[WebhookCall] = (),
    release: Sequence[WebhookCall] = (),
) -> None:
    """In one transaction: the outcomes of a few attempts, the webhook's new state, the mark
    on the calls to be sent next (``claim``; one found marked by a stopped run counts that
    run's attempt, here and on the object) and the mark taken off calls left unsent
    (``release``)."""
    if not outcomes and not state.changed and not claim and not release:
        return
    async with db.sessionmaker() as session:
        connection = await session.connection()
        if outcomes:
            await connection.execute(_UPDATE_CALL, outcomes)
        if claim:
            interrupted = _interrupted(owner)
            await connection.execute(
                update(_calls)
                .where(_calls.c.id.in_([c.id for c in claim]), _calls.c.status == "pending")
                .values(
                    attempts=case((interrupted, _calls.c.attempts + 1), else_=_calls.c.attempts),
                    error=case((interrupted, INTERRUPTED), else_=_calls.c.error),
                    claimed_by=owner,
                )
            )
        if release:
            await connection.execute(
                update(_calls)
                .where(_calls.c.id.in_([c.id for c in release]), _calls.c.claimed_by == owner)
                .values(claimed_by=None)
            )
        if state.changed:
            values: dict[str, Any] = {
                "failure_streak": state.failure_streak,
                "blocked_until": state.blocked_until,
            }
            if not state.enabled:  # never re-enables one disabled through the API meanwhile
                values["enabled"] = False
            await connection.execute(
                update(Webhook)
                .where(Webhook.id == webhook_id, Webhook.lock_owner == owner)
                .values(**values)
            )
            state.changed = False
        await session.commit()
    for call in claim:
        if call.claimed_by is not None and call.claimed_by != owner:
            call.attempts += 1
            call.error = INTERRUPTED
        call.claimed_by = owner
    for call in release:
        call.claimed_by = None
