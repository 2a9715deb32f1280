"""What a user account needs beyond its row: a second factor, the failed logins that
throttle password guessing, and the login sessions of the pages."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import Base, UTCDateTime, utcnow


class UserTOTP(Base):
    """A TOTP secret (RFC 6238). ``confirmed`` once the user typed a valid code from their
    app; until then it does not count as a second factor."""

    __tablename__ = "user_totp"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    secret: Mapped[str] = mapped_column(String(64))
    confirmed: Mapped[bool] = mapped_column(default=False)
    # The last time step accepted: a code is good once (no replay within its 30 seconds).
    last_step: Mapped[int] = mapped_column(Integer, default=0)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class LoginFailure(Base):
    """One failed login (wrong password or second factor), by account and by address."""

    __tablename__ = "login_failures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(190), index=True)
    ip: Mapped[str] = mapped_column(String(64), index=True)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)


class LoginSession(Base):
    """One login to the pages (a browser). The signed cookie names it by a random key (only
    its hash is stored); logging out deletes the row, so the session ends on every server
    process and a copied cookie stops working. The account settings list these."""

    __tablename__ = "login_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_agent: Mapped[str] = mapped_column(String(300), default="")
    ip: Mapped[str] = mapped_column(String(64), default="")
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_seen: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
