"""Quota for an order change, through the same lock and count as every sale.

A sale asks for units; a change also gives units back (a canceled position, a position moved
to another product or date). The reference checks a change by what it does to each quota on
balance: moving a ticket between two products of one full quota is allowed, adding one to it
is not. So this computes the balance per quota and checks only the quotas that would have to
give more, with :func:`admit.quotas.availability.count` under the locks of
:func:`admit.quotas.availability.lock` — the count and the lock every sale uses. The ledger
still counts this order as it was until the commit, which is why the units given back are
subtracted from the demand here.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict

from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.errors import FieldErrors
from admit.models import Quota
from admit.orders.quota import quota_message
from admit.quotas import availability
from admit.quotas.availability import NoQuota, ProductKey, QuotaExceeded

NO_QUOTA = "There is no quota defined that allows this operation."


async def take_quota(
    session: AsyncSession,
    event_id: int,
    added: Counter[ProductKey],
    released: Counter[ProductKey],
    now: dt.datetime,
) -> None:
    """Locks every quota the change touches (id order) and refuses it when a quota would be
    oversold; 400 ``non_field_errors`` in the reference's words."""
    try:
        await _balance(session, event_id, added, released, now)
    except NoQuota:
        raise FieldErrors.general(NO_QUOTA) from None
    except QuotaExceeded as exc:
        raise FieldErrors.general(quota_message(exc)) from None


async def _balance(
    session: AsyncSession,
    event_id: int,
    added: Counter[ProductKey],
    released: Counter[ProductKey],
    now: dt.datetime,
) -> None:
    keys = sorted(set(added) | set(released), key=lambda k: (k[0], k[1] or 0, k[2] or 0))
    if not keys:
        return
    by_key: dict[ProductKey, list[Quota]] = {}
    for key in keys:
        by_key[key] = await availability.quotas_for(session, event_id, key)
        if added.get(key) and not by_key[key]:
            raise NoQuota(key)
    quotas = {q.id: q for found in by_key.values() for q in found}
    await availability.lock(session, quotas)  # re-reads size and closed once locked
    demand: dict[int, int] = defaultdict(int)
    for key, number in added.items():
        for quota in by_key[key]:
            demand[quota.id] += number
    for key, number in released.items():
        for quota in by_key[key]:
            demand[quota.id] -= number
    short = sorted(qid for qid, n in demand.items() if n > 0)
    if not short:
        return
    numbers = await availability.count(
        session, [quotas[i] for i in short], now, informational=False
    )
    for quota_id in short:
        quota, state = quotas[quota_id], numbers[quota_id]
        if quota.closed:
            raise QuotaExceeded(quota, 0)
        if state.available_number is None:
            continue
        if demand[quota_id] > state.available_number:
            raise QuotaExceeded(quota, state.available_number)
        if quota.close_when_sold_out and state.available_number == demand[quota_id]:
            quota.closed = True
