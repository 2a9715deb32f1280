"""Devices written straight to the database, and the ``Authorization: Device`` header."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import func, insert, select

from admit.auth.credentials import generate_token, hash_token
from admit.db import utcnow
from admit.devices.service import new_initialization_token, new_serial
from admit.models import Device, Event, Organizer, device_limit_events
from tests.factories import Factory


async def make_device(
    factory: Factory,
    organizer: Organizer,
    *,
    name: str = "Scanner",
    all_events: bool = True,
    events: Iterable[Event] = (),
    profile: str = "full",
    revoked: bool = False,
    initialized: bool = True,
    gate_id: int | None = None,
) -> tuple[Device, str]:
    """A device of ``organizer`` and its API token (initialized unless told otherwise)."""
    token = generate_token()
    async with factory.sessionmaker() as session:
        last = await session.scalar(
            select(func.max(Device.device_id)).where(Device.organizer_id == organizer.id)
        )
        device = Device(
            organizer_id=organizer.id,
            device_id=(last or 0) + 1,
            unique_serial=new_serial(),
            initialization_token=new_initialization_token(),
            name=name,
            all_events=all_events,
            security_profile=profile,
            revoked=revoked,
            initialized=utcnow() if initialized else None,
            api_token_hash=hash_token(token) if initialized else None,
            gate_id=gate_id,
        )
        session.add(device)
        await session.flush()
        for event in events:
            await session.execute(
                insert(device_limit_events).values(device_id=device.id, event_id=event.id)
            )
        await session.commit()
    return device, token


def device_auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Device {token}"}
