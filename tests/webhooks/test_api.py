"""``O/webhooks/``: CRUD as the reference, validation, DELETE disabling, tenancy, the secret
shown once and its rotation."""

from __future__ import annotations

import datetime as dt

import pytest

from admit.db import utcnow
from admit.models import Webhook
from admit.webhooks import service
from tests.factories import World, assert_field_errors, auth
from tests.webhooks.conftest import HOOKS, hook_row

BODY = {
    "target_url": "https://example.org/hook",
    "action_types": ["service.event.order.placed", "service.event.order.changed.*"],
}


async def test_create_read_list_update(client, world: World, factory):
    other = await factory.event(world.org, "gala")
    response = await client.post(
        HOOKS,
        json={
            **BODY,
            "all_events": False,
            "limit_events": ["summit", "gala"],
            "comment": "ERP",
            "action_types": ["pretix.event.order.paid", "service.event.item.*", "pretix.*"],
        },
        headers=auth(world.admin),
    )
    assert response.status_code == 201, response.text
    created = response.json()
    secret = created.pop("secret")
    assert secret.startswith("whsec_") and len(secret) > 40
    assert created == {
        "id": created["id"],
        "enabled": True,
        "target_url": "https://example.org/hook",
        "all_events": False,
        "limit_events": ["gala", "summit"],
        # Sorted, as the reference lists them.
        "action_types": ["pretix.*", "pretix.event.order.paid", "service.event.item.*"],
        "comment": "ERP",
    }
    detail = await client.get(f"{HOOKS}{created['id']}/", headers=auth(world.admin))
    assert detail.status_code == 200 and detail.json() == created  # no secret
    assert (await hook_row(client._transport.app, created["id"])).secret == secret

    listed = (await client.get(HOOKS, headers=auth(world.admin))).json()
    assert listed["count"] == 1 and listed["results"] == [created]

    # all_events with limit_events kept is the reference's "either" error (the merged state).
    either = await client.patch(
        f"{HOOKS}{created['id']}/", json={"all_events": True}, headers=auth(world.admin)
    )
    assert either.status_code == 400
    assert either.json() == {"non_field_errors": ["You can set either limit_events or all_events."]}
    patched = await client.patch(
        f"{HOOKS}{created['id']}/",
        json={"all_events": True, "limit_events": []},
        headers=auth(world.admin),
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["all_events"] is True and "secret" not in patched.json()
    assert patched.json()["action_types"] == created["action_types"]

    put = await client.put(f"{HOOKS}{created['id']}/", json=BODY, headers=auth(world.admin))
    assert put.status_code == 200, put.text
    # PUT keeps what it omits (all_events and the emptied limit_events of the PATCH above).
    assert put.json()["comment"] == "ERP" and put.json()["all_events"] is True
    assert put.json()["limit_events"] == []
    assert other.id  # the event stayed


async def test_delete_disables_and_the_webhook_stays_readable(client, world: World):
    created = (await client.post(HOOKS, json=BODY, headers=auth(world.admin))).json()
    await client.post(HOOKS, json=BODY, headers=auth(world.admin))
    response = await client.delete(f"{HOOKS}{created['id']}/", headers=auth(world.admin))
    assert response.status_code == 204 and response.content == b""
    detail = await client.get(f"{HOOKS}{created['id']}/", headers=auth(world.admin))
    assert detail.status_code == 200 and detail.json()["enabled"] is False
    off = (await client.get(f"{HOOKS}?enabled=false", headers=auth(world.admin))).json()
    on = (await client.get(f"{HOOKS}?enabled=true", headers=auth(world.admin))).json()
    assert [h["id"] for h in off["results"]] == [created["id"]]
    assert on["count"] == 1 and on["results"][0]["id"] != created["id"]
    bad = await client.get(f"{HOOKS}?enabled=maybe", headers=auth(world.admin))
    assert_field_errors(bad, "enabled")


async def test_validation(client, world: World):
    cases = [
        ({"target_url": "ftp://example.org/x"}, "target_url"),
        ({"target_url": "example.org/hook"}, "target_url"),
        ({"target_url": "http://"}, "target_url"),
        ({"target_url": "https://exa mple.org/"}, "target_url"),
        ({"target_url": "http://example.org:99999/"}, "target_url"),
        ({"target_url": "https://" + "a" * 1000 + ".org/"}, "target_url"),
        ({"target_url": 12}, "target_url"),
        ({"action_types": ["service.event.order.nonsense"]}, "action_types"),
        ({"action_types": ["foo.*"]}, "action_types"),
        ({"action_types": [".*"]}, "action_types"),
        ({"action_types": "service.event.order.paid"}, "action_types"),
        ({"action_types": [None]}, "action_types"),
        ({"limit_events": "summit"}, "limit_events"),
        ({"enabled": "sometimes"}, "enabled"),
    ]
    for change, field in cases:
        response = await client.post(HOOKS, json={**BODY, **change}, headers=auth(world.admin))
        assert_field_errors(response, field)
    missing = await client.post(HOOKS, json={}, headers=auth(world.admin))
    assert_field_errors(missing, "target_url", "action_types")
    unknown = {**BODY, "action_types": ["pretix.event.order.nonsense"]}
    response = await client.post(HOOKS, json=unknown, headers=auth(world.admin))
    assert response.json() == {
        "action_types": ['Invalid action type "pretix.event.order.nonsense".']  # the reference's
    }

    # Events must be the organizer's own; the answer names each unknown one.
    response = await client.post(
        HOOKS,
        json={**BODY, "all_events": False, "limit_events": ["summit", "expo", "nope"]},
        headers=auth(world.admin),
    )
    body = assert_field_errors(response, "limit_events")
    assert body["limit_events"] == [
        'Object with slug="expo" does not exist.',
        'Object with slug="nope" does not exist.',
    ]
    listed = (await client.get(HOOKS, headers=auth(world.admin))).json()
    assert listed["count"] == 0


async def test_all_events_and_limit_events_together_is_refused(client, world: World):
    """As the reference: both set is 400 with its words, all_events defaulting to true."""
    expected = {"non_field_errors": ["You can set either limit_events or all_events."]}
    for body in (
        {**BODY, "all_events": True, "limit_events": ["summit"]},
        {**BODY, "limit_events": ["summit"]},
    ):
        response = await client.post(HOOKS, json=body, headers=auth(world.admin))
        assert response.status_code == 400 and response.json() == expected, response.text
    assert (await client.get(HOOKS, headers=auth(world.admin))).json()["count"] == 0
    limited = await client.post(
        HOOKS,
        json={**BODY, "all_events": False, "limit_events": ["summit"]},
        headers=auth(world.admin),
    )
    assert limited.status_code == 201, limited.text
    url = f"{HOOKS}{limited.json()['id']}/"
    put = await client.put(
        url,
        json={**BODY, "all_events": True, "limit_events": ["summit"]},
        headers=auth(world.admin),
    )
    assert put.status_code == 400 and put.json() == expected
    ok = await client.put(
        url, json={**BODY, "all_events": True, "limit_events": []}, headers=auth(world.admin)
    )
    assert ok.status_code == 200 and ok.json()["limit_events"] == [], ok.text


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hook",
        "https://10.0.0.7/hook",
        "http://169.254.169.254/latest",
        "http://[::1]/hook",
        "http://[fe80::1]/hook",
        "http://[64:ff9b::7f00:1]/hook",  # NAT64 of 127.0.0.1
        "http://[2002:a00:7::1]/hook",  # 6to4 of 10.0.0.7
        "http://[::ffff:10.0.0.7]/hook",
        "http://[::a00:7]/hook",  # IPv4-compatible
        "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook",  # Teredo
        "http://localhost:8080/hook",  # a name that resolves to loopback
    ],
)
async def test_a_target_that_can_never_be_delivered_to_is_refused_when_saved(
    client, world: World, url: str
):
    settings = client._transport.app.state.settings
    assert settings.webhook_allow_private is False
    response = await client.post(HOOKS, json={**BODY, "target_url": url}, headers=auth(world.admin))
    body = assert_field_errors(response, "target_url")
    [message] = body["target_url"]
    assert "ADMIT_WEBHOOK_ALLOW_PRIVATE" in message and "not" in message
    assert "127.0.0.1" not in message or "127.0.0.1" in url  # a name's address is not shown
    assert (await client.get(HOOKS, headers=auth(world.admin))).json()["count"] == 0
    # Changing a webhook's URL to one is refused too.
    created = (await client.post(HOOKS, json=BODY, headers=auth(world.admin))).json()
    patched = await client.patch(
        f"{HOOKS}{created['id']}/", json={"target_url": url}, headers=auth(world.admin)
    )
    assert_field_errors(patched, "target_url")
    settings.webhook_allow_private = True
    try:
        allowed = await client.post(
            HOOKS, json={**BODY, "target_url": url}, headers=auth(world.admin)
        )
        assert allowed.status_code == 201, allowed.text
    finally:
        settings.webhook_allow_private = False
    # Disabling it still works once private targets are off again; enabling checks again.
    hook = f"{HOOKS}{allowed.json()['id']}/"
    off = await client.patch(hook, json={"enabled": False}, headers=auth(world.admin))
    assert off.status_code == 200, off.text
    on = await client.patch(hook, json={"enabled": True}, headers=auth(world.admin))
    assert_field_errors(on, "target_url")


