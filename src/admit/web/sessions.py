"""Sessions in a signed cookie, and the CSRF token every form carries.

The cookie holds a small dict signed with the installation's secret key (itsdangerous; the
key is ``ADMIT_SECRET_KEY`` or generated once into the data dir). It carries the user's id,
the key of their login session row (``admit.users.logins``: logging out deletes the row, so
the login ends on every process and a copied cookie is worthless) and a fingerprint of their
password hash: changing the password ends every other session. It is ``HttpOnly``,
``SameSite=Lax``, and ``Secure`` when the public URL is https; it expires
``ADMIT_SESSION_HOURS`` after it was last written. Every form posts the session's CSRF
token; a POST without the right one is refused with a 403 page. Logging in starts a fresh
session (and token), so a token planted before login is worthless after.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from fastapi import Request
from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.responses import Response

from admit.kit.http.context import public_base_url
from admit.models import User
from admit.users.accounts import password_fingerprint

COOKIE = "admit_session"
_SALT = "admit.session"


def _serializer(request: Request) -> URLSafeTimedSerializer:
    return _serializer_for(request.app.state.secret_key)


@lru_cache(maxsize=4)
def _serializer_for(secret_key: str) -> URLSafeTimedSerializer:
    """Built once per key: building one costs as much as signing a cookie with it, and every
    page a first-time visitor opens signs one (the shop's kept front page, ~10% of its CPU)."""
    return URLSafeTimedSerializer(secret_key, salt=_SALT)


def _max_age(request: Request) -> int:
    return int(request.app.state.settings.session_hours * 3600)


@dataclass
class WebSession:
    data: dict[str, Any] = field(default_factory=dict)
    changed: bool = False

    @property
    def csrf(self) -> str:
        token = self.data.get("csrf")
        if not isinstance(token, str) or len(token) < 32:
            token = secrets.token_urlsafe(32)
            self.data["csrf"] = token
            self.changed = True
        return token

    def csrf_ok(self, submitted: str) -> bool:
        token = self.data.get("csrf")
        return (
            isinstance(token, str)
            and bool(submitted)
            and hmac.compare_digest(token.encode(), submitted.encode("utf-8", "surrogatepass"))
        )

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def set(self, key: str, value: Any) -> None:
        if value is None:
            self.data.pop(key, None)
        else:
            self.data[key] = value
        self.changed = True

    def log_in(self, user: User, key: str, *, needs_2fa_setup: bool = False) -> None:
        """A fresh session for ``user`` (new CSRF token, nothing carried over but a flash),
        naming its login session row by ``key``."""
        flash = self.data.get("flash")
        self.data = {
            "csrf": secrets.token_urlsafe(32),
            "u": user.id,
            "sid": key,
            "pw": password_fingerprint(user),
        }
        if needs_2fa_setup:
            self.data["setup2fa"] = True
        if flash:
            self.data["flash"] = flash
        self.changed = True

    def log_out(self) -> None:
        self.data = {"csrf": secrets.token_urlsafe(32)}
        self.changed = True

    def flash(self, message: str) -> None:
        self.set("flash", message)

    def pop_flash(self) -> str | None:
        message = self.data.pop("flash", None)
        if message is not None:
            self.changed = True
        return message if isinstance(message, str) else None


def load(request: Request) -> WebSession:
    raw = request.cookies.get(COOKIE)
    if raw:
        try:
            data = _serializer(request).loads(raw, max_age=_max_age(request))
        except (BadSignature, UnicodeError, ValueError):
            data = None
        if isinstance(data, dict):
            return WebSession(data)
    session = WebSession()
    session.csrf  # noqa: B018 - creates the token
    return session


def save(request: Request, response: Response, session: WebSession) -> None:
    if not session.changed:
        return
    response.set_cookie(
        COOKIE,
        _serializer(request).dumps(session.data),
        max_age=_max_age(request),
        httponly=True,
        samesite="lax",
        secure=public_base_url(request).startswith("https://"),
        path="/",
    )
