"""Login sessions of the pages, kept as rows (``login_sessions``).

The signed cookie alone cannot be taken back: logging out only told the one browser to
forget it, and a copy (a stolen cookie, another device) stayed good until it expired. So each
login is a row, named in the cookie by a random key of which only the hash is stored; a page
request is logged in only while its row exists. Logging out deletes the row, which every
server process sees at once; the settings page lists a user's rows and can end all but the
current one. ``last_seen`` is written at most once a minute per session.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Sequence

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import hash_token
from admit.db import utcnow
from admit.models import LoginSession

TOUCH_SECONDS = 60
# (marker in the User-Agent, name shown) in the order to test them: Edge and Opera say
# "Chrome" too, Chrome says "Safari" too.
_BROWSERS = (
    ("Edg/", "Edge"),
    ("OPR/", "Opera"),
    ("Firefox/", "Firefox"),
    ("Chrome/", "Chrome"),
    ("Chromium/", "Chromium"),
    ("Safari/", "Safari"),
    ("curl/", "curl"),
)
_SYSTEMS = (
    ("Android", "Android"),
    ("iPhone", "iOS"),
    ("iPad", "iPadOS"),
    ("Windows", "Windows"),
    ("Mac OS X", "macOS"),
    ("CrOS", "ChromeOS"),
    ("Linux", "Linux"),
)


async def start(
    session: AsyncSession, user_id: int, *, user_agent: str, ip: str, hours: float
) -> tuple[LoginSession, str]:
    """A new login session of ``user_id`` and its key (for the cookie only). The
    user's sessions unseen for longer than a session lasts are dropped on the way."""
    await session.execute(
        delete(LoginSession).where(
            LoginSession.user_id == user_id,
            LoginSession.last_seen < utcnow() - dt.timedelta(hours=hours),
        )
    )
    key = secrets.token_urlsafe(32)
    row = LoginSession(
        user_id=user_id, key_hash=hash_token(key), user_agent=user_agent[:300], ip=ip[:64]
    )
    session.add(row)
    await session.flush()
    return row, key


async def find(session: AsyncSession, user_id: int, key: object) -> LoginSession | None:
    """The live session ``key`` names, if it is ``user_id``'s."""
    if not isinstance(key, str) or not key:
        return None
    row = await session.scalar(select(LoginSession).where(LoginSession.key_hash == hash_token(key)))
    return row if row is not None and row.user_id == user_id else None


def due_for_touch(row: LoginSession, now: dt.datetime) -> bool:
    last = row.last_seen if row.last_seen.tzinfo else row.last_seen.replace(tzinfo=dt.UTC)
    return (now - last).total_seconds() >= TOUCH_SECONDS


async def touch(session: AsyncSession, row_id: int, *, ip: str, now: dt.datetime) -> None:
    await session.execute(
        update(LoginSession).where(LoginSession.id == row_id).values(last_seen=now, ip=ip[:64])
    )


async def end(session: AsyncSession, key: object) -> None:
    """Ends the session ``key`` names (nothing when there is none)."""
    if isinstance(key, str) and key:
        await session.execute(delete(LoginSession).where(LoginSession.key_hash == hash_token(key)))


async def end_others(session: AsyncSession, user_id: int, keep: int | None) -> int:
    """Ends every session of ``user_id`` but ``keep`` (a row id); how many ended."""
    query = delete(LoginSession).where(LoginSession.user_id == user_id)
    if keep is not None:
        query = query.where(LoginSession.id != keep)
    result = await session.execute(query)
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def of_user(session: AsyncSession, user_id: int, hours: float) -> Sequence[LoginSession]:
    """The user's live sessions, the most recently seen first."""
    since = utcnow() - dt.timedelta(hours=hours)
    rows = await session.scalars(
        select(LoginSession)
        .where(LoginSession.user_id == user_id, LoginSession.last_seen >= since)
        .order_by(LoginSession.last_seen.desc(), LoginSession.id.desc())
    )
    return rows.all()


def describe_agent(user_agent: str) -> str:
    """A short name for a browser ("Firefox on Linux") from its User-Agent, for the list a
    person scans to recognise their own devices; the full header is shown beside it."""
    browser = next((name for mark, name in _BROWSERS if mark in user_agent), None)
    system = next((name for mark, name in _SYSTEMS if mark in user_agent), None)
    if browser and system:
        return f"{browser} on {system}"
    return browser or system or "Unknown browser"
