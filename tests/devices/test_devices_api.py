"""``O/devices/`` and ``O/gates/``: what the organizer's staff see and change."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from sqlalchemy import select

from admit.models import Device
from tests.devices.helpers import make_device
from tests.factories import World, assert_field_errors, auth

DEVICES = "/api/v1/organizers/acme/devices/"
GATES = "/api/v1/organizers/acme/gates/"

FIELDS = {
    "device_id",
    "unique_serial",
    "initialization_token",
    "all_events",
    "limit_events",
    "revoked",
    "name",
    "created",
    "initialized",
    "security_profile",
    "hardware_brand",
    "hardware_model",
    "os_name",
    "os_version",
    "software_brand",
    "software_version",
    "gate",
}


async def create(client: Any, token: str, **fields: Any) -> dict:
    fields.setdefault("name", "Scanner")
    response = await client.post(DEVICES, json=fields, headers=auth(token))
    assert response.status_code == 201, response.text
    return response.json()


async def test_create_generates_serial_token_and_numbers_per_organizer(client, world: World):
    first = await create(client, world.admin, name="Door 1", all_events=True)
    second = await create(client, world.admin, name="Door 2", limit_events=["summit"])
    assert set(first) == FIELDS
    assert (first["device_id"], second["device_id"]) == (1, 2)
    assert re.fullmatch(r"[A-Z2-9]{16}", first["unique_serial"])
    assert re.fullmatch(r"[a-z2-9]{16}", first["initialization_token"])
    assert first["unique_serial"] != second["unique_serial"]
    assert first["initialized"] is None and first["revoked"] is False
    assert first["security_profile"] == "full"
    assert first["created"].endswith("Z")
    assert first["hardware_brand"] is None and first["gate"] is None
    assert second["all_events"] is False and second["limit_events"] == ["summit"]


async def test_numbering_is_per_organizer(client, world: World, factory):
    await make_device(factory, world.other)
    await make_device(factory, world.other)
    assert (await create(client, world.admin))["device_id"] == 1


async def test_create_validates(client, world: World, factory):
    response = await client.post(DEVICES, json={}, headers=auth(world.admin))
    assert_field_errors(response, "name")
    response = await client.post(
        DEVICES, json={"name": "x", "security_profile": "root"}, headers=auth(world.admin)
    )
    assert_field_errors(response, "security_profile")
    response = await client.post(
        DEVICES, json={"name": "x", "limit_events": ["expo"]}, headers=auth(world.admin)
    )
    assert_field_errors(response, "limit_events")  # another organizer's event is unknown
    foreign_gate = await client.post(
        "/api/v1/organizers/rival/gates/", json={"name": "South"}, headers=auth(world.outsider)
    )
    response = await client.post(
        DEVICES, json={"name": "x", "gate": foreign_gate.json()["id"]}, headers=auth(world.admin)
    )
    assert_field_errors(response, "gate")
    response = await client.post(DEVICES, json={"name": "  "}, headers=auth(world.admin))
    assert_field_errors(response, "name")


async def test_concurrent_creation_numbers_without_gaps_or_clashes(client, world: World):
    responses = await asyncio.gather(
        *(client.post(DEVICES, json={"name": f"D{i}"}, headers=auth(world.admin)) for i in range(8))
    )
    assert [r.status_code for r in responses] == [201] * 8
    assert sorted(r.json()["device_id"] for r in responses) == list(range(1, 9))


async def test_list_detail_and_tenancy(client, world: World, factory):
    await make_device(factory, world.other, name="Rival scanner")
    a = await create(client, world.admin, name="B")
    b = await create(client, world.admin, name="A")
    body = (await client.get(DEVICES, headers=auth(world.admin))).json()
    assert body["count"] == 2
    assert [d["device_id"] for d in body["results"]] == [a["device_id"], b["device_id"]]
    by_name = (await client.get(f"{DEVICES}?ordering=name", headers=auth(world.admin))).json()
    assert [d["name"] for d in by_name["results"]] == ["A", "B"]
    detail = await client.get(f"{DEVICES}{a['device_id']}/", headers=auth(world.admin))
    assert detail.json() == body["results"][0]
    assert (await client.get(f"{DEVICES}99/", headers=auth(world.admin))).status_code == 404
    assert (await client.get(f"{DEVICES}abc/", headers=auth(world.admin))).status_code == 404
    # The rival's device #1 is not reachable through acme.
    rival = await client.get("/api/v1/organizers/rival/devices/1/", headers=auth(world.admin))
    assert rival.status_code == 403


async def test_revoked_filter(client, world: World, factory):
    await make_device(factory, world.org, revoked=True)
    await make_device(factory, world.org)
    revoked = await client.get(f"{DEVICES}?revoked=true", headers=auth(world.admin))
    assert [d["revoked"] for d in revoked.json()["results"]] == [True]
    bad = await client.get(f"{DEVICES}?revoked=maybe", headers=auth(world.admin))
    assert_field_errors(bad, "revoked")


async def test_patch_put_and_one_way_revocation(client, world: World):
    device = await create(client, world.admin, all_events=True)
    url = f"{DEVICES}{device['device_id']}/"
    patched = await client.patch(
        url, json={"name": "Renamed", "security_profile": "pretixscan"}, headers=auth(world.admin)
    )
    assert patched.status_code == 200
    assert patched.json()["name"] == "Renamed" and patched.json()["all_events"] is True
    assert patched.json()["security_profile"] == "pretixscan"
    # Read-only fields are ignored.
    ignored = await client.patch(
        url, json={"unique_serial": "X", "initialization_token": "y"}, headers=auth(world.admin)
    )
    assert ignored.json()["unique_serial"] == device["unique_serial"]
    put = await client.put(url, json={"name": "Put"}, headers=auth(world.admin))
    assert put.status_code == 200
    # PUT keeps what it omits.
    assert put.json()["all_events"] is True and put.json()["security_profile"] == "pretixscan"
    revoked = await client.patch(url, json={"revoked": True}, headers=auth(world.admin))
    assert revoked.json()["revoked"] is True
    again = await client.patch(url, json={"revoked": False}, headers=auth(world.admin))
    assert_field_errors(again, "revoked")
    still = await client.put(url, json={"name": "Put"}, headers=auth(world.admin))
    assert still.json()["revoked"] is True


async def test_devices_are_not_deleted(client, world: World):
    device = await create(client, world.admin)
    response = await client.delete(f"{DEVICES}{device['device_id']}/", headers=auth(world.admin))
    assert response.status_code == 405


async def test_read_permission_does_not_allow_writing(client, world: World, factory):
    team = await factory.team(world.org, organizer_permissions=["organizer.devices:read"])
    reader = await factory.token(team)
    assert (await client.get(DEVICES, headers=auth(reader))).status_code == 200
    response = await client.post(DEVICES, json={"name": "x"}, headers=auth(reader))
    assert response.status_code == 403


async def test_gates_crud_and_device_assignment(client, world: World, factory):
    response = await client.post(
        GATES, json={"name": "South entrance", "identifier": "S"}, headers=auth(world.admin)
    )
    assert response.status_code == 201
    gate = response.json()
    assert gate == {"id": gate["id"], "name": "South entrance", "identifier": "S"}
    device = await create(client, world.admin, gate=gate["id"])
    assert device["gate"] == gate["id"]
    patched = await client.patch(
        f"{GATES}{gate['id']}/", json={"name": "South"}, headers=auth(world.admin)
    )
    assert patched.json()["name"] == "South"
    assert (await client.get(GATES, headers=auth(world.admin))).json()["count"] == 1
    assert_field_errors(await client.post(GATES, json={}, headers=auth(world.admin)), "name")
    deleted = await client.delete(f"{GATES}{gate['id']}/", headers=auth(world.admin))
    assert deleted.status_code == 204
    detail = await client.get(f"{DEVICES}{device['device_id']}/", headers=auth(world.admin))
    assert detail.json()["gate"] is None


async def test_no_api_token_before_initialization(client, world: World, factory):
    device = await create(client, world.admin, limit_events=["summit"])
    async with factory.sessionmaker() as session:
        row = (
            await session.execute(select(Device).where(Device.device_id == device["device_id"]))
        ).scalar_one()
        assert row.api_token_hash is None  # no API token before initialization
