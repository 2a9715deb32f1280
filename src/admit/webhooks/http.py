"""One guarded POST to a receiver: resolved once, checked, connected to the checked address.

The target's host name is resolved here and every address it resolves to must be public
(unless ``webhook_allow_private``); the request then goes to the first address itself (the
name stays in the ``Host`` header and, for https, in SNI and the certificate check), so a
second lookup cannot point the connection somewhere else. Redirects are not followed, the
whole exchange is bounded by the timeout, and at most 1 KB of the answer is read.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from dataclasses import dataclass

import httpx

from admit import __version__

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


class Refused(Exception):
    """The target may not be called (a non-public address, a name that does not resolve)."""


def client(timeout: float) -> httpx.AsyncClient:
    """A client for one delivery run: no redirects, no proxies from the environment."""
    return httpx.AsyncClient(
        follow_redirects=False,
        trust_env=False,
        timeout=timeout,
        headers={"User-Agent": USER_AGENT},
    )


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


async def resolve(host: str, port: int, *, allow_private: bool) -> str:
    """The address to connect to; Refused when it (or any other address of the name) is
    not public and private targets are not allowed."""
    try:
        candidates = [(str(ipaddress.ip_address(host)), ipaddress.ip_address(host))]
    except ValueError:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
        except (OSError, UnicodeError) as exc:
            raise Refused(f"The host {host} could not be resolved ({exc}).") from None
        candidates = []
        for info in infos:
            raw = str(info[4][0])
            try:
                candidates.append((raw, ipaddress.ip_address(raw.split("%")[0])))
            except ValueError:
                continue
    if not candidates:
        raise Refused(f"The host {host} has no usable address.")
    if not allow_private:
        for _, address in candidates:
            if not is_public(address):
                raise Refused(
                    f"The host {host} resolves to {address}, which is not a public address; "
                    "refused (ADMIT_WEBHOOK_ALLOW_PRIVATE allows it)."
                )
    return candidates[0][0]


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
        return answer(None, None, f"{type(exc).__name__}: {exc}"[:500])
    return answer(response.status_code, _text(bytes(data)), None)
