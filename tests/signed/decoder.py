"""A stand-alone verifier of ``pretix_sig1`` ticket secrets, written from the wire format in
issue 29 and nothing of Admit's code: what a scanner does offline.

Undo the reversal, base64-decode, read the header (version byte 0x01, payload length and
signature length as unsigned 16-bit big-endian), verify the Ed25519 signature of the payload
with a public key as the event's ``valid_keys`` publishes it (base64 of the PEM
SubjectPublicKeyInfo), then read the protobuf ``Ticket`` message by hand (varints and
length-delimited fields).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key


class Rejected(Exception):
    """The secret is not a valid signed ticket; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Ticket:
    seed: str
    item: int
    variation: int
    subevent: int
    valid_from: int | None
    valid_until: int | None


def public_key(published: str) -> Ed25519PublicKey:
    key = load_pem_public_key(base64.b64decode(published))
    assert isinstance(key, Ed25519PublicKey)
    return key


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise Rejected("payload")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def _message(data: bytes) -> Ticket:
    fields: dict[int, object] = {}
    at = 0
    while at < len(data):
        tag, at = _varint(data, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, at = _varint(data, at)
            if value >= 1 << 63:  # int64 two's complement
                value -= 1 << 64
            fields[number] = value
        elif wire == 2:
            length, at = _varint(data, at)
            fields[number] = data[at : at + length].decode("utf-8")
            at += length
        else:
            raise Rejected("payload")
    return Ticket(
        seed=str(fields.get(1, "")),
        item=int(fields.get(2, 0)),  # type: ignore[call-overload]
        variation=int(fields.get(3, 0)),  # type: ignore[call-overload]
        subevent=int(fields.get(4, 0)),  # type: ignore[call-overload]
        valid_from=fields.get(5),  # type: ignore[arg-type]
        valid_until=fields.get(6),  # type: ignore[arg-type]
    )


def decode(secret: str, key: Ed25519PublicKey) -> Ticket:
    """The ticket a secret certifies; :class:`Rejected` when it is not one signed by ``key``."""
    try:
        raw = base64.b64decode(secret[::-1], validate=True)
    except (binascii.Error, ValueError):
        raise Rejected("encoding") from None
    if len(raw) < 5 or raw[0] != 0x01:
        raise Rejected("version")
    payload_length = int.from_bytes(raw[1:3], "big")
    signature_length = int.from_bytes(raw[3:5], "big")
    if len(raw) != 5 + payload_length + signature_length:
        raise Rejected("length")
    payload = raw[5 : 5 + payload_length]
    signature = raw[5 + payload_length :]
    try:
        key.verify(signature, payload)
    except InvalidSignature:
        raise Rejected("signature") from None
    return _message(payload)
