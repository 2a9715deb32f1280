"""Live deliveries to a local receiver: signed, in order, retried, refused, disabled by 410,
redirects not followed, private addresses guarded; check-ins as their own outbox."""

from __future__ import annotations

import json

import pytest

from tests.checkin.helpers import checkin_list, order, redeem, ticket
from tests.factories import World, auth
from tests.webhooks.conftest import (
    HOOKS,
    Receiver,
    calls,
    create_hook,
    notify,
    pump,
    verify,
)

WAITING = "service.event.orders.waitinglist"


async def test_signed_deliveries_in_order_and_the_log(
    client, background, fast_retries, receiver: Receiver, world: World
):
    app = client._transport.app
    hook = await create_hook(client, world, receiver.url)
    ids = [
        await notify(app, world.org.id, world.event.id, f"{WAITING}.added", waitinglistentry=n)
        for n in range(5)
    ]
    await pump(app, lambda: _count(receiver, 5))
    bodies = [json.loads(r.body) for r in receiver.requests]
    assert [b["notification_id"] for b in bodies] == ids
    assert bodies[0] == {
        "notification_id": ids[0],
        "organizer": "acme",
        "event": "summit",
        "code": None,
        "action": f"{WAITING}.added",
        "waitinglistentry": 0,
    }
    for request in receiver.requests:
        assert request.method == "POST" and request.path == "/hook"
        assert request.headers["content-type"] == "application/json"
        assert verify(hook["secret"], request) == [True]

    log = await client.get(f"{HOOKS}{hook['id']}/calls/", headers=auth(world.admin))
    assert log.status_code == 200, log.text
    entries = log.json()["results"]
    assert [e["notification_id"] for e in entries] == ids[::-1]  # newest first
    first = entries[-1]
    assert first["status"] == "delivered" and first["attempts"] == 1
    assert first["response_status"] == 200 and first["response_body"] == '{"ok": true}'
    assert first["payload"] == bodies[0] and first["next_retry"] is None
    assert first["duration_ms"] >= 0 and first["error"] is None
    filtered = await client.get(
        f"{HOOKS}{hook['id']}/calls/?status=pending", headers=auth(world.admin)
    )
    assert filtered.json()["count"] == 0
    bad = await client.get(f"{HOOKS}{hook['id']}/calls/?status=x", headers=auth(world.admin))
    assert bad.status_code == 400

    # Nothing is sent twice, however often the fan-out runs.
    await pump(app, lambda: _true())
    assert len(receiver.requests) == 5 and len(await calls(app)) == 5


async def test_matching_by_action_and_event(
    client, background, fast_retries, receiver: Receiver, world: World, factory
):
    app = client._transport.app
    gala = await factory.event(world.org, "gala")
    await create_hook(
        client,
        world,
        receiver.url,
        all_events=False,
        limit_events=["gala"],
        action_types=[f"{WAITING}.added", "service.customer.created"],
    )
    await notify(app, world.org.id, world.event.id, f"{WAITING}.added")  # other event
    await notify(app, world.org.id, gala.id, f"{WAITING}.deleted")  # other action
    await notify(app, world.other.id, None, "service.customer.created")  # other organizer
    wanted = [
        await notify(app, world.org.id, gala.id, f"{WAITING}.added"),
        await notify(app, world.org.id, None, "service.customer.created", customer="ABC"),
    ]
    await pump(app, lambda: _count(receiver, 2))
    bodies = [json.loads(r.body) for r in receiver.requests]
    assert [b["notification_id"] for b in bodies] == wanted
    assert bodies[1]["event"] is None and bodies[1]["customer"] == "ABC"
    assert len(await calls(app)) == 2


