"""Access dependencies for the device's own calls (``/api/v1/device/...``).

:class:`DeviceAccess` admits only a device token; a team token is authenticated (so a bad one
is still 401) and then refused with 403. :class:`NoCredentials` marks the one route that is
reached before a device has a token: initialization, authenticated by the one-time token in
its body. The generated access tests know both.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.device_auth import DeviceIdentity, request_device
from admit.kit.http.context import Authenticated, Principal, Session, authenticate
from admit.kit.http.errors import forbidden


@dataclass
class DeviceContext:
    request: Request
    session: AsyncSession
    principal: Principal
    device: DeviceIdentity


class DeviceAccess(Authenticated):
    """The caller must be a device (any security profile); its identity is handed on."""

    # Not a team permission: a marker that team tokens are refused (403).
    permission = "device"
    scope = "device"

    async def __call__(self, request: Request, session: Session) -> DeviceContext:  # type: ignore[override]
        principal = await authenticate(request, session)
        device = request_device(request)
        if principal.kind != "device" or device is None:
            raise forbidden()
        return DeviceContext(request=request, session=session, principal=principal, device=device)


class NoCredentials:
    """No ``Authorization`` needed (or looked at): device initialisation (the body carries a
    one-time secret) and the public media URLs of used uploads (the unguessable URL is the
    secret)."""

    permission: str | None = None
    scope = "public"

    async def __call__(self, session: Session) -> AsyncSession:
        return session
