"""Turning a failed quota reservation into the per-position error body of the reference."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from admit.orders.pricing import Line
from admit.quotas.availability import NoQuota, ProductKey, QuotaExceeded, quotas_for


def not_enough_message(quota_name: str) -> str:
    return f'There is not enough quota available on quota "{quota_name}" to perform the operation.'


def quota_message(exc: QuotaExceeded) -> str:
    return not_enough_message(exc.quota.name)


def no_quota_message(line: Line) -> str:
    name = line.item.name.get("en") or next(iter(line.item.name.values()), "")
    return f'The product "{name}" is not assigned to a quota.'


async def quota_errors(
    session: AsyncSession,
    event_id: int,
    keys: list[ProductKey],
    lines: list[Line],
    exc: NoQuota | QuotaExceeded,
) -> list[dict[str, Any]]:
    """A list aligned with the positions, naming the problem on each position it concerns."""
    errors: list[dict[str, Any]] = []
    for key, line in zip(keys, lines, strict=True):
        if isinstance(exc, NoQuota):
            errors.append({"item": [no_quota_message(line)]} if key == exc.args[0] else {})
            continue
        quota_ids = {q.id for q in await quotas_for(session, event_id, key)}
        errors.append({"item": [quota_message(exc)]} if exc.quota.id in quota_ids else {})
    return errors
