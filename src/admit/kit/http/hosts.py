"""Which ``Host`` a link may be built from (``ADMIT_BASE_URL``, ``ADMIT_ALLOWED_HOSTS``).

Links that leave the request — a password-reset link or an invitation in a mail, an order's
page, a download URL, ``next``/``previous`` — are absolute, and without ``ADMIT_BASE_URL`` their
origin is the one the request came in on. The ``Host`` header is the client's to choose: a
request for someone else's password reset with ``Host: evil.example`` would mail the real user
a link to the attacker's site, carrying the reset token there. So an origin is taken from the
request only when its host is on the allow-list (by default the loopback names ``make run``
serves, with any port, plus the host of ``ADMIT_BASE_URL``); a request with any other host gets
400 wherever it would build a link. With ``ADMIT_BASE_URL`` set every link is built from it and
the request's host plays no part.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request

from admit.config import Settings
from admit.kit.http.errors import FieldErrors

LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
REFUSED = "This host name is not allowed here; set ADMIT_BASE_URL or ADMIT_ALLOWED_HOSTS."


def host_name(authority: str) -> str:
    """``Host`` without its port, lower-cased (IPv6 literals keep their brackets)."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        end = authority.find("]")
        return authority[: end + 1] if end > 0 else authority
    return authority.partition(":")[0]


class AllowedHosts:
    """The names a request's ``Host`` may carry (any port) for a link to be built from it;
    ``*`` allows every name (only behind a proxy that sets ``Host`` itself)."""

    def __init__(self, settings: Settings) -> None:
        spec = settings.allowed_hosts
        names = (
            LOOPBACK
            if spec is None
            else tuple(host_name(part) for part in spec.split(",") if part.strip())
        )
        extra = ()
        if settings.base_url:
            extra = (host_name(urlsplit(settings.base_url).netloc.rpartition("@")[2]),)
        self.any = "*" in names
        self.names = frozenset(names + extra)
        self.allows = lru_cache(maxsize=256)(self._allows)

    def _allows(self, authority: str) -> bool:
        return self.any or host_name(authority) in self.names


def allowed_hosts(request: Request) -> AllowedHosts:
    state = request.app.state
    hosts = getattr(state, "allowed_hosts", None)
    if hosts is None:
        hosts = state.allowed_hosts = AllowedHosts(state.settings)
    return hosts


def request_origin(request: Request) -> str:
    """The origin to build links from: ``ADMIT_BASE_URL``, else the request's own when its host
    is allowed (no ``Host`` header: the address the server listens on), else a 400."""
    base = request.app.state.settings.base_url
    if base:
        return base.rstrip("/")
    host = request.headers.get("host")
    if host is not None and not allowed_hosts(request).allows(host):
        raise FieldErrors.single("Host", REFUSED)
    # Built once per distinct origin: a URL object per request showed in the hot GETs.
    scope = request.scope
    key = (
        scope.get("scheme"),
        host,
        scope.get("app_root_path"),
        scope.get("root_path", ""),
        scope.get("server"),
    )
    origin = _ORIGINS.get(key)
    if origin is None:
        if len(_ORIGINS) >= 1024:
            _ORIGINS.clear()
        origin = _ORIGINS[key] = str(request.base_url).rstrip("/")
    return origin


_ORIGINS: dict[tuple[Any, ...], str] = {}
