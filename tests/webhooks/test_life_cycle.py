"""Acceptance: a receiver gets the notifications of a scripted order life cycle, a check-in
and its annulment, each signed, in the order they happened."""

from __future__ import annotations

import json

from tests.checkin import helpers as checkin
from tests.factories import World, auth
from tests.orders import helpers as orders
from tests.webhooks.conftest import Receiver, create_hook, pump, verify


async def test_an_order_life_cycle_check_in_and_annul_arrive_signed_and_in_order(
    client, background, fast_retries, receiver: Receiver, world: World, factory
):
    app = client._transport.app
    hook = await create_hook(
        client,
        world,
        receiver.url,
        action_types=["service.event.order.*", "pretix.event.checkin", "service.event.checkin.*"],
    )
    item = await orders.item(factory, world.event)
    clist = await checkin.checkin_list(factory, world.event)
    token, _device = await checkin.device(factory, world.org)
    headers = auth(world.admin)
    seen: list[str] = []

    async def step(expected: list[str]) -> None:
        """Each step's notifications are delivered before the next step runs."""
        total = len(seen) + len(expected)
        await pump(app, lambda: _arrived(receiver, total))
        bodies = [json.loads(r.body) for r in receiver.requests[len(seen) :]]
        assert [b["action"] for b in bodies] == expected
        seen.extend(expected)

    created = await client.post(orders.url(world), json=orders.body(item.id, 1), headers=headers)
    assert created.status_code == 201, created.text
    code = created.json()["code"]
    await step(["service.event.order.placed"])

    patched = await client.patch(
        orders.url(world, f"orders/{code}/"), json={"email": "new@example.org"}, headers=headers
    )
    assert patched.status_code == 200, patched.text
    await step(["service.event.order.contact.changed"])

    paid = await client.post(orders.url(world, f"orders/{code}/mark_paid/"), headers=headers)
    assert paid.status_code == 200, paid.text
    await step(["service.event.order.payment.confirmed", "service.event.order.paid"])

    secret = created.json()["positions"][0]["secret"]
    scanned = await checkin.redeem(
        client, world, secret, [clist.id], headers=checkin.device_auth(token), nonce="gate-1"
    )
    assert scanned.status_code == 201, scanned.text
    await step(["pretix.event.checkin"])  # registered under the reference's name

    annulled = await client.post(
        checkin.rpc_url(world, "annul"),
        json={"nonce": "gate-1", "lists": [clist.id]},
        headers=checkin.device_auth(token),
    )
    assert annulled.status_code == 200, annulled.text
    await step(["service.event.checkin.reverted"])

    canceled = await client.post(
        orders.url(world, f"orders/{code}/mark_canceled/"), headers=headers
    )
    assert canceled.status_code == 200, canceled.text
    await step(["service.event.order.canceled"])

    bodies = [json.loads(r.body) for r in receiver.requests]
    assert all(b["code"] == code and b["organizer"] == "acme" for b in bodies)
    assert all(verify(hook["secret"], r) == [True] for r in receiver.requests)
    ids = [b["notification_id"] for b in bodies if b["action"] != "pretix.event.checkin"]
    assert ids == sorted(ids)  # the outbox's own order


async def _arrived(receiver: Receiver, n: int) -> bool:
    return len(receiver.requests) >= n
