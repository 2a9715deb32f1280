"""Device and gate shapes: the organizer's device resource and the device's own calls."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, StringConstraints

from admit.auth.devices import SECURITY_PROFILES
from admit.kit.resources.schema import Pk, ReadModel, WriteModel

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=190)]
HardwareText = Annotated[str, Field(max_length=190)] | None


def _check_profile(value: str) -> str:
    if value not in SECURITY_PROFILES:
        raise ValueError(f'"{value}" is not a valid choice.')
    return value


SecurityProfile = Annotated[str, AfterValidator(_check_profile)]

_PEM_RE = re.compile(
    r"^-----BEGIN (RSA )?PUBLIC KEY-----\s*([A-Za-z0-9+/=\s]+?)\s*"
    r"-----END (RSA )?PUBLIC KEY-----\s*$"
)


def _check_pubkey(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    match = _PEM_RE.match(value.strip())
    if match is None:
        raise ValueError("Not a valid PEM-encoded public key.")
    try:
        base64.b64decode("".join(match.group(2).split()), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("Not a valid PEM-encoded public key.") from None
    return value.strip() + "\n"


PublicKey = Annotated[str | None, Field(max_length=8192), AfterValidator(_check_pubkey)]


class DeviceOut(ReadModel):
    device_id: int
    unique_serial: str
    initialization_token: str
    all_events: bool
    limit_events: list[str]
    revoked: bool
    name: str
    created: dt.datetime
    initialized: dt.datetime | None
    security_profile: str
    hardware_brand: str | None
    hardware_model: str | None
    os_name: str | None
    os_version: str | None
    software_brand: str | None
    software_version: str | None
    # Admit extension: the gate the device stands at (recorded on its check-ins).
    gate: int | None


class DeviceIn(WriteModel):
    name: Name
    all_events: bool = False
    limit_events: list[Annotated[str, Field(max_length=50)]] = []
    security_profile: SecurityProfile = "full"
    gate: Pk | None = None
    # Revocation is one-way: true revokes; false is only accepted while not revoked.
    revoked: bool | None = None


class GateOut(ReadModel):
    id: int
    name: str
    identifier: str


class GateIn(WriteModel):
    name: Name
    identifier: Annotated[str, Field(max_length=190)] = ""


class HardwareIn(WriteModel):
    """What a device reports about itself (on initialization and on updates)."""

    hardware_brand: HardwareText = None
    hardware_model: HardwareText = None
    os_name: HardwareText = None
    os_version: HardwareText = None
    software_brand: HardwareText = None
    software_version: HardwareText = None
    info: dict[str, Any] | None = None


class InitializeIn(HardwareIn):
    token: Annotated[str, Field(min_length=1, max_length=64)]
    rsa_pubkey: PublicKey = None


class GateRef(ReadModel):
    id: int
    name: str


class DeviceAuthOut(ReadModel):
    """The answer to initialize, update and roll (and ``device`` in device/info)."""

    organizer: str
    device_id: int
    unique_serial: str
    api_token: str
    name: str
    security_profile: str
    gate: GateRef | None


class VersionOut(ReadModel):
    pretix: str
    pretix_numeric: int
    admit: str


class ServerOut(ReadModel):
    version: VersionOut


class DeviceInfoOut(ReadModel):
    device: DeviceAuthOut
    server: ServerOut
    medium_key_sets: list[dict[str, Any]]
