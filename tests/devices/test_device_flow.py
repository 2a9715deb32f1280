"""The device's side: initialize, authenticate, info, update, roll, revoke, and what its token
lets it do (events it is limited to, check-in reads, no writes, security profiles)."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.devices.helpers import device_auth, make_device
from tests.factories import World, assert_field_errors, auth

DEVICES = "/api/v1/organizers/acme/devices/"
HARDWARE = {
    "hardware_brand": "Zebra",
    "hardware_model": "TC25",
    "os_name": "Android",
    "os_version": "8.1.0",
    "software_brand": "pretixSCAN",
    "software_version": "1.5.1",
}
PUBKEY = (
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n"
    "-----END PUBLIC KEY-----\n"
)


async def new_device(client: Any, world: World, **fields: Any) -> dict:
    fields.setdefault("name", "Bar")
    fields.setdefault("all_events", True)
    response = await client.post(DEVICES, json=fields, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    return response.json()


async def initialize(client: Any, token: str, **extra: Any) -> Any:
    return await client.post("/api/v1/device/initialize", json={"token": token, **extra})


async def test_initialize_hands_out_a_working_token_once(client, world: World):
    device = await new_device(client, world)
    response = await initialize(client, device["initialization_token"], **HARDWARE)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body == {
        "organizer": "acme",
        "device_id": device["device_id"],
        "unique_serial": device["unique_serial"],
        "api_token": body["api_token"],
        "name": "Bar",
        "security_profile": "full",
        "gate": None,
    }
    assert len(body["api_token"]) == 64
    organizers = await client.get("/api/v1/organizers/", headers=device_auth(body["api_token"]))
    assert organizers.status_code == 200
    assert [o["slug"] for o in organizers.json()["results"]] == ["acme"]

    detail = await client.get(f"{DEVICES}{device['device_id']}/", headers=auth(world.admin))
    assert detail.json()["initialized"] is not None
    assert {k: detail.json()[k] for k in HARDWARE} == HARDWARE

    again = await initialize(client, device["initialization_token"])
    assert again.status_code == 400
    assert again.json() == {"token": ["This initialization token has already been used."]}


async def test_initialize_rejects_bad_requests(client, world: World, factory):
    unknown = await initialize(client, "nosuchtoken")
    assert unknown.json() == {"token": ["Unknown initialization token."]}
    assert_field_errors(await client.post("/api/v1/device/initialize", json={}), "token")
    device = await new_device(client, world)
    bad_key = await initialize(client, device["initialization_token"], rsa_pubkey="not a key")
    assert_field_errors(bad_key, "rsa_pubkey")
    too_long = await initialize(client, device["initialization_token"], os_name="x" * 191)
    assert_field_errors(too_long, "os_name")
    # None of the refused attempts used up the token.
    ok = await initialize(client, device["initialization_token"], rsa_pubkey=PUBKEY)
    assert ok.status_code == 200

    revoked, _ = await make_device(factory, world.org, initialized=False, revoked=True)
    response = await initialize(client, revoked.initialization_token)
    assert response.json() == {"token": ["This device has been revoked."]}


async def test_initialize_ignores_any_authorization_header(client, world: World):
    device = await new_device(client, world)
    response = await client.post(
        "/api/v1/device/initialize",
        json={"token": device["initialization_token"]},
        headers={"Authorization": "Token nonsense"},
    )
    assert response.status_code == 200


async def test_concurrent_initialization_has_one_winner(client, world: World):
    device = await new_device(client, world)
    responses = await asyncio.gather(
        *(initialize(client, device["initialization_token"]) for _ in range(8))
    )
    assert sorted(r.status_code for r in responses) == [200] + [400] * 7
    winner = next(r for r in responses if r.status_code == 200).json()["api_token"]
    info = await client.get("/api/v1/device/info", headers=device_auth(winner))
    assert info.status_code == 200


async def test_info_reports_device_gate_and_server(client, world: World):
    gate = await client.post(
        "/api/v1/organizers/acme/gates/", json={"name": "South"}, headers=auth(world.admin)
    )
    device = await new_device(client, world, gate=gate.json()["id"])
    token = (await initialize(client, device["initialization_token"])).json()["api_token"]
    response = await client.get("/api/v1/device/info", headers=device_auth(token))
    assert response.status_code == 200
    body = response.json()
    assert body["device"]["api_token"] == token
    assert body["device"]["gate"] == {"id": gate.json()["id"], "name": "South"}
    assert body["server"]["version"]["pretix_numeric"] == 20260080000000
    assert body["medium_key_sets"] == []


async def test_update_records_the_fields_sent(client, world: World):
    device = await new_device(client, world)
    token = (await initialize(client, device["initialization_token"], **HARDWARE)).json()[
        "api_token"
    ]
    response = await client.post(
        "/api/v1/device/update",
        json={"software_version": "2.0.0", "info": {"battery": 80}},
        headers=device_auth(token),
    )
    assert response.status_code == 200
    assert response.json()["api_token"] == token
    detail = (
        await client.get(f"{DEVICES}{device['device_id']}/", headers=auth(world.admin))
    ).json()
    assert detail["software_version"] == "2.0.0"
    assert detail["hardware_brand"] == "Zebra"  # not sent, not changed
    bad = await client.post(
        "/api/v1/device/update", json={"info": "text"}, headers=device_auth(token)
    )
    assert_field_errors(bad, "info")


async def test_roll_kills_the_old_token_at_once(client, world: World):
    device = await new_device(client, world)
    old = (await initialize(client, device["initialization_token"])).json()["api_token"]
    rolled = await client.post("/api/v1/device/roll", headers=device_auth(old))
    assert rolled.status_code == 200
    new = rolled.json()["api_token"]
    assert new != old
    stale = await client.get("/api/v1/device/info", headers=device_auth(old))
    assert stale.status_code == 401
    assert stale.json() == {"detail": "Invalid token."}
    assert (await client.get("/api/v1/device/info", headers=device_auth(new))).status_code == 200


async def test_concurrent_rolls_leave_exactly_one_working_token(client, world: World):
    device = await new_device(client, world)
    old = (await initialize(client, device["initialization_token"])).json()["api_token"]
    responses = await asyncio.gather(
        *(client.post("/api/v1/device/roll", headers=device_auth(old)) for _ in range(6))
    )
    winners = [r.json()["api_token"] for r in responses if r.status_code == 200]
    assert len(winners) == 1
    assert all(r.status_code == 401 for r in responses if r.status_code != 200)
    working = [
        t
        for t in [old, *winners]
        if (await client.get("/api/v1/device/info", headers=device_auth(t))).status_code == 200
    ]
    assert working == winners


async def test_revoke_is_final(client, world: World):
    device = await new_device(client, world)
    token = (await initialize(client, device["initialization_token"])).json()["api_token"]
    assert (
        await client.post("/api/v1/device/revoke", headers=device_auth(token))
    ).status_code == 200
    for method, url in (
        ("GET", "/api/v1/device/info"),
        ("POST", "/api/v1/device/roll"),
        ("GET", "/api/v1/organizers/acme/events/"),
    ):
        response = await client.request(method, url, headers=device_auth(token))
        assert response.status_code == 401
        assert response.json() == {"detail": "Device access has been revoked."}
    detail = (
        await client.get(f"{DEVICES}{device['device_id']}/", headers=auth(world.admin))
    ).json()
    assert detail["revoked"] is True


async def test_device_calls_refuse_team_tokens(client, world: World):
    response = await client.get("/api/v1/device/info", headers=auth(world.admin))
    assert response.status_code == 403


async def test_device_reads_what_a_scanner_needs_and_writes_nothing(client, world: World, factory):
    _, token = await make_device(factory, world.org)
    headers = device_auth(token)
    base = "/api/v1/organizers/acme/events/summit"
    for url in (f"{base}/", f"{base}/items/", f"{base}/orders/", f"{base}/orderpositions/"):
        assert (await client.get(url, headers=headers)).status_code == 200, url
    refused = [
        ("POST", f"{base}/orders/"),
        ("POST", f"{base}/items/"),
        ("PATCH", f"{base}/"),
        ("GET", "/api/v1/organizers/acme/teams/"),
        ("GET", DEVICES),
        ("POST", "/api/v1/organizers/acme/events/"),
    ]
    for method, url in refused:
        response = await client.request(method, url, json={}, headers=headers)
        assert response.status_code == 403, (method, url, response.text)


async def test_event_limits_apply_and_follow_changes(client, world: World, factory):
    second = await factory.event(world.org, "second")
    device, token = await make_device(factory, world.org, all_events=False, events=[second])
    headers = device_auth(token)
    events = await client.get("/api/v1/organizers/acme/events/", headers=headers)
    assert [e["slug"] for e in events.json()["results"]] == ["second"]
    summit = "/api/v1/organizers/acme/events/summit/"
    assert (await client.get(summit, headers=headers)).status_code == 403
    await client.patch(
        f"{DEVICES}{device.device_id}/",
        json={"limit_events": ["summit"]},
        headers=auth(world.admin),
    )
    assert (await client.get(summit, headers=headers)).status_code == 200


async def test_kiosk_profile_cannot_download_orders(client, world: World, factory):
    _, token = await make_device(factory, world.org, profile="pretixscan_online_kiosk")
    base = "/api/v1/organizers/acme/events/summit"
    assert (await client.get(f"{base}/items/", headers=device_auth(token))).status_code == 200
    orders = await client.get(f"{base}/orders/", headers=device_auth(token))
    assert orders.status_code == 403
    _, scan = await make_device(factory, world.org, profile="pretixscan")
    assert (await client.get(f"{base}/orders/", headers=device_auth(scan))).status_code == 200


async def test_uninitialized_device_has_no_token(client, world: World, factory):
    response = await client.get("/api/v1/device/info", headers={"Authorization": "Device "})
    assert response.status_code == 401
    assert response.json() == {"detail": "Authentication credentials were not provided."}


async def test_device_event_read_is_one_statement(client, world: World, factory, count_queries):
    _, token = await make_device(factory, world.org)
    url = "/api/v1/organizers/acme/events/summit/"
    await client.get(url, headers=device_auth(token))  # warm up compiled statements
    with count_queries() as device_q:
        assert (await client.get(url, headers=device_auth(token))).status_code == 200
    with count_queries() as team_q:
        assert (await client.get(url, headers=auth(world.admin))).status_code == 200
    assert device_q.count == 1
    assert team_q.count == 1


async def test_device_calls_survive_garbage_bodies(client, world: World, factory):
    _, token = await make_device(factory, world.org)
    garbage = ([], "text", 12, {"info": [1], "os_name": {"x": 1}}, {"software_version": None})
    for body in garbage:
        for url in ("/api/v1/device/update", "/api/v1/device/initialize"):
            response = await client.post(url, json=body, headers=device_auth(token))
            assert 400 <= response.status_code < 500 or response.status_code == 200, response.text
            assert response.status_code != 422
    malformed = await client.post(
        "/api/v1/device/update",
        content=b"{not json",
        headers={**device_auth(token), "Content-Type": "application/json"},
    )
    assert malformed.status_code == 400
