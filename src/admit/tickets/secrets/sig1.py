"""The ``pretix_sig1`` wire format: a protobuf ``Ticket`` payload signed with Ed25519.

The payload is the message ``Ticket { string seed = 1; int64 item = 2; int64 variation = 3;
int64 subevent = 4; optional int64 validFromUnixTime = 5; optional int64 validUntilUnixTime =
6; }`` (0 = none), encoded by the ``protobuf`` package from a descriptor built here (no
generated code to keep in step). The secret is the byte ``0x01``, the payload's and the
signature's lengths (unsigned 16-bit big-endian), the payload and the signature, base64
encoded, the whole text reversed: exactly what the reference's scanner library decodes.
"""

from __future__ import annotations

import base64
import datetime as dt
import struct
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

SCHEME = "pretix_sig1"
VERSION = 0x01
SEED_LENGTH = 9
# The reference's library misreads length fields past one byte: keep payloads below this.
MAX_PAYLOAD = 255
_HEADER = struct.Struct(">BHH")


def _ticket_class() -> Any:
    """The ``Ticket`` message class, from a descriptor in a pool of its own."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="admit_pretix_sig1.proto", package="admit.pretix_sig1", syntax="proto3"
    )
    message = proto.message_type.add(name="Ticket")
    int64 = descriptor_pb2.FieldDescriptorProto.TYPE_INT64
    optional = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    message.field.add(
        name="seed", number=1, label=optional, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING
    )
    for number, name in ((2, "item"), (3, "variation"), (4, "subevent")):
        message.field.add(name=name, number=number, label=optional, type=int64)
    for number, name in ((5, "validFromUnixTime"), (6, "validUntilUnixTime")):
        # proto3 ``optional``: a synthetic one-field oneof gives the field presence.
        message.oneof_decl.add(name=f"_{name}")
        message.field.add(
            name=name,
            number=number,
            label=optional,
            type=int64,
            oneof_index=len(message.oneof_decl) - 1,
            proto3_optional=True,
        )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("admit.pretix_sig1.Ticket"))


Ticket = _ticket_class()


def _unix(moment: dt.datetime | None) -> int | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return int(moment.timestamp())


def payload(
    seed: str,
    item: int,
    variation: int | None,
    subevent: int | None,
    valid_from: dt.datetime | None,
    valid_until: dt.datetime | None,
) -> bytes:
    """The encoded ``Ticket`` message."""
    ticket = Ticket(seed=seed, item=item, variation=variation or 0, subevent=subevent or 0)
    start, end = _unix(valid_from), _unix(valid_until)
    if start is not None:
        ticket.validFromUnixTime = start
    if end is not None:
        ticket.validUntilUnixTime = end
    return bytes(ticket.SerializeToString())


def sign(key: Ed25519PrivateKey, data: bytes) -> str:
    """The secret for ``data`` (a payload) signed with ``key``."""
    if len(data) > MAX_PAYLOAD:
        raise ValueError("pretix_sig1 payloads must stay below 256 bytes")
    signature = key.sign(data)
    raw = _HEADER.pack(VERSION, len(data), len(signature)) + data + signature
    return base64.b64encode(raw).decode("ascii")[::-1]