async def test_tenancy_and_permissions(client, world: World):
    theirs = await client.post(
        "/api/v1/organizers/rival/webhooks/", json=BODY, headers=auth(world.outsider)
    )
    assert theirs.status_code == 201
    pk = theirs.json()["id"]
    for method, path in [
        ("GET", f"{HOOKS}{pk}/"),
        ("PATCH", f"{HOOKS}{pk}/"),
        ("PUT", f"{HOOKS}{pk}/"),
        ("DELETE", f"{HOOKS}{pk}/"),
        ("POST", f"{HOOKS}{pk}/rotate_secret/"),
        ("GET", f"{HOOKS}{pk}/calls/"),
        ("POST", f"{HOOKS}{pk}/calls/1/redeliver/"),
    ]:
        body = BODY if method in ("PUT", "PATCH") else None
        response = await client.request(method, path, json=body, headers=auth(world.admin))
        assert response.status_code == 404, (method, path, response.text)
    assert (await client.get(HOOKS, headers=auth(world.admin))).json()["count"] == 0
    # The other organizer's URL is refused outright; a token without the permission too.
    response = await client.get("/api/v1/organizers/rival/webhooks/", headers=auth(world.admin))
    assert response.status_code == 403
    response = await client.get(HOOKS, headers=auth(world.nobody))
    assert response.status_code == 403
    for bad in ("abc", "0", "+1", "99999999999"):
        response = await client.get(f"{HOOKS}{bad}/", headers=auth(world.admin))
        assert response.status_code == 404