async def test_deliveries_name_the_action_in_the_family_registered(
    client, background, fast_retries, receiver: Receiver, world: World
):
    """A webhook registered with the reference's ``pretix.`` names keeps them, and its
    receiver gets ``pretix.`` actions; one with ``service.`` names gets those; with both,
    the entry that matched decides (an exact name before a ``.*`` family)."""
    app = client._transport.app
    pretix_names = ["pretix.event.orders.waitinglist.added", "pretix.customer.*"]
    pretix = await create_hook(client, world, receiver.url + "?p", action_types=pretix_names)
    assert pretix["action_types"] == sorted(pretix_names)
    detail = await client.get(f"{HOOKS}{pretix['id']}/", headers=auth(world.admin))
    assert detail.json()["action_types"] == sorted(pretix_names)
    service = await create_hook(
        client, world, receiver.url + "?s", action_types=[f"{WAITING}.added"]
    )
    await create_hook(
        client,
        world,
        receiver.url + "?m",
        action_types=["pretix.event.orders.waitinglist.*", f"{WAITING}.deleted"],
    )
    await notify(app, world.org.id, world.event.id, f"{WAITING}.added", waitinglistentry=1)
    await notify(app, world.org.id, None, "service.customer.created", customer="ABC")
    await notify(app, world.org.id, world.event.id, f"{WAITING}.deleted", waitinglistentry=1)
    await pump(app, lambda: _count(receiver, 5))
    got = {}
    for request in receiver.requests:
        got.setdefault(request.path, []).append(json.loads(request.body)["action"])
    assert got == {
        "/hook?p": ["pretix.event.orders.waitinglist.added", "pretix.customer.created"],
        "/hook?s": [f"{WAITING}.added"],
        "/hook?m": ["pretix.event.orders.waitinglist.added", f"{WAITING}.deleted"],
    }
    log = await client.get(f"{HOOKS}{pretix['id']}/calls/", headers=auth(world.admin))
    entries = log.json()["results"]
    assert [e["action"] for e in entries] == [
        "pretix.customer.created",
        "pretix.event.orders.waitinglist.added",
    ]
    assert all(e["payload"]["action"] == e["action"] for e in entries)
    assert service["action_types"] == [f"{WAITING}.added"]


async def test_two_failures_then_delivered_on_the_third_attempt(
    client, background, fast_retries, receiver: Receiver, world: World
):
    app = client._transport.app
    receiver.statuses = [500, 500]
    await create_hook(client, world, receiver.url)
    await notify(app, world.org.id, world.event.id, f"{WAITING}.added")
    await pump(app, lambda: _count(receiver, 3))
    [call] = await calls(app)
    assert (call.status, call.attempts, call.response_status) == ("delivered", 3, 200)
    assert len({r.body for r in receiver.requests}) == 1


async def test_410_disables_the_webhook(
    client, background, fast_retries, receiver: Receiver, world: World
):
    app = client._transport.app
    receiver.statuses = [410]
    hook = await create_hook(client, world, receiver.url)
    await notify(app, world.org.id, world.event.id, f"{WAITING}.added")
    await notify(app, world.org.id, world.event.id, f"{WAITING}.added")
    await pump(app, lambda: _count(receiver, 1))
    await pump(app, lambda: _true())
    detail = await client.get(f"{HOOKS}{hook['id']}/", headers=auth(world.admin))
    assert detail.json()["enabled"] is False
    first, second = await calls(app)
    assert (first.status, first.response_status) == ("failed", 410)
    assert (second.status, second.attempts) == ("pending", 0)
    assert len(receiver.requests) == 1
    # Nothing new is fanned out to a disabled webhook; redelivery needs it enabled.
    await notify(app, world.org.id, world.event.id, f"{WAITING}.added")
    await pump(app, lambda: _true())
    assert len(await calls(app)) == 2
    url = f"{HOOKS}{hook['id']}/calls/{first.id}/redeliver/"
    response = await client.post(url, headers=auth(world.admin))
    assert response.status_code == 400 and "non_field_errors" in response.json()


async def test_redirects_are_not_followed(
    client, background, fast_retries, receiver: Receiver, world: World
):
    app = client._transport.app
    receiver.statuses = [302]
    receiver.extra_headers = {"Location": receiver.url + "/elsewhere"}
    await create_hook(client, world, receiver.url)
    await notify(app, world.org.id, world.event.id, f"{WAITING}.added")
    await pump(app, lambda: _count(receiver, 2))
    assert [r.path for r in receiver.requests] == ["/hook", "/hook"]
    [call] = await calls(app)
    assert (call.status, call.attempts) == ("delivered", 2)


async def test_private_addresses_are_refused_unless_allowed(
    client, background, fast_retries, receiver: Receiver, world: World
):
    """Checked again when sent (a name may point elsewhere by then, the setting may have
    changed): a webhook saved while private targets were allowed is not sent to after."""
    app = client._transport.app
    hook = await create_hook(client, world, receiver.url)
    named = await create_hook(client, world, receiver.url.replace("127.0.0.1", "localhost"))
    fast_retries.webhook_allow_private = False
    await notify(app, world.org.id, world.event.id, f"{WAITING}.added")

    async def attempted() -> bool:
        return all(c.attempts for c in await calls(app))

    await pump(app, attempted)
    first, second = await calls(app)
    assert first.webhook_id == hook["id"] and second.webhook_id == named["id"]
    assert first.status == "pending" and first.response_status is None
    assert "127.0.0.1" in first.error and "not a public address" in first.error
    # What an internal name resolves to is not shown in the log.
    assert "localhost" in second.error and "not public" in second.error
    assert "127.0.0.1" not in second.error and "::1" not in second.error
    log = await client.get(f"{HOOKS}{named['id']}/calls/", headers=auth(world.admin))
    assert "127.0.0.1" not in log.text
    assert receiver.requests == []


