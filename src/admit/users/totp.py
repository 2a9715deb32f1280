"""TOTP second factor (RFC 6238, through pyotp).

Setting it up: the settings page makes a secret and keeps it in the (signed) session until the
user types a valid code from their app; only then is it stored, so there are no half-set-up
factors. A code is accepted for the current 30-second step and one step either side (clock
drift), and each step only once: a code seen over someone's shoulder cannot be used again.
"""

from __future__ import annotations

import hmac
import time

import pyotp
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import User, UserTOTP

ISSUER = "Admit"


def new_secret() -> str:
    return pyotp.random_base32()


def provisioning_uri(secret: str, email: str) -> str:
    return pyotp.TOTP(secret).provisioning_uri(name=email, issuer_name=ISSUER)


async def get(session: AsyncSession, user_id: int) -> UserTOTP | None:
    row = await session.get(UserTOTP, user_id)
    return row if row is not None and row.confirmed else None


def matching_step(secret: str, code: str, after: int = 0, now: float | None = None) -> int | None:
    """The time step ``code`` belongs to (later than ``after``), or None."""
    code = "".join(code.split())
    if not (code.isascii() and code.isdigit() and len(code) == 6):
        return None
    totp = pyotp.TOTP(secret)
    current = int((time.time() if now is None else now) // totp.interval)
    for step in (current - 1, current, current + 1):
        if step > after and hmac.compare_digest(totp.generate_otp(step), code):
            return step
    return None


def verify(row: UserTOTP, code: str) -> bool:
    """Checks ``code`` and spends its time step."""
    step = matching_step(row.secret, code, row.last_step)
    if step is None:
        return False
    row.last_step = step
    return True


async def enable(session: AsyncSession, user: User, secret: str, code: str) -> bool:
    step = matching_step(secret, code)
    if step is None:
        return False
    row = await session.get(UserTOTP, user.id)
    if row is None:
        session.add(UserTOTP(user_id=user.id, secret=secret, confirmed=True, last_step=step))
    else:
        row.secret, row.confirmed, row.last_step = secret, True, step
    user.require_2fa = True  # the team member field: "whether the user uses 2FA"
    await session.flush()
    return True


async def disable(session: AsyncSession, user: User) -> None:
    row = await session.get(UserTOTP, user.id)
    if row is not None:
        await session.delete(row)
    user.require_2fa = False
    await session.flush()
