"""Delivery runs (job ``webhook.deliver``): one run per webhook at a time sends its due calls
in id order, so a receiver gets notifications in order as far as retries allow (what an
attempt's answer means: :mod:`admit.webhooks.outcomes`).

A run holds the webhook's lock for the job lease (``job_lease_seconds``), extended by a
heartbeat every third of it while the run lasts, so a run whose process died frees the webhook
about when its job's lease runs out, and the job's next attempt goes on from there. A run never
holds a database connection while it waits for a receiver. It marks ``RECORD_EVERY`` calls
before sending them and records answers at least every ``RECORD_EVERY`` calls or
``RECORD_SECONDS``, in one transaction with the next mark: a process that dies repeats at most
the calls it had marked, and the log counts those attempts. A run ends after a time budget,
when its calls are sent, when the receiver failed twice in a row, or when its host already has
as many requests in flight as allowed; the webhook is then marked for the fan-out to wake
again when its next call is due.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import secrets
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import orjson
from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.exc import SQLAlchemyError

from admit.db import Database, utcnow
from admit.jobs.queue import JobContext, JobFailed, job_kind
from admit.models import Webhook, WebhookCall
from admit.webhooks.outcomes import HookState, expiry, outcome, write
from admit.webhooks.service import arm, signing_secrets
from admit.webhooks.signing import SIGNATURE_HEADER, signature_header

if TYPE_CHECKING:
    import httpx

    from admit.webhooks import http

DELIVER_KIND = "webhook.deliver"
RUN_SECONDS = 20.0
FETCH = 100
HOST_BUSY_SECONDS = 1.0
# Calls marked before they are sent (a dead run repeats at most these), and how often answers
# are written at the latest: a write per RECORD_EVERY calls, not one per call.
RECORD_EVERY = 10
RECORD_SECONDS = 0.5

log = logging.getLogger("admit.webhooks")

# Requests in flight per target host in this process (see webhook_host_concurrency).
_in_flight: dict[str, int] = defaultdict(int)


@job_kind(DELIVER_KIND, max_attempts=5, keep_hours=1, time_limit=300)
async def deliver(ctx: JobContext) -> str:
    webhook_id = ctx.input.get("webhook_id")
    if not isinstance(webhook_id, int) or isinstance(webhook_id, bool):
        raise JobFailed("The job names no webhook.")
    owner = f"{ctx.id}:{ctx.attempt}:{secrets.token_hex(4)}"
    seconds = float(ctx.settings.job_lease_seconds)
    won, until = await _acquire(ctx.db, webhook_id, owner, seconds)
    if not won:
        # Another run has it; should that run have died, look again when its lease ends.
        await _rearm(ctx.db, webhook_id, not_before=until)
        return "Another run delivers to this webhook."
    not_before = None
    try:
        async with Hold(ctx.db, webhook_id, owner, seconds, until).kept() as hold:
            sent, not_before = await _drain(ctx, webhook_id, hold)
    finally:
        await _release(ctx.db, webhook_id, owner)
        # Calls left (retries, or ones that came in meanwhile): the fan-out wakes it again.
        await _rearm(ctx.db, webhook_id, not_before=not_before)
    return f"{sent} call(s) sent."


def _lease(seconds: float) -> dt.datetime:
    return utcnow() + dt.timedelta(seconds=seconds)


async def _acquire(
    db: Database, webhook_id: int, owner: str, seconds: float
) -> tuple[bool, dt.datetime]:
    """(True, the lease's end) when this run now holds the webhook; else (False, when the
    holder's lease ends)."""
    now = utcnow()
    lease = _lease(seconds)
    async with db.sessionmaker() as session:
        won = (
            await session.execute(
                update(Webhook)
                .where(
                    Webhook.id == webhook_id,
                    Webhook.enabled.is_(True),
                    or_(Webhook.lock_owner.is_(None), Webhook.lock_until < now),
                )
                .values(lock_owner=owner, lock_until=lease)
                .returning(Webhook.id)
                .execution_options(synchronize_session=False)
            )
        ).first()
        held = None
        if won is None:
            held = await session.scalar(
                select(Webhook.lock_until).where(Webhook.id == webhook_id, Webhook.enabled)
            )
        await session.commit()
    if won is not None:
        return True, lease
    return False, held or now  # a disabled or deleted webhook: nothing to wait for


async def _extend(db: Database, webhook_id: int, owner: str, seconds: float) -> dt.datetime | None:
    """A longer lease; None when the webhook is no longer the run's (or was disabled)."""
    lease = _lease(seconds)
    async with db.sessionmaker() as session:
        result = await session.execute(
            update(Webhook)
            .where(Webhook.id == webhook_id, Webhook.lock_owner == owner, Webhook.enabled)
            .values(lock_until=lease)
        )
        await session.commit()
    return lease if result.rowcount == 1 else None  # type: ignore[attr-defined]


class Hold:
    """This run's hold on the webhook: a heartbeat extends the lock every third of the lease
    (also while a slow receiver keeps a call in flight). ``held`` turns false for good once
    the lock was taken away (the webhook disabled, another run after a lapse) or the lease
    ran out without an extension (the database unreachable): the run then sends no more."""

    def __init__(
        self, db: Database, webhook_id: int, owner: str, seconds: float, until: dt.datetime
    ) -> None:
        self.db, self.webhook_id, self.owner = db, webhook_id, owner
        self.seconds, self.until = seconds, until
        self.lost = False

    @property
    def held(self) -> bool:
        if not self.lost and utcnow() >= self.until:
            self.lost = True
        return not self.lost

    async def _beat(self) -> None:
        while not self.lost:
            await asyncio.sleep(self.seconds / 3)
            try:
                until = await _extend(self.db, self.webhook_id, self.owner, self.seconds)
            except (SQLAlchemyError, OSError):
                log.warning("webhook %s: lock heartbeat failed", self.webhook_id, exc_info=True)
                continue  # ``held`` turns false when the lease runs out meanwhile
            if until is None:
                self.lost = True
            else:
                self.until = until

    @contextlib.asynccontextmanager
    async def kept(self) -> AsyncIterator[Hold]:
        beat = asyncio.create_task(self._beat())
        try:
            yield self
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat


async def _release(db: Database, webhook_id: int, owner: str) -> None:
    async with db.sessionmaker() as session:
        await session.execute(
            update(Webhook)
            .where(Webhook.id == webhook_id, Webhook.lock_owner == owner)
            .values(lock_owner=None, lock_until=None)
        )
        await session.commit()


async def _rearm(db: Database, webhook_id: int, *, not_before: dt.datetime | None) -> None:
    """Marks the webhook for a run when its next pending call is due (not before a block)."""
    async with db.sessionmaker() as session:
        row = (
            await session.execute(
                select(Webhook.enabled, Webhook.blocked_until, func.min(WebhookCall.next_retry))
                .join(
                    WebhookCall,
                    and_(WebhookCall.webhook_id == Webhook.id, WebhookCall.status == "pending"),
                )
                .where(Webhook.id == webhook_id)
                .group_by(Webhook.id, Webhook.enabled, Webhook.blocked_until)
            )
        ).first()
        if row is not None and row[0] and row[2] is not None:
            when = max(t for t in (row[2], row[1], not_before) if t is not None)
            await arm(session, webhook_id, when)
        await session.commit()


async def _load(db: Database, webhook_id: int, now: dt.datetime) -> tuple[Any, list[Any]]:
    """The webhook and its next due calls (none while it is blocked or disabled)."""
    async with db.sessionmaker() as session:
        hook = (
            await session.execute(select(Webhook).where(Webhook.id == webhook_id))
        ).scalar_one_or_none()
        if hook is None or not hook.enabled:
            return hook, []
        if hook.blocked_until is not None and hook.blocked_until > now:
            return hook, []
        query = (
            select(WebhookCall)
            .where(
                WebhookCall.webhook_id == webhook_id,
                WebhookCall.status == "pending",
                WebhookCall.next_retry <= now,
            )
            .order_by(WebhookCall.id)
            .limit(FETCH)
        )
        return hook, list((await session.execute(query)).scalars().all())


async def _drain(ctx: JobContext, webhook_id: int, hold: Hold) -> tuple[int, dt.datetime | None]:
    """Sends due calls in order; returns how many, and a time before which not to wake."""
    # httpx loads in the process that delivers, not in every API process that registers
    # this job kind.
    import httpx

    from admit.webhooks import http

    settings = ctx.settings
    owner = hold.owner
    deadline = time.monotonic() + RUN_SECONDS
    sent = 0
    addresses: dict[tuple[str, int], tuple[str, float]] = {}
    async with http.client(settings.webhook_timeout_seconds, settings.webhook_ca_file) as client:
        while time.monotonic() < deadline:
            hook, calls = await _load(ctx.db, webhook_id, utcnow())
            if hook is None or not hook.enabled or hook.lock_owner != owner or not hold.held:
                return sent, None
            if not calls:
                return sent, hook.blocked_until
            host = httpx.URL(hook.target_url).host.lower()
            state = HookState(hook.failure_streak)
            outcomes: list[dict[str, Any]] = []
            go_on, wait = True, None
            done = marked = 0  # calls[:done] answered; calls[:marked] marked for sending
            written = time.monotonic()
            try:
                while done < len(calls):
                    if _in_flight[host] >= settings.webhook_host_concurrency:
                        go_on, wait = False, utcnow() + dt.timedelta(seconds=HOST_BUSY_SECONDS)
                        break
                    if not hold.held:
                        go_on = False
                        break
                    if done == marked or time.monotonic() - written >= RECORD_SECONDS:
                        # The answers so far and the mark on the next few, in one write.
                        upto = min(len(calls), done + RECORD_EVERY)
                        claim, marked = calls[marked:upto], max(marked, upto)
                        await write(ctx.db, webhook_id, owner, outcomes, state, claim=claim)
                        outcomes, written = [], time.monotonic()
                    call = calls[done]
                    _in_flight[host] += 1
                    try:
                        answer = await _send(settings, client, hook, call, addresses)
                    finally:
                        _in_flight[host] -= 1
                    done += 1
                    sent += answer is not None
                    values, go_on = outcome(call, answer, state, settings, utcnow())
                    outcomes.append(values)
                    if not go_on or time.monotonic() >= deadline:
                        break
            finally:
                # Answers not yet written, and the mark off the calls left unsent.
                await write(ctx.db, webhook_id, owner, outcomes, state, release=calls[done:marked])
            if not go_on:
                return sent, wait
    return sent, None


async def _send(
    settings: Any,
    client: httpx.AsyncClient,
    hook: Webhook,
    call: WebhookCall,
    addresses: dict[tuple[str, int], tuple[str, float]],
) -> http.Answer | None:
    """One attempt; None (nothing sent) for a call past its retry window."""
    from admit.webhooks import http

    now = utcnow()
    if now >= expiry(call, settings):
        return None
    body = orjson.dumps(call.payload)
    stamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        SIGNATURE_HEADER: signature_header(signing_secrets(hook, now), stamp, body),
    }
    return await http.post(
        client,
        hook.target_url,
        body,
        headers,
        timeout=settings.webhook_timeout_seconds,
        allow_private=settings.webhook_allow_private,
        addresses=addresses,
    )
