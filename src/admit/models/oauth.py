"""OAuth 2 applications, the authorizations users gave them, codes and tokens.

Every secret (client secret, authorization code, access and refresh token) is stored as its
SHA-256 only: they are long random strings, shown once. A user's consent is an
:class:`OAuthGrant` naming the organizers the application may reach; the code and every token
issued from it (through any number of refreshes) point at that grant, so a reused code can
revoke exactly the tokens it led to.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, Column, ForeignKey, Integer, String, Table, Text
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import Base, JSONType, UTCDateTime, utcnow

oauth_grant_organizers = Table(
    "oauth_grant_organizers",
    Base.metadata,
    Column("grant_id", ForeignKey("oauth_grants.id", ondelete="CASCADE"), primary_key=True),
    Column(
        "organizer_id",
        ForeignKey("organizers.id", ondelete="CASCADE"),
        primary_key=True,
        index=True,
    ),
)


class OAuthApplication(Base):
    __tablename__ = "oauth_applications"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    client_id: Mapped[str] = mapped_column(String(64), unique=True)
    # None for a public client (a native or browser app that cannot keep a secret).
    secret_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    name: Mapped[str] = mapped_column(String(190))
    redirect_uris: Mapped[list[str]] = mapped_column(JSONType, default=list)
    # The user who registered it in their settings; None for applications made with the CLI.
    owner_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), nullable=True, index=True
    )
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class OAuthGrant(Base):
    """One consent: this user let this application act for them in some organizers."""

    __tablename__ = "oauth_grants"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    application_id: Mapped[int] = mapped_column(
        ForeignKey("oauth_applications.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    scope: Mapped[str] = mapped_column(String(100))
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class OAuthCode(Base):
    __tablename__ = "oauth_codes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    grant_id: Mapped[int] = mapped_column(
        ForeignKey("oauth_grants.id", ondelete="CASCADE"), index=True
    )
    redirect_uri: Mapped[str] = mapped_column(Text)
    code_challenge: Mapped[str | None] = mapped_column(String(128), nullable=True)
    code_challenge_method: Mapped[str | None] = mapped_column(String(10), nullable=True)
    expires: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    # Set when exchanged: a second exchange is refused and revokes what the first one got.
    used: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class OAuthToken(Base):
    """An access token and the refresh token issued with it."""

    __tablename__ = "oauth_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    grant_id: Mapped[int] = mapped_column(
        ForeignKey("oauth_grants.id", ondelete="CASCADE"), index=True
    )
    access_hash: Mapped[str] = mapped_column(String(64), unique=True)
    refresh_hash: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    scope: Mapped[str] = mapped_column(String(100))
    expires: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    access_revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    refresh_revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
