"""Helpers for the OAuth and page tests: applications, users with a second factor, logging in
and consenting through the pages, and tokens made directly in the database."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import html as html_lib
import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pyotp
from sqlalchemy import insert

from admit.auth.credentials import generate_token, hash_token
from admit.models import OAuthGrant, OAuthToken, Organizer, User, UserTOTP, oauth_grant_organizers
from admit.oauth import apps
from tests.factories import Factory

BASE = "http://127.0.0.1"  # loopback: Authlib accepts plain HTTP only there
REDIRECT = "https://client.example/callback"
PASSWORD = "correct horse battery"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass
class App:
    id: int
    client_id: str
    secret: str | None

    @property
    def basic(self) -> dict[str, str]:
        raw = f"{self.client_id}:{self.secret}".encode()
        return {"Authorization": "Basic " + base64.b64encode(raw).decode()}


async def make_app(
    factory: Factory,
    *,
    uris: list[str] | None = None,
    public: bool = False,
    owner: User | None = None,
    name: str = "Accounting sync",
) -> App:
    async with factory.sessionmaker() as session:
        app, secret = await apps.create(
            session, name, uris or [REDIRECT], owner_id=owner.id if owner else None, public=public
        )
        await session.commit()
        return App(app.id, app.client_id, secret)


async def make_totp(factory: Factory, user: User) -> pyotp.TOTP:
    secret = pyotp.random_base32()
    async with factory.sessionmaker() as session:
        session.add(UserTOTP(user_id=user.id, secret=secret, confirmed=True, last_step=0))
        await session.commit()
    return pyotp.TOTP(secret)


async def bearer_token(
    factory: Factory,
    app: App,
    user: User,
    organizers: list[Organizer],
    scope: str = "read write profile",
    *,
    revoked: bool = False,
    expired: bool = False,
) -> str:
    """An access token made directly (as the token endpoint would store it)."""
    token = generate_token()
    now = dt.datetime.now(dt.UTC)
    async with factory.sessionmaker() as session:
        grant = OAuthGrant(application_id=app.id, user_id=user.id, scope=scope)
        session.add(grant)
        await session.flush()
        for org in organizers:
            await session.execute(
                insert(oauth_grant_organizers).values(grant_id=grant.id, organizer_id=org.id)
            )
        session.add(
            OAuthToken(
                grant_id=grant.id,
                access_hash=hash_token(token),
                refresh_hash=hash_token(generate_token()),
                scope=scope,
                expires=now + dt.timedelta(seconds=-5 if expired else 86400),
                access_revoked=revoked,
            )
        )
        await session.commit()
    return token


def csrf(html: str) -> str:
    match = CSRF.search(html)
    assert match, html
    return match.group(1)


async def login(
    client: httpx.AsyncClient, email: str, password: str = PASSWORD, totp: pyotp.TOTP | None = None
) -> httpx.Response:
    page = await client.get("/login")
    response = await client.post(
        "/login", data={"csrf_token": csrf(page.text), "email": email, "password": password}
    )
    if totp is not None and response.status_code == 303:
        page = await client.get(response.headers["location"])
        response = await client.post(
            "/login/2fa", data={"csrf_token": csrf(page.text), "code": totp.now()}
        )
    return response


def pkce() -> tuple[str, str]:
    verifier = generate_token(64)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def authorize_url(app: App, **params: str) -> str:
    query = {"response_type": "code", "client_id": app.client_id, "redirect_uri": REDIRECT}
    query.update(params)
    return "/api/v1/oauth/authorize?" + urlencode({k: v for k, v in query.items() if v != ""})


def redirect_params(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 302, response.text
    location = response.headers["location"]
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


async def consent(
    client: httpx.AsyncClient, url: str, organizers: list[Organizer], decision: str = "allow"
) -> httpx.Response:
    """Opens the consent page and answers it."""
    page = await client.get(url)
    assert page.status_code == 200, page.text
    hidden = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page.text)
    data = [(k, html_lib.unescape(v)) for k, v in hidden]
    data += [("organizer", str(o.id)) for o in organizers]
    data.append(("decision", decision))
    return await post_pairs(client, "/api/v1/oauth/authorize", data)


async def post_pairs(
    client: httpx.AsyncClient, url: str, pairs: list[tuple[str, str]]
) -> httpx.Response:
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    return await client.post(url, content=urlencode(pairs), headers=headers)


async def get_code(
    client: httpx.AsyncClient, app: App, organizers: list[Organizer], **params: str
) -> str:
    params.setdefault("state", "xyz")
    response = await consent(client, authorize_url(app, **params), organizers)
    values = redirect_params(response)
    assert values.get("state") == params["state"], values
    return values["code"]
