"""Device rules: numbering, one-time initialization, token roll and revocation.

Every change of a device's credential is one conditional UPDATE: two scanners racing with the
same initialization token cannot both get an API token, and a rolled or revoked token stops
working the moment the statement commits (authentication reads the row on every request).
"""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit import __version__
from admit.audit.log import record
from admit.auth.credentials import generate_token, hash_token
from admit.devices.schemas import DeviceIn, HardwareIn, InitializeIn
from admit.kit.http.context import unauthenticated
from admit.kit.http.errors import FieldErrors
from admit.models import Device, Gate, Organizer
from admit.teams.service import resolve_events

# Serials are read aloud and typed: no 0/O, 1/I/L.
SERIAL_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
INIT_TOKEN_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
HARDWARE_FIELDS = (
    "hardware_brand",
    "hardware_model",
    "os_name",
    "os_version",
    "software_brand",
    "software_version",
)

# The pretix API level Admit answers like; scanner apps switch features on this number.
COMPATIBLE_PRETIX_VERSION = (2026, 8, 0)


def _random(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def new_serial() -> str:
    return _random(SERIAL_ALPHABET, 16)


def new_initialization_token() -> str:
    return _random(INIT_TOKEN_ALPHABET, 16)


def server_version() -> dict[str, Any]:
    major, minor, patch = COMPATIBLE_PRETIX_VERSION
    return {
        "pretix": f"{major}.{minor}.{patch}",
        "pretix_numeric": major * 10**10 + minor * 10**7 + patch * 10**4,
        "admit": __version__,
    }


DEVICE_LOAD = (selectinload(Device.limit_events),)


def device_to_read(device: Device) -> dict[str, Any]:
    return {
        "device_id": device.device_id,
        "unique_serial": device.unique_serial,
        "initialization_token": device.initialization_token,
        "all_events": device.all_events,
        "limit_events": [e.slug for e in device.limit_events],
        "revoked": device.revoked,
        "name": device.name,
        "created": device.created,
        "initialized": device.initialized,
        "security_profile": device.security_profile,
        **{f: getattr(device, f) for f in HARDWARE_FIELDS},
        "gate": device.gate_id,
    }


async def _lock_organizer(session: AsyncSession, organizer_id: int) -> None:
    """Serialises device numbering per organizer (SQLite writers are serial already)."""
    await session.execute(
        # FOR NO KEY UPDATE: serialises these writers without blocking inserts elsewhere
        # that merely reference the organizer (foreign keys take FOR KEY SHARE).
        select(Organizer.id).where(Organizer.id == organizer_id).with_for_update(key_share=True)
    )


async def _gate(session: AsyncSession, organizer_id: int, gate_id: int | None) -> Gate | None:
    if gate_id is None:
        return None
    gate = (
        await session.execute(
            select(Gate).where(Gate.id == gate_id, Gate.organizer_id == organizer_id)
        )
    ).scalar_one_or_none()
    if gate is None:
        raise FieldErrors.single("gate", f'Invalid pk "{gate_id}" - object does not exist.')
    return gate


async def create_device(session: AsyncSession, organizer_id: int, data: DeviceIn) -> Device:
    events = await resolve_events(session, organizer_id, data.limit_events)
    gate = await _gate(session, organizer_id, data.gate)
    await _lock_organizer(session, organizer_id)
    last = await session.scalar(
        select(func.max(Device.device_id)).where(Device.organizer_id == organizer_id)
    )
    device = Device(
        organizer_id=organizer_id,
        device_id=(last or 0) + 1,
        unique_serial=new_serial(),
        initialization_token=new_initialization_token(),
        name=data.name,
        all_events=data.all_events,
        security_profile=data.security_profile,
        gate_id=gate.id if gate else None,
        limit_events=events,
    )
    session.add(device)
    await session.flush()
    return device


async def update_device(
    session: AsyncSession, organizer_id: int, device: Device, data: DeviceIn
) -> None:
    if device.revoked and data.revoked is False:
        raise FieldErrors.single("revoked", "A revoked device cannot be reactivated.")
    events = await resolve_events(session, organizer_id, data.limit_events)
    gate = await _gate(session, organizer_id, data.gate)
    device.name = data.name
    device.all_events = data.all_events
    device.limit_events = events
    device.security_profile = data.security_profile
    device.gate_id = gate.id if gate else None
    if data.revoked:
        device.revoked = True
    await session.flush()


# -- the device's own calls ------------------------------------------------------------------


async def auth_response(session: AsyncSession, device_pk: int, token: str) -> dict[str, Any]:
    """What initialize, update, roll, revoke and info tell the device about itself."""
    row = (
        await session.execute(
            select(Device, Organizer.slug, Gate.name)
            .join(Organizer, Organizer.id == Device.organizer_id)
            .outerjoin(Gate, Gate.id == Device.gate_id)
            .where(Device.id == device_pk)
            .execution_options(populate_existing=True)
        )
    ).one()
    device, organizer_slug, gate_name = row
    return {
        "organizer": organizer_slug,
        "device_id": device.device_id,
        "unique_serial": device.unique_serial,
        "api_token": token,
        "name": device.name,
        "security_profile": device.security_profile,
        "gate": {"id": device.gate_id, "name": gate_name} if device.gate_id else None,
    }


def _reported(data: HardwareIn, supplied: set[str]) -> dict[str, Any]:
    values = {f: getattr(data, f) for f in HARDWARE_FIELDS if f in supplied}
    if "info" in supplied:
        values["info"] = data.info
    return values


async def initialize(
    session: AsyncSession, data: InitializeIn, supplied: set[str], now: Any
) -> dict[str, Any]:
    """Trades the one-time token for an API token; exactly one caller can win a token."""
    token = generate_token()
    values = _reported(data, supplied)
    if data.rsa_pubkey is not None:
        values["rsa_pubkey"] = data.rsa_pubkey
    result = await session.execute(
        update(Device)
        .where(
            Device.initialization_token == data.token,
            Device.initialized.is_(None),
            Device.revoked.is_(False),
        )
        .values(initialized=now, api_token_hash=hash_token(token), **values)
        .returning(Device.id, Device.organizer_id)
        .execution_options(synchronize_session=False)
    )
    row = result.first()
    if row is None:
        raise FieldErrors.single("token", await _why_not_initializable(session, data.token))
    pk = row[0]
    await record(session, "device", pk, row[1], ["initialized", "api_token_hash", *values],
                 actor=("device", pk))  # fmt: skip
    return await auth_response(session, pk, token)


async def _why_not_initializable(session: AsyncSession, token: str) -> str:
    row = (
        await session.execute(
            select(Device.initialized, Device.revoked).where(Device.initialization_token == token)
        )
    ).first()
    if row is None:
        return "Unknown initialization token."
    if row.revoked:
        return "This device has been revoked."
    return "This initialization token has already been used."


async def report_hardware(
    session: AsyncSession, device_pk: int, token: str, data: HardwareIn, supplied: set[str]
) -> dict[str, Any]:
    values = _reported(data, supplied)
    if values:
        result = await session.execute(
            update(Device)
            .where(Device.id == device_pk, Device.revoked.is_(False))
            .values(**values)
            .returning(Device.organizer_id)
            .execution_options(synchronize_session=False)
        )
        organizer_id = result.scalar_one_or_none()
        if organizer_id is None:
            raise unauthenticated("Device access has been revoked.")
        await record(session, "device", device_pk, organizer_id, list(values),
                     actor=("device", device_pk))  # fmt: skip
    return await auth_response(session, device_pk, token)


async def roll_token(session: AsyncSession, device_pk: int, old_token: str) -> dict[str, Any]:
    """A new API token; the old one is dead once this commits (also for a racing roll)."""
    token = generate_token()
    result = await session.execute(
        update(Device)
        .where(
            Device.id == device_pk,
            Device.api_token_hash == hash_token(old_token),
            Device.revoked.is_(False),
        )
        .values(api_token_hash=hash_token(token))
        .returning(Device.organizer_id)
        .execution_options(synchronize_session=False)
    )
    organizer_id = result.scalar_one_or_none()
    if organizer_id is None:
        raise unauthenticated("Invalid token.")
    await record(session, "device", device_pk, organizer_id, ["api_token_hash"],
                 actor=("device", device_pk))  # fmt: skip
    return await auth_response(session, device_pk, token)


async def revoke(session: AsyncSession, device_pk: int, token: str) -> dict[str, Any]:
    result = await session.execute(
        update(Device)
        .where(Device.id == device_pk)
        .values(revoked=True)
        .returning(Device.organizer_id)
        .execution_options(synchronize_session=False)
    )
    organizer_id = result.scalar_one_or_none()
    if organizer_id is not None:
        await record(session, "device", device_pk, organizer_id, ["revoked"],
                     actor=("device", device_pk))  # fmt: skip
    return await auth_response(session, device_pk, token)
