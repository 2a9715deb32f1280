"""One guarded POST to a receiver: resolved once, checked, connected to the checked address.

The target's host name is resolved here and every address it resolves to must be public
(unless ``webhook_allow_private``); the request then goes to the first address itself (the
name stays in the ``Host`` header and, for https, in SNI and the certificate check), so a
second lookup cannot point the connection somewhere else (which addresses pass:
:mod:`admit.webhooks.addresses`). Certificates are checked against the public authorities and
those of ``webhook_ca_file``. Redirects are not followed, the whole exchange is bounded by the
timeout, at most 1 KB of the answer is read, and error texts never show the address a name
resolved to.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import time
from dataclasses import dataclass

import httpx

from admit import __version__
from admit.webhooks.addresses import Refused, literal, resolve

__all__ = ["Answer", "Refused", "client", "post", "resolve"]

BODY_LIMIT = 1024
RESOLVED_SECONDS = 30.0
USER_AGENT = f"Admit-Webhooks/{__version__}"


@dataclass(frozen=True)
class Answer:
    """How one attempt went: the receiver's status and the start of its body, or an error."""

    status: int | None
    body: str | None
    error: str | None
    duration_ms: int

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


@functools.cache
def tls_context(ca_file: str | None) -> ssl.SSLContext:
    """Certificates are checked against the usual authorities (certifi's bundle) and those in
    ``ca_file`` (``ADMIT_WEBHOOK_CA_FILE``), for the URL's host name (sent as SNI) although
    the connection goes to the checked address. Built once per process (loading is slow)."""
    context = httpx.create_ssl_context(trust_env=False)
    if ca_file:
        context.load_verify_locations(cafile=ca_file)
    return context


def client(timeout: float, ca_file: str | None = None) -> httpx.AsyncClient:
    """A client for one delivery run: no redirects, no proxies from the environment."""
    return httpx.AsyncClient(
        follow_redirects=False,
        trust_env=False,
        timeout=timeout,
        verify=tls_context(ca_file),
        headers={"User-Agent": USER_AGENT},
    )


def _scrubbed(message: str, host: str, address: str) -> str:
    """An error message without the address a host *name* resolved to (the log must not show
    where internal names point); the name stands in its place."""
    if address and host and literal(host) is None:
        message = message.replace(address, host)
    return message


def _text(data: bytes) -> str:
    # The start of an answer may cut a character in two; NUL cannot be stored in PostgreSQL.
    return data[:BODY_LIMIT].decode("utf-8", errors="replace").replace("\x00", "\ufffd")


async def post(
    http: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    timeout: float,  # noqa: ASYNC109  (bounds resolution, connection and answer together)
    allow_private: bool,
    addresses: dict[tuple[str, int], tuple[str, float]] | None = None,
) -> Answer:
    """POSTs ``body`` to ``url``; never raises for anything the receiver or network does.
    ``addresses`` keeps checked addresses for ``RESOLVED_SECONDS`` (one delivery run)."""
    started = time.monotonic()
    host, address = "", ""

    def answer(status: int | None, text: str | None, error: str | None) -> Answer:
        return Answer(status, text, error, int((time.monotonic() - started) * 1000))

    try:
        target = httpx.URL(url)
        host = target.raw_host.decode("ascii")
        port = target.port or (443 if target.scheme == "https" else 80)
        async with asyncio.timeout(timeout):
            cached = addresses.get((host, port)) if addresses is not None else None
            if cached is not None and cached[1] > time.monotonic():
                address = cached[0]
            else:
                address = await resolve(host, port, allow_private=allow_private)
                if addresses is not None:
                    addresses[(host, port)] = (address, time.monotonic() + RESOLVED_SECONDS)
            request = http.build_request(
                "POST",
                target.copy_with(host=address),
                content=body,
                headers={**headers, "Host": target.netloc.decode("ascii")},
                extensions={"sni_hostname": host} if target.scheme == "https" else {},
            )
            response = await http.send(request, stream=True, follow_redirects=False)
            data = bytearray()
            try:
                async for chunk in response.aiter_bytes():
                    data += chunk
                    if len(data) >= BODY_LIMIT:
                        break
            finally:
                await response.aclose()
    except Refused as exc:
        return answer(None, None, str(exc))
    except TimeoutError:
        return answer(None, None, f"No answer within {timeout:g} s.")
    except (httpx.HTTPError, httpx.InvalidURL, OSError, UnicodeError, ValueError) as exc:
        return answer(None, None, _scrubbed(f"{type(exc).__name__}: {exc}", host, address)[:500])
    return answer(response.status_code, _text(bytes(data)), None)
