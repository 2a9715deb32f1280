"""Registering OAuth applications: shared by ``admit oauth-app`` and the settings pages.

A client id is 32 random characters, a client secret 64; only the secret's SHA-256 is kept, so
the secret is shown once (at creation and when a new one is generated). A public client (an
app that cannot keep a secret: a phone or desktop app) has none and must use PKCE.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from urllib.parse import urlsplit

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import generate_token, hash_token
from admit.db import utcnow
from admit.models import OAuthApplication, OAuthCode, OAuthGrant, OAuthToken

MAX_REDIRECT_URIS = 20
MAX_URI_LENGTH = 1000


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_uri_problems(uris: Sequence[str]) -> list[str]:
    """Each redirect URI must be an absolute URL without a fragment: https, or http only to
    this machine (RFC 8252 loopback redirects for native apps)."""
    problems = []
    if not uris:
        problems.append("Give at least one redirect URI.")
    if len(uris) > MAX_REDIRECT_URIS:
        problems.append(f"Give at most {MAX_REDIRECT_URIS} redirect URIs.")
    for uri in uris:
        if len(uri) > MAX_URI_LENGTH or not uri.isprintable() or any(c.isspace() for c in uri):
            problems.append(f"{uri[:80]!r} is not a valid URL.")
            continue
        try:
            parts = urlsplit(uri)
            host = parts.hostname or ""
        except ValueError:
            problems.append(f"{uri!r} is not a valid URL.")
            continue
        if parts.fragment or "#" in uri:
            problems.append(f"{uri}: a redirect URI may not contain a fragment.")
        elif parts.scheme == "https" and host:
            continue
        elif parts.scheme == "http" and _loopback(host):
            continue
        else:
            problems.append(f"{uri}: use https (http only for localhost or 127.0.0.1).")
    return problems


def name_problems(name: str) -> list[str]:
    if not name.strip():
        return ["Give the application a name."]
    if len(name) > 190 or not name.isprintable():
        return ["The name must be printable and at most 190 characters long."]
    return []


async def create(
    session: AsyncSession,
    name: str,
    redirect_uris: Sequence[str],
    *,
    owner_id: int | None = None,
    public: bool = False,
) -> tuple[OAuthApplication, str | None]:
    """The new application and its secret (None for a public client). Validate first."""
    secret = None if public else generate_token()
    app = OAuthApplication(
        client_id=generate_token(32),
        secret_hash=hash_token(secret) if secret else None,
        name=name.strip(),
        redirect_uris=list(dict.fromkeys(redirect_uris)),
        owner_id=owner_id,
    )
    session.add(app)
    await session.flush()
    return app, secret


def new_secret(app: OAuthApplication) -> str:
    """A new secret replacing the old one at once (a public client becomes confidential)."""
    secret = generate_token()
    app.secret_hash = hash_token(secret)
    return secret


async def by_client_id(session: AsyncSession, client_id: str) -> OAuthApplication | None:
    if not client_id or len(client_id) > 64:
        return None
    query = select(OAuthApplication).where(OAuthApplication.client_id == client_id)
    return (await session.execute(query)).scalar_one_or_none()


async def remove(session: AsyncSession, app: OAuthApplication) -> None:
    """Deletes the application with every grant, code and token it holds."""
    await session.execute(delete(OAuthApplication).where(OAuthApplication.id == app.id))


async def authorized_by(session: AsyncSession, user_id: int) -> list[tuple[OAuthApplication, str]]:
    """The applications the user authorized that still hold a usable token (or a fresh
    code), with the scopes granted, by name."""
    live = (
        select(OAuthGrant.application_id, func.min(OAuthGrant.created))
        .join(OAuthToken, OAuthToken.grant_id == OAuthGrant.id)
        .where(OAuthGrant.user_id == user_id, OAuthToken.refresh_revoked.is_(False))
        .group_by(OAuthGrant.application_id)
    )
    ids = {row[0] for row in await session.execute(live)}
    if not ids:
        return []
    apps = (
        (
            await session.execute(
                select(OAuthApplication)
                .where(OAuthApplication.id.in_(ids))
                .order_by(OAuthApplication.name, OAuthApplication.id)
            )
        )
        .scalars()
        .all()
    )
    scopes: dict[int, set[str]] = {}
    query = (
        select(OAuthGrant.application_id, OAuthToken.scope)
        .join(OAuthToken, OAuthToken.grant_id == OAuthGrant.id)
        .where(OAuthGrant.user_id == user_id, OAuthToken.refresh_revoked.is_(False))
    )
    for app_id, scope in await session.execute(query):
        scopes.setdefault(app_id, set()).update(scope.split())
    order = ("read", "write", "profile")
    return [(a, " ".join(s for s in order if s in scopes.get(a.id, ()))) for a in apps]


async def revoke_authorization(session: AsyncSession, user_id: int, application_id: int) -> None:
    """Revokes every token the user's grants gave this application (and its codes' use)."""
    grants = select(OAuthGrant.id).where(
        OAuthGrant.user_id == user_id, OAuthGrant.application_id == application_id
    )
    await session.execute(
        update(OAuthToken)
        .where(OAuthToken.grant_id.in_(grants))
        .values(access_revoked=True, refresh_revoked=True)
    )
    await session.execute(
        update(OAuthCode)
        .where(OAuthCode.grant_id.in_(grants), OAuthCode.used.is_(None))
        .values(used=utcnow())
    )
