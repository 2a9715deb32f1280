"""The fan-out (periodic task ``webhooks.fanout``): outbox rows become one ``webhook_calls``
row per interested webhook, and webhooks with calls due get a delivery job.

Each outbox has a cursor row, locked for the run (``FOR UPDATE`` on PostgreSQL; SQLite
serialises writers), and the calls are written in the same transaction that moves it: a run
that fails leaves nothing, and no row is fanned out twice whatever the number of schedulers.
Ids are handed out before commit, so a row with a lower id can become visible after a higher
one: ids skipped over are remembered as gaps and looked for again for ``GAP_GRACE_SECONDS``
(a transaction writing a notification is not expected to stay open longer).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.jobs.queue import enqueue
from admit.models import Webhook, WebhookCall, WebhookCursor, webhook_limit_events
from admit.notifications.types import canonical, family, in_family
from admit.webhooks.sources import SOURCES, Row, Source

INTERVAL_SECONDS = 1.0
BATCH = 2000
ROUNDS = 10  # batches per source and run; the next run goes on from there
GAP_GRACE_SECONDS = 600.0
MAX_GAPS = 5000
CHUNK = 500


@dataclass(frozen=True)
class Target:
    """An enabled webhook, as matching needs it: its action types in canonical form, each
    with the family (``service.`` or ``pretix.``) the client wrote it in."""

    id: int
    organizer_id: int
    all_events: bool
    events: frozenset[int]
    exact: dict[str, str]
    families: tuple[tuple[str, str], ...]

    def wants(self, row: Row) -> str | None:
        """The family to announce ``row`` in, or None when the webhook does not want it.
        An exact type wins over a ``.*`` entry; among ``.*`` entries the first listed."""
        if row.event_id is not None and not self.all_events and row.event_id not in self.events:
            return None
        found = self.exact.get(row.action)
        if found is not None:
            return found
        for prefix, written in self.families:
            if row.action.startswith(prefix):
                return written
        return None


def target(
    webhook_id: int, organizer_id: int, all_events: bool, events: frozenset[int], types: list[str]
) -> Target:
    exact: dict[str, str] = {}
    families: list[tuple[str, str]] = []
    for sent in types:
        action = canonical(sent)
        if action.endswith(".*"):
            families.append((action[:-1], family(sent)))
        else:
            exact.setdefault(action, family(sent))
    return Target(webhook_id, organizer_id, all_events, events, exact, tuple(families))


async def load_targets(session: AsyncSession) -> dict[int, list[Target]]:
    """Enabled webhooks by organizer."""
    hooks = (
        await session.execute(
            select(Webhook.id, Webhook.organizer_id, Webhook.all_events, Webhook.action_types)
            .where(Webhook.enabled.is_(True))
            .order_by(Webhook.id)
        )
    ).all()
    if not hooks:
        return {}
    limits: dict[int, set[int]] = defaultdict(set)
    limited = [h.id for h in hooks if not h.all_events]
    if limited:
        links = await session.execute(
            select(webhook_limit_events.c.webhook_id, webhook_limit_events.c.event_id).where(
                webhook_limit_events.c.webhook_id.in_(limited)
            )
        )
        for webhook_id, event_id in links.all():
            limits[webhook_id].add(event_id)
    targets: dict[int, list[Target]] = defaultdict(list)
    for h in hooks:
        types = [t for t in (h.action_types or []) if isinstance(t, str)]
        targets[h.organizer_id].append(
            target(h.id, h.organizer_id, h.all_events, frozenset(limits[h.id]), types)
        )
    return targets


async def _cursor(session: AsyncSession, source: Source, now: dt.datetime) -> WebhookCursor:
    query = select(WebhookCursor).where(WebhookCursor.source == source.name)
    cursor = (await session.execute(query.with_for_update())).scalar_one_or_none()
    if cursor is None:  # normally made by the migration; starts at the present
        session.add(
            WebhookCursor(
                source=source.name, position=await source.max_id(session), gaps={}, updated=now
            )
        )
        await session.flush()
        cursor = (await session.execute(query.with_for_update())).scalar_one()
    return cursor


async def _advance(
    session: AsyncSession, source: Source, cursor: WebhookCursor, now: dt.datetime
) -> list[Row]:
    """The rows that became visible since the cursor's last run (late ones included)."""
    stamp = now.timestamp()
    gaps = {k: float(v) for k, v in (cursor.gaps or {}).items()}
    found: list[Row] = []
    ids = sorted(int(k) for k in gaps)
    for start in range(0, len(ids), CHUNK):
        found += await source.rows(session, source.table.id.in_(ids[start : start + CHUNK]))
    for row in found:
        gaps.pop(str(row.id), None)
    gaps = {k: t for k, t in gaps.items() if stamp - t < GAP_GRACE_SECONDS}
    position = cursor.position
    for _ in range(ROUNDS):
        batch = await source.rows(session, source.table.id > position, BATCH)
        for row in batch:
            for missing in range(max(position + 1, row.id - MAX_GAPS), row.id):
                gaps[str(missing)] = stamp
            position = row.id
        found += batch
        if len(batch) < BATCH:
            break
    if len(gaps) > MAX_GAPS:
        gaps = dict(sorted(gaps.items(), key=lambda kv: int(kv[0]))[-MAX_GAPS:])
    if (position, gaps) != (cursor.position, cursor.gaps):  # an idle run writes nothing
        cursor.position, cursor.gaps, cursor.updated = position, gaps, now
    return sorted(found, key=lambda r: r.id)