async def test_rotation_signs_with_both_secrets_and_redeliver(
    client, background, fast_retries, receiver: Receiver, world: World
):
    app = client._transport.app
    hook = await create_hook(client, world, receiver.url)
    rotated = await client.post(f"{HOOKS}{hook['id']}/rotate_secret/", headers=auth(world.admin))
    new = rotated.json()["secret"]
    await notify(app, world.org.id, world.event.id, f"{WAITING}.added")
    await pump(app, lambda: _count(receiver, 1))
    [request] = receiver.requests
    assert verify(new, request) == [True, False]
    assert verify(hook["secret"], request) == [False, True]

    [call] = await calls(app)
    url = f"{HOOKS}{hook['id']}/calls/{call.id}/redeliver/"
    response = await client.post(url, headers=auth(world.admin))
    assert response.status_code == 202, response.text
    copy = response.json()
    assert copy["status"] == "pending" and copy["redelivery_of"] == call.id
    assert copy["notification_id"] == call.source_id and copy["id"] != call.id
    await pump(app, lambda: _count(receiver, 2))
    assert receiver.requests[1].body == request.body
    missing = await client.post(
        f"{HOOKS}{hook['id']}/calls/999999/redeliver/", headers=auth(world.admin)
    )
    assert missing.status_code == 404


@pytest.mark.parametrize("key", [None, "door-1"])
async def test_checkins_are_announced_from_the_checkins_table(
    client, background, fast_retries, receiver: Receiver, world: World, factory, key
):
    """Also a keyed first entry, which the scan statement writes with its key (PostgreSQL,
    ``checkin/keyed.py``)."""
    app = client._transport.app
    await create_hook(client, world, receiver.url, action_types=["pretix.event.checkin"])
    item = await ticket(factory, world.event)
    the_order, [position] = await order(factory, world.event, item)
    lst = await checkin_list(factory, world.event)
    headers = {**auth(world.admin), **({"X-Idempotency-Key": key} if key else {})}
    first = await redeem(client, world, position.secret, [lst.id], headers=headers)
    assert first.json()["status"] == "ok"
    second = await redeem(client, world, position.secret, [lst.id])
    assert second.json()["status"] == "error"  # a failed scan is not announced
    await pump(app, lambda: _count(receiver, 1))
    await pump(app, lambda: _true())
    [request] = receiver.requests
    body = json.loads(request.body)
    assert body == {
        "notification_id": body["notification_id"],
        "organizer": "acme",
        "event": "summit",
        "code": the_order.code,
        "action": "pretix.event.checkin",  # the family the webhook was registered with
        "orderposition_id": position.id,
        "orderposition_positionid": 1,
        "checkin_list": lst.id,
        "type": "entry",
        "first_checkin": True,
    }


async def _count(receiver: Receiver, n: int) -> bool:
    return len(receiver.requests) >= n


async def _true() -> bool:
    return True


async def test_notifications_of_real_operations(
    client, background, fast_retries, receiver: Receiver, world: World, factory
):
    app = client._transport.app
    await create_hook(
        client, world, receiver.url, action_types=["service.event.*", "pretix.customer.*"]
    )
    await factory.event(world.org, "fresh")
    url = "/api/v1/organizers/acme/events/fresh/"
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 204
    customer = await client.post(
        "/api/v1/organizers/acme/customers/",
        json={"email": "ada@example.org"},
        headers=auth(world.admin),
    )
    assert customer.status_code == 201, customer.text
    await pump(app, lambda: _count(receiver, 2))
    deleted, created = (json.loads(r.body) for r in receiver.requests)
    assert deleted == {
        "notification_id": deleted["notification_id"],
        "organizer": "acme",
        "event": "fresh",
        "code": None,
        "action": "service.event.deleted",
    }
    # Each in the family of the entry that matched it.
    assert created["action"] == "pretix.customer.created" and created["event"] is None
    assert created["customer"] == customer.json()["identifier"]
