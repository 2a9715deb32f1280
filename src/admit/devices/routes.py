"""Devices: ``O/devices/`` and ``O/gates/`` for the organizer's staff, and the device's own
calls ``/api/v1/device/{initialize,info,update,roll,revoke}``.

Staff read devices with ``organizer.devices:read`` and change them with
``organizer.devices:write``; devices are addressed by their organizer-internal ``device_id``
and are never deleted (revoke them instead), as the reference does.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.db import utcnow
from admit.devices import service
from admit.devices.access import DeviceAccess, DeviceContext, NoCredentials
from admit.devices.schemas import (
    DeviceAuthOut,
    DeviceIn,
    DeviceInfoOut,
    DeviceOut,
    GateIn,
    GateOut,
    HardwareIn,
    InitializeIn,
)
from admit.kit.http.body import read_object
from admit.kit.http.context import OrgContext
from admit.kit.http.errors import not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import API_PREFIX, api_router
from admit.kit.idempotency.secret import secret_bearing
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import Resource, flush_guard, mount_crud, validate_input
from admit.kit.resources.filtering import Filter, FilterSet, Ordering, parse_pk
from admit.models import Device, Gate

READ = "organizer.devices:read"
WRITE = "organizer.devices:write"

router = api_router()
# Answers with the device's API token (kit/idempotency/secret: no stored answers).
secret_bearing("POST", f"{API_PREFIX}/device/initialize")
secret_bearing("POST", f"{API_PREFIX}/device/roll")


class DeviceResource(Resource[Device]):
    name = "devices"
    path = "/organizers/{organizer}/devices"
    model = Device
    scope = "organizer"
    read_schema = DeviceOut
    write_schema = DeviceIn
    read_permission = READ
    write_permission = WRITE
    actions = frozenset({"list", "retrieve", "create", "update"})
    filters = FilterSet((Filter.boolean("revoked", Device.revoked),))
    ordering = Ordering(
        fields={"device_id": Device.device_id, "name": Device.name},
        default=("device_id",),
        pk=Device.id,
    )
    loader_options = service.DEVICE_LOAD

    async def get_object(self, ctx: OrgContext, raw_pk: str) -> Device:
        # URLs carry the organizer-internal device_id, not the row id.
        query = (
            self.base_query(ctx)
            .where(Device.device_id == parse_pk(raw_pk))
            .options(*self.loader_options)
            .execution_options(populate_existing=True)
        )
        device = (await ctx.session.execute(query)).scalars().first()
        if device is None:
            raise not_found()
        return device

    async def reload(self, ctx: OrgContext, obj: Device) -> Device:
        return await self.get_object(ctx, str(obj.device_id))

    def to_read(self, ctx: OrgContext, obj: Device) -> Any:
        return service.device_to_read(obj)

    async def perform_create(self, ctx: OrgContext, data: BaseModel, supplied: set[str]) -> Device:
        assert isinstance(data, DeviceIn)
        return await service.create_device(ctx.session, ctx.organizer_id, data)

    async def perform_update(
        self, ctx: OrgContext, obj: Device, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, DeviceIn)
        await service.update_device(ctx.session, ctx.organizer_id, obj, data)


class GateResource(Resource[Gate]):
    name = "gates"
    path = "/organizers/{organizer}/gates"
    model = Gate
    scope = "organizer"
    read_schema = GateOut
    write_schema = GateIn
    read_permission = READ
    write_permission = WRITE
    ordering = Ordering(
        fields={"id": Gate.id, "name": Gate.name, "identifier": Gate.identifier},
        default=("id",),
        pk=Gate.id,
    )


mount_crud(router, DeviceResource())
mount_crud(router, GateResource())


# -- the device's own calls ------------------------------------------------------------------

DeviceCtx = Annotated[DeviceContext, Depends(DeviceAccess())]


@router.post(
    "/device/initialize",
    tags=["device"],
    response_model=DeviceAuthOut,
    openapi_extra=json_body(InitializeIn),
)
async def initialize_device(
    request: Request, session: Annotated[AsyncSession, Depends(NoCredentials())]
) -> Response:
    """Trades the one-time initialization token (and hardware details) for an API token."""
    raw = await read_object(request)
    data = validate_input(InitializeIn, raw)
    assert isinstance(data, InitializeIn)
    supplied = set(raw) & set(InitializeIn.model_fields)
    body = await flush_guard(service.initialize(session, data, supplied, utcnow()))
    return JSONResponse(body)


@router.get("/device/info", tags=["device"], response_model=DeviceInfoOut)
async def device_info(ctx: DeviceCtx) -> Response:
    """The device's own record and the API level of the server."""
    device = await service.auth_response(ctx.session, ctx.device.pk, ctx.device.token)
    server = {"version": service.server_version()}
    return JSONResponse({"device": device, "server": server, "medium_key_sets": []})


@router.post(
    "/device/update",
    tags=["device"],
    response_model=DeviceAuthOut,
    openapi_extra=json_body(HardwareIn),
)
async def update_device(ctx: DeviceCtx) -> Response:
    """Records new hardware / software versions the device reports (the fields sent)."""
    raw = await read_object(ctx.request)
    data = validate_input(HardwareIn, raw)
    assert isinstance(data, HardwareIn)
    supplied = set(raw) & set(HardwareIn.model_fields)
    body = await service.report_hardware(
        ctx.session, ctx.device.pk, ctx.device.token, data, supplied
    )
    return JSONResponse(body)


@router.post("/device/roll", tags=["device"], response_model=DeviceAuthOut)
async def roll_device_token(ctx: DeviceCtx) -> Response:
    """A new API token; the one used for this call stops working at once."""
    body = await service.roll_token(ctx.session, ctx.device.pk, ctx.device.token)
    return JSONResponse(body)


@router.post("/device/revoke", tags=["device"], response_model=DeviceAuthOut)
async def revoke_device(ctx: DeviceCtx) -> Response:
    """The device gives up its access for good (e.g. when it is deprovisioned)."""
    body = await service.revoke(ctx.session, ctx.device.pk, ctx.device.token)
    return JSONResponse(body)