def _written_in(payload: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The payload with its ``action`` in the webhook's family (shared when unchanged)."""
    action = in_family(payload["action"], prefix)
    return payload if action == payload["action"] else {**payload, "action": action}


async def fan_out(session: AsyncSession, now: dt.datetime) -> int:
    """One run: new outbox rows to calls, then delivery jobs for the webhooks due."""
    targets = await load_targets(session)
    created = 0
    armed: set[int] = set()
    for source in SOURCES:
        cursor = await _cursor(session, source, now)
        if not targets:  # nobody listens: skip ahead cheaply
            position = max(cursor.position, await source.max_id(session))
            if (position, {}) != (cursor.position, cursor.gaps):
                cursor.position, cursor.gaps, cursor.updated = position, {}, now
            continue
        triples = [
            (row.id, hook.id, prefix)
            for row in await _advance(session, source, cursor, now)
            if row.wanted
            for hook in targets.get(row.organizer_id, ())
            if (prefix := hook.wants(row)) is not None
        ]
        if not triples:
            continue
        wanted = sorted({row_id for row_id, _, _ in triples})
        payloads = {}
        for start in range(0, len(wanted), CHUNK):
            payloads.update(await source.payloads(session, wanted[start : start + CHUNK]))
        values = [
            {
                "webhook_id": webhook_id,
                "source": source.name,
                "source_id": row_id,
                "action": body["action"],
                "payload": body,
                "status": "pending",
                "attempts": 0,
                "next_retry": now,
                "created": now,
            }
            for row_id, webhook_id, prefix in triples
            if row_id in payloads  # gone meanwhile (e.g. its ticket was deleted)
            for body in (_written_in(payloads[row_id], prefix),)
        ]
        if values:
            await session.execute(insert(WebhookCall), values)
            created += len(values)
            armed.update(v["webhook_id"] for v in values)
    await session.flush()
    if armed:
        await session.execute(
            update(Webhook)
            .where(
                Webhook.id.in_(sorted(armed)),
                or_(Webhook.wake_at.is_(None), Webhook.wake_at > now),
                or_(Webhook.blocked_until.is_(None), Webhook.blocked_until <= now),
            )
            .values(wake_at=now)
            .execution_options(synchronize_session=False)
        )
    await wake(session, now)
    return created


async def wake(session: AsyncSession, now: dt.datetime) -> list[int]:
    """Hands every webhook whose ``wake_at`` has come to a delivery job (after the commit)."""
    from admit.webhooks.delivery import DELIVER_KIND  # registers the job kind

    due = (
        await session.execute(
            update(Webhook)
            .where(Webhook.wake_at <= now)
            .values(wake_at=None)
            .returning(Webhook.id, Webhook.organizer_id, Webhook.enabled)
            .execution_options(synchronize_session=False)
        )
    ).all()
    started = []
    for webhook_id, organizer_id, enabled in sorted(due):
        if enabled:
            await enqueue(
                session, DELIVER_KIND, {"webhook_id": webhook_id}, organizer_id=organizer_id
            )
            started.append(webhook_id)
    return started