async def test_rotate_secret_shows_the_new_one_once(client, world: World):
    created = (await client.post(HOOKS, json=BODY, headers=auth(world.admin))).json()
    url = f"{HOOKS}{created['id']}/rotate_secret/"
    response = await client.post(url, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    rotated = response.json()
    assert rotated["secret"] != created["secret"] and rotated["id"] == created["id"]
    assert {k: v for k, v in rotated.items() if k != "secret"} == {
        k: v for k, v in created.items() if k != "secret"
    }
    row = await hook_row(client._transport.app, created["id"])
    assert (row.secret, row.previous_secret) == (rotated["secret"], created["secret"])
    left = row.previous_secret_until - utcnow()
    assert dt.timedelta(hours=23) < left <= dt.timedelta(hours=24)
    detail = await client.get(f"{HOOKS}{created['id']}/", headers=auth(world.admin))
    assert "secret" not in detail.json()
    missing = await client.post(f"{HOOKS}999999/rotate_secret/", headers=auth(world.admin))
    assert missing.status_code == 404


async def test_the_openapi_document_shows_the_secret_of_create_only(client):
    doc = (await client.get("/api/v1/openapi.json")).json()
    path = doc["paths"]["/api/v1/organizers/{organizer}/webhooks/"]
    created = path["post"]["responses"]["201"]["content"]["application/json"]["schema"]
    listed = path["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    schemas = doc["components"]["schemas"]

    def properties(ref: dict) -> set[str]:
        return set(schemas[ref["$ref"].rsplit("/", 1)[1]]["properties"])

    assert "secret" in properties(created)
    page = properties(listed)
    assert "results" in page
    detail = doc["paths"]["/api/v1/organizers/{organizer}/webhooks/{id}/"]["get"]
    shown = detail["responses"]["200"]["content"]["application/json"]["schema"]
    assert "secret" not in properties(shown)


async def test_a_rotation_racing_another_keeps_the_chain_of_secrets(client, world: World, factory):
    """Two rotations that both read the webhook before either wrote: the later one must
    build on the earlier one's new secret, or that secret (already shown) would be lost."""
    hook = await client.post(
        "/api/v1/organizers/acme/webhooks/",
        json={"target_url": "https://example.org/hook", "action_types": ["service.event.*"]},
        headers=auth(world.admin),
    )
    webhook_id = hook.json()["id"]
    async with factory.sessionmaker() as first, factory.sessionmaker() as second:
        if first.bind.dialect.name == "sqlite":
            pytest.skip("SQLite serialises writing transactions from their first statement")
        mine = await first.get(Webhook, webhook_id)
        theirs = await second.get(Webhook, webhook_id)
        earlier = await service.rotate_secret(first, mine, utcnow())
        await first.commit()
        later = await service.rotate_secret(second, theirs, utcnow())
        await second.commit()
    async with factory.sessionmaker() as session:
        row = await session.get(Webhook, webhook_id)
    assert (row.secret, row.previous_secret) == (later, earlier)
