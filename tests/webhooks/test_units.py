"""Pieces of the webhook machinery on their own: the address guard, action types, signatures,
backoff."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress

import pytest

from admit.webhooks.addresses import check_on_save, is_public
from admit.webhooks.http import Refused, resolve
from admit.webhooks.outcomes import MAX_DELAY_SECONDS, backoff
from admit.webhooks.schemas import check_action_type, check_target_url
from admit.webhooks.signing import signature_header

# IPv6 forms that carry an IPv4 address (here 127.0.0.1 or the public 93.184.216.34).
EMBEDDING = [
    "64:ff9b::7f00:1",  # NAT64
    "64:ff9b::5db8:d822",
    "64:ff9b:1::7f00:1",  # NAT64, local use
    "2002:7f00:1::1",  # 6to4
    "2002:5db8:d822::1",
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo
    "::ffff:93.184.216.34",  # IPv4-mapped
    "::7f00:1",  # IPv4-compatible
    "::5db8:d822",
]


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.1",
        "172.16.0.5",
        "169.254.169.254",
        "0.0.0.0",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",
        "224.0.0.1",
        "100.64.0.1",
        *EMBEDDING,
    ],
)
async def test_non_public_addresses_are_refused(host):
    with pytest.raises(Refused, match="not a public address") as refused:
        await resolve(host, 80, allow_private=False)
    assert "ADMIT_WEBHOOK_ALLOW_PRIVATE" in str(refused.value)
    with pytest.raises(Refused, match="not a public address"):
        await check_on_save(host, 80, allow_private=False, seconds=3)
    await check_on_save(host, 80, allow_private=True, seconds=3)


@pytest.mark.parametrize("host", EMBEDDING)
def test_ipv6_forms_embedding_a_public_ipv4_address_are_refused(host):
    """Even where the IPv4 address inside is public (Python calls some of them global)."""
    assert not is_public(ipaddress.ip_address(host))


async def test_a_name_is_refused_without_saying_what_it_resolves_to():
    for check in (
        resolve("localhost", 80, allow_private=False),
        check_on_save("localhost", 80, allow_private=False, seconds=3),
    ):
        with pytest.raises(Refused) as refused:
            await check
        message = str(refused.value)
        assert "localhost" in message and "not public" in message
        assert "127.0.0.1" not in message and "::1" not in message
    # A name that does not resolve passes when saved (it may exist later); not when sent.
    await check_on_save("no-such-host.invalid", 443, allow_private=False, seconds=3)
    with pytest.raises(Refused, match="could not be resolved"):
        await resolve("no-such-host.invalid", 443, allow_private=False)


async def test_public_and_allowed_private_addresses_pass():
    assert await resolve("93.184.216.34", 443, allow_private=False) == "93.184.216.34"
    assert await resolve("2606:4700::1111", 443, allow_private=False) == "2606:4700::1111"
    assert await resolve("127.0.0.1", 80, allow_private=True) == "127.0.0.1"
    assert await resolve("localhost", 80, allow_private=True) in ("127.0.0.1", "::1")


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("service.event.order.paid", "service.event.order.paid"),
        ("pretix.event.order.paid", "pretix.event.order.paid"),
        ("pretix.event.order.changed.*", "pretix.event.order.changed.*"),
        (" pretix.event.checkin ", "pretix.event.checkin"),
        ("pretix.*", "pretix.*"),
        ("service.event.order.changed.item", "service.event.order.changed.item"),
        ("service.event.*", "service.event.*"),
        ("service.giftcards.transaction.*", "service.giftcards.transaction.*"),
        ("service.*", "service.*"),
    ],
)
def test_action_types(value, stored):
    assert check_action_type(value) == stored


@pytest.mark.parametrize(
    "value", ["", "*", ".*", "pretix.*x", "service.event.order", "other.event.*", "service.ev.*"]
)
def test_unknown_action_types(value):
    with pytest.raises(ValueError):
        check_action_type(value)


@pytest.mark.parametrize(
    "value",
    ["https://example.org", "http://[2001:db8::1]:8080/x?y=1", "https://bücher.example/hook"],
)
def test_target_urls(value):
    assert check_target_url(value) == value


@pytest.mark.parametrize(
    "value", ["mailto:a@example.org", "https:///x", "http://exa\nmple.org/", "//example.org/"]
)
def test_bad_target_urls(value):
    with pytest.raises(ValueError):
        check_target_url(value)


def test_signature_header():
    body = b'{"a": 1}'
    header = signature_header(["new", "old"], 1700000000, body)
    expected = [
        hmac.new(key, b"1700000000." + body, hashlib.sha256).hexdigest() for key in (b"new", b"old")
    ]
    assert header == f"t=1700000000,v1={expected[0]},v1={expected[1]}"


def test_backoff_doubles_with_jitter_and_is_capped():
    for failures, low, high in [(1, 30, 60), (2, 60, 120), (5, 480, 960)]:
        assert all(low <= backoff(60, failures) <= high for _ in range(50))
    assert MAX_DELAY_SECONDS / 2 <= backoff(60, 40) <= MAX_DELAY_SECONDS
    assert backoff(0.01, 1) <= 0.01
