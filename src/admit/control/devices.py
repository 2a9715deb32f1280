"""The organizer's scanner devices: the list, a new device (its pairing QR code shown until
a scanner app initialized it), and revoking one. Creating and revoking are the API's device
resource handlers (``handle_create``, ``handle_update`` with ``revoked: true``); the QR code
carries the reference's handshake payload, built by the ``admit device create`` command's own
``handshake`` and drawn as SVG by segno."""

from __future__ import annotations

import io
import json
from typing import Any

import segno
from fastapi import APIRouter
from sqlalchemy import select
from starlette.responses import Response

from admit.auth.devices import SECURITY_PROFILES
from admit.control.access import control_page
from admit.control.api_call import Errors, run, with_body
from admit.control.editing import found, list_page, no_such, resource
from admit.control.export_forms import named_choices
from admit.control.fields import Field, as_id, defaults, to_body, typed
from admit.control.history import audit_history
from admit.control.nav import organizer_nav
from admit.control.render import render
from admit.devices.cli import handshake
from admit.devices.routes import READ, WRITE
from admit.kit.http.context import OrganizerAccess, OrgContext, public_base_url
from admit.kit.resources.crud import Resource
from admit.models import Device, Gate
from admit.web.forms import Pairs
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
PATH = "/control/organizer/{organizer}/devices"
DEVICES: Resource[Any] = resource("devices")


def base(ctx: OrgContext) -> str:
    return f"/control/organizer/{ctx.organizer_slug}/devices/"


async def device_fields(ctx: OrgContext) -> list[Field]:
    gates = await ctx.session.execute(
        select(Gate.id, Gate.name).where(Gate.organizer_id == ctx.organizer_id).order_by(Gate.id)
    )
    events = await named_choices(ctx, "events") or []
    return [
        Field("name", "Name", required=True, help="E.g. Front door scanner."),
        Field("all_events", "Every event (also those created later)", "bool", default=True),
        Field("limit_events", "Or only these events", "multi", choices=events),
        Field("security_profile", "What the device may do", "select", required=True,
              default="pretixscan",
              choices=[(p, {"full": "everything a device may", "pretixscan": "scan tickets "
                        "(offline capable)", "pretixscan_online_kiosk": "scan tickets online "
                        "(kiosk)"}.get(p, p)) for p in SECURITY_PROFILES]),
        Field("gate", "Gate", "select", choices=[(str(i), n) for i, n in gates]),
    ]  # fmt: skip


def pairing(ctx: OrgContext, device: dict[str, Any]) -> str:
    """The QR code's text: what a scanner app reads to pair with this device."""
    url = public_base_url(ctx.request).rstrip("/")
    return json.dumps(handshake(url, device["initialization_token"]), separators=(",", ":"))


def pairable(device: dict[str, Any]) -> bool:
    return not device["revoked"] and device["initialized"] is None


@router.get(PATH + "/")
@control_page(OrganizerAccess(READ))
async def devices(page: Page, ctx: OrgContext) -> Response:
    return await list_page(page, ctx, DEVICES, "devices.html", "devices", base(ctx),
                           may_write=ctx.has_organizer_permission(WRITE))  # fmt: skip


async def _form(page: Page, ctx: OrgContext, values: dict[str, Any], errors: Errors,
                status: int = 200) -> Response:  # fmt: skip
    return render(page, "device_new.html", status, nav=await organizer_nav(page, ctx, "devices"),
                  fields=await device_fields(ctx), values=values, errors=errors,
                  base=base(ctx))  # fmt: skip


@router.get(PATH + "/new")
@control_page(OrganizerAccess(WRITE))
async def device_new(page: Page, ctx: OrgContext) -> Response:
    return await _form(page, ctx, defaults(await device_fields(ctx)), {})


@router.post(PATH + "/new")
@control_page(OrganizerAccess(WRITE), form=True)
async def device_create(page: Page, ctx: OrgContext, pairs: Pairs) -> Response:
    fields = await device_fields(ctx)
    body = to_body(fields, pairs)
    if body.get("gate") is not None:
        body["gate"] = as_id(str(body["gate"]))

    async def work() -> Any:
        req = with_body(ctx, body)
        await DEVICES.prepare(req, {})
        return await DEVICES.handle_create(req)

    created, errors = await run(page, ctx, work)
    if errors:
        return await _form(page, ctx, typed(fields, pairs), errors, 400)
    page.web.flash("The device was created. Scan its QR code with the scanner app to pair it.")
    return page.redirect(f"{base(ctx)}{created['device_id']}/")


@router.get(PATH + "/{id}/")
@control_page(OrganizerAccess(READ))
async def device_page(page: Page, ctx: OrgContext, id: str) -> Response:
    device = await found(ctx, DEVICES, id)
    if device is None:
        return no_such(page, "device")
    return render(page, "device.html", nav=await organizer_nav(page, ctx, "devices"),
                  device=device, base=base(ctx), pairable=pairable(device),
                  server=public_base_url(ctx.request).rstrip("/"),
                  may_write=ctx.has_organizer_permission(WRITE),
                  history=await audit_history(ctx, "device", await _pk(ctx, device)))  # fmt: skip


async def _pk(ctx: OrgContext, device: dict[str, Any]) -> int:
    """The row's id (the audit log's), which the API's ``device_id`` (per organizer) is not."""
    query = select(Device.id).where(
        Device.organizer_id == ctx.organizer_id, Device.device_id == device["device_id"]
    )
    return (await ctx.session.scalars(query)).one()


@router.get(PATH + "/{id}/qr.svg")
@control_page(OrganizerAccess(READ))
async def device_qr(page: Page, ctx: OrgContext, id: str) -> Response:
    """The pairing QR code as an SVG image (404 once the device is paired or revoked)."""
    device = await found(ctx, DEVICES, id)
    if device is None or not pairable(device):
        return Response("Not found.", 404, media_type="text/plain")
    out = io.BytesIO()
    segno.make(pairing(ctx, device), error="m", micro=False).save(
        out, kind="svg", scale=6, border=2, title="Pairing QR code"
    )
    headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
    return Response(out.getvalue(), media_type="image/svg+xml", headers=headers)


@router.post(PATH + "/{id}/revoke")
@control_page(OrganizerAccess(WRITE), form=True)
async def device_revoke(page: Page, ctx: OrgContext, pairs: Pairs, id: str) -> Response:
    async def work() -> Any:
        req = with_body(ctx, {"revoked": True}, "PATCH")
        await DEVICES.prepare(req, {"id": id})
        return await DEVICES.handle_update(req, id, partial=True)

    _, errors = await run(page, ctx, work)
    if errors:
        page.web.flash(" ".join(m for ms in errors.values() for m in ms))
    else:
        page.web.flash("The device was revoked: it can no longer use the API.")
    return page.redirect(f"{base(ctx)}{id}/")
