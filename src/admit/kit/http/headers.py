"""Security headers on every answer, and which proxies' forwarding headers are believed.

Every answer (API, pages, the fast lane's, errors) says ``nosniff`` and sends no referrer (URLs
here can hold secrets: reset and invitation links, download links). HTML answers that bring no
Content-Security-Policy of their own get a strict one (no scripts, never framed); the pages
under ``admit.web`` set theirs, the API docs get one that lets Swagger UI's served scripts run
(none inline). HSTS is sent when the request came over TLS: the server's own, or a trusted
proxy's that says ``X-Forwarded-Proto: https`` (``ADMIT_TRUSTED_PROXIES``). Headers the answer
already has are never doubled or overridden.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from admit.config import Settings
from admit.kit.http.routing import API_PREFIX

ALWAYS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)
HTML_CSP = (
    b"default-src 'self'; script-src 'none'; frame-ancestors 'none'; base-uri 'none'; "
    b"form-action 'self'"
)
# Swagger UI: its bundle and the script starting it, both served from here; nothing inline.
DOCS_CSP = (
    b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    b"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
DOCS_PREFIX = f"{API_PREFIX}/docs"


class TrustedProxies:
    """The addresses (``ADMIT_TRUSTED_PROXIES``: IPs and networks, comma-separated) whose
    ``X-Forwarded-For`` / ``X-Forwarded-Proto`` are taken as the truth about the client."""

    def __init__(self, spec: str) -> None:
        self.networks = tuple(
            ipaddress.ip_network(part.strip(), strict=False)
            for part in spec.split(",")
            if part.strip()
        )
        self.trusts = lru_cache(maxsize=1024)(self._trusts)

    def _trusts(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.networks)

    def client_ip(self, scope: Scope) -> str:
        """The client's address: the peer's, or when the peer is a trusted proxy the nearest
        untrusted address in ``X-Forwarded-For``."""
        client = scope.get("client")
        peer = client[0] if client else "unknown"
        if not self.trusts(peer):
            return peer
        for name, value in scope["headers"]:
            if name == b"x-forwarded-for":
                for hop in reversed(value.decode("latin-1").split(",")):
                    hop = hop.strip()
                    if hop and not self.trusts(hop):
                        return hop
        return peer

    def is_https(self, scope: Scope) -> bool:
        """Whether the client reached us over TLS (ours or a trusted proxy's)."""
        if scope.get("scheme") == "https":
            return True
        for name, value in scope["headers"]:
            if name == b"x-forwarded-proto":
                client = scope.get("client")
                return value.strip().lower() == b"https" and bool(client) and self.trusts(client[0])
        return False


def _additions(headers: list[tuple[bytes, bytes]], path: str, hsts: bytes | None) -> list:
    present = {name.lower() for name, _ in headers}
    added = [header for header in ALWAYS if header[0] not in present]
    if hsts is not None and b"strict-transport-security" not in present:
        added.append((b"strict-transport-security", hsts))
    if b"content-security-policy" not in present:
        for name, value in headers:
            if name.lower() == b"content-type" and value.startswith(b"text/html"):
                policy = DOCS_CSP if path.startswith(DOCS_PREFIX) else HTML_CSP
                added.append((b"content-security-policy", policy))
                if b"x-frame-options" not in present:
                    added.append((b"x-frame-options", b"DENY"))
                break
    return added


def security_headers_layer(app: ASGIApp, settings: Settings) -> ASGIApp:
    """The edge layer adding the security headers to every HTTP answer."""
    proxies = TrustedProxies(settings.trusted_proxies)
    hsts = (
        f"max-age={settings.hsts_seconds}; includeSubDomains".encode()
        if settings.hsts_seconds
        else None
    )

    async def layer(scope: Scope, receive: Receive, send: Send) -> None:
        secure = hsts if hsts is not None and proxies.is_https(scope) else None

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                headers.extend(_additions(headers, scope["path"], secure))
                message["headers"] = headers
            await send(message)

        await app(scope, receive, send_with_headers)

    return layer


@lru_cache(maxsize=8)
def trusted_proxies(spec: str) -> TrustedProxies:
    """One :class:`TrustedProxies` per ``ADMIT_TRUSTED_PROXIES`` value (its cache shared)."""
    return TrustedProxies(spec)


def client_address(scope: Scope, settings: Settings) -> str:
    """The client's address, the one thing every per-address limit counts: the rate limits,
    the login throttle, the key namespace of callers without credentials. Behind a trusted
    proxy it is the forwarded client's, never the proxy's (which all clients share)."""
    return trusted_proxies(settings.trusted_proxies).client_ip(scope)
