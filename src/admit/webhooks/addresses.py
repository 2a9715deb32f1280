"""Which addresses a webhook may be sent to, checked when a webhook is saved and again, on the
address the connection will use, when a call is sent.

Refused unless ``webhook_allow_private``: every address that is not globally reachable
(loopback, private, link-local, shared, reserved, multicast) and every IPv6 form that carries
an IPv4 address inside it (NAT64, 6to4, Teredo, IPv4-mapped and IPv4-compatible): a gateway
or the host's own stack may turn those into a connection to the embedded IPv4 address, which
the IPv6 address alone does not show.

Messages about a host *name* never say what it resolved to: the delivery log and the API
answer are read by people who should not learn the layout of the network Admit runs in.
No HTTP library is imported here (API processes check targets without loading one).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

SETTING = "ADMIT_WEBHOOK_ALLOW_PRIVATE"
# IPv6 ranges whose addresses embed an IPv4 address (RFC 6052, 8215, 3056, 4380, 4291).
EMBEDDING_IPV4 = tuple(
    ipaddress.IPv6Network(n)
    for n in (
        "64:ff9b::/96",  # NAT64, well-known prefix
        "64:ff9b:1::/48",  # NAT64, local-use prefix
        "2002::/16",  # 6to4
        "2001::/32",  # Teredo
        "::ffff:0:0/96",  # IPv4-mapped
        "::/96",  # IPv4-compatible (deprecated), also :: and ::1
    )
)
# Python's is_global misses a few (it depends on the version): refused explicitly.
NOT_GLOBAL_V4 = tuple(
    ipaddress.IPv4Network(n) for n in ("0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "240.0.0.0/4")
)


class Refused(Exception):
    """The target may not be called (a non-public address, a name that does not resolve)."""


def is_public(address: Address) -> bool:
    """Whether ``address`` may be called without ``webhook_allow_private``."""
    if isinstance(address, ipaddress.IPv6Address):
        if any(address in network for network in EMBEDDING_IPV4):
            return False
    elif any(address in network for network in NOT_GLOBAL_V4):
        return False
    return address.is_global and not address.is_multicast


def literal(host: str) -> Address | None:
    """The address a URL's host names literally (brackets and a zone allowed), else None."""
    text = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return None


def refusal(host: str, address: Address | None) -> str:
    """Why ``host`` is refused: the address when the URL names it, never one it resolved to."""
    if address is not None:
        what = f"{address} is not a public address"
    else:
        what = f"The host {host} resolves to an address that is not public"
    return (
        f"{what} (loopback, private, link-local, or an IPv6 form with an IPv4 address inside); "
        f"webhooks are not sent there unless {SETTING} is set."
    )


async def lookup(host: str, port: int) -> list[tuple[str, Address]]:
    """Every address ``host`` resolves to, as text to connect to and parsed; Refused when it
    does not resolve (the message does not repeat the resolver's details)."""
    found = literal(host)
    if found is not None:
        return [(str(found), found)]
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise Refused(f"The host {host} could not be resolved.") from None
    candidates = []
    for info in infos:
        raw = str(info[4][0])
        parsed = literal(raw)
        if parsed is not None:
            candidates.append((raw, parsed))
    if not candidates:
        raise Refused(f"The host {host} has no usable address.")
    return candidates


async def resolve(host: str, port: int, *, allow_private: bool) -> str:
    """The address to connect to (the first); Refused when any address of the name is not
    public and private targets are not allowed."""
    candidates = await lookup(host, port)
    if not allow_private:
        for _, address in candidates:
            if not is_public(address):
                raise Refused(refusal(host, literal(host)))
    return candidates[0][0]


async def check_on_save(host: str, port: int, *, allow_private: bool, seconds: float) -> None:
    """Refuses (Refused with the message for ``target_url``) a host that is or resolves to an
    address that is not public. A name that does not resolve within ``seconds`` (or at all)
    passes: it may exist later, and every call is checked again when it is sent."""
    if allow_private:
        return
    found = literal(host)
    if found is not None:
        if not is_public(found):
            raise Refused(refusal(host, found))
        return
    try:
        async with asyncio.timeout(seconds):
            candidates = await lookup(host, port)
    except (Refused, TimeoutError):
        return
    if any(not is_public(address) for _, address in candidates):
        raise Refused(refusal(host, None))
