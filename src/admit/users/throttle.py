"""Login throttling per account and per client address.

Failed attempts (wrong password or wrong second factor) are rows, so every server process
counts the same ones. Past ``ADMIT_LOGIN_MAX_FAILURES`` for one account, or
``ADMIT_LOGIN_MAX_FAILURES_PER_IP`` from one address, within ``ADMIT_LOGIN_THROTTLE_MINUTES``,
further attempts are refused (429) without looking at the password at all, so guessing gets
nowhere. A successful login clears the account's failures; old rows are dropped as new ones
come in.
"""

from __future__ import annotations

import datetime as dt
import math

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.config import Settings
from admit.db import utcnow
from admit.models import LoginFailure


def _key(email: str) -> str:
    return email.strip().lower()[:190]


async def retry_after(session: AsyncSession, settings: Settings, email: str, ip: str) -> int | None:
    """Seconds until another attempt is allowed, or None when one is allowed now."""
    window = dt.timedelta(minutes=settings.login_throttle_minutes)
    since = utcnow() - window
    waits = []
    for column, value, limit in (
        (LoginFailure.email, _key(email), settings.login_max_failures),
        (LoginFailure.ip, ip[:64], settings.login_max_failures_per_ip),
    ):
        query = select(func.count(), func.min(LoginFailure.created)).where(
            column == value, LoginFailure.created > since
        )
        count, oldest = (await session.execute(query)).one()
        if count >= limit:
            # Once the oldest failure in the window ages out, one attempt is free again.
            if oldest is not None and oldest.tzinfo is None:
                oldest = oldest.replace(tzinfo=dt.UTC)
            free_at = (oldest or utcnow()) + window
            waits.append(max(1, math.ceil((free_at - utcnow()).total_seconds())))
    return max(waits) if waits else None


async def record_failure(session: AsyncSession, settings: Settings, email: str, ip: str) -> None:
    cutoff = utcnow() - dt.timedelta(minutes=settings.login_throttle_minutes)
    await session.execute(delete(LoginFailure).where(LoginFailure.created < cutoff))
    session.add(LoginFailure(email=_key(email), ip=ip[:64]))
    await session.flush()


async def clear(session: AsyncSession, email: str) -> None:
    await session.execute(delete(LoginFailure).where(LoginFailure.email == _key(email)))
