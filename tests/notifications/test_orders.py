"""Order and order position operations record their ``service.event.order.*`` type."""

from __future__ import annotations

from typing import Any

from tests.factories import World, auth
from tests.notifications.helpers import Outbox, ok
from tests.orders import helpers as h


async def _order(client, world: World, item_id: int, n: int = 1, **kw: Any) -> dict:
    r = await client.post(h.url(world), json=h.body(item_id, n, **kw), headers=auth(world.admin))
    return await ok(r, 201)


async def _act(client, world: World, code: str, action: str, body: dict | None = None) -> None:
    url = h.url(world, f"orders/{code}/{action}/")
    await ok(await client.post(url, json=body or {}, headers=auth(world.admin)))


async def test_order_placed(client, world: World, factory):
    item = await h.item(factory, world.event)
    free = await h.item(factory, world.event, "0.00")
    out = Outbox(factory)
    ev, org = world.event.id, world.org.id

    pending = await _order(client, world, item.id)
    await out.expect(
        ("service.event.order.placed", ev, {"code": pending["code"]}), organizer_id=org
    )

    paid = await _order(client, world, item.id, status="p", payment_provider="manual")
    code = {"code": paid["code"]}
    await out.expect(
        ("service.event.order.placed", ev, code),
        ("service.event.order.payment.confirmed", ev, code),
        ("service.event.order.paid", ev, code),
        organizer_id=org,
    )

    gratis = await _order(client, world, free.id)
    assert await out.actions() == [
        "service.event.order.placed",
        "service.event.order.payment.confirmed",
        "service.event.order.paid",
    ]
    assert gratis["status"] == "p"

    # Needs approval: only the require_approval type (it is not yet an order to fulfil).
    held = await _order(client, world, item.id, require_approval=True)
    await out.expect(
        ("service.event.order.placed.require_approval", ev, {"code": held["code"]}),
        organizer_id=org,
    )

    # A simulated order was never stored: nothing to announce.
    await ok(
        await client.post(
            h.url(world), json=h.body(item.id, simulate=True), headers=auth(world.admin)
        ),
        201,
    )
    assert await out.actions() == []


async def test_order_state_actions(client, world: World, factory):
    item = await h.item(factory, world.event)
    order = await _order(client, world, item.id)
    code = order["code"]
    out = Outbox(factory)
    await out.skip()
    ev, org, payload = world.event.id, world.org.id, {"code": code}

    await _act(client, world, code, "mark_paid")
    await out.expect(
        ("service.event.order.payment.confirmed", ev, payload),
        ("service.event.order.paid", ev, payload),
        organizer_id=org,
    )
    await _act(client, world, code, "mark_pending")  # no core type for "unpaid"
    assert await out.actions() == []
    await _act(client, world, code, "mark_expired")
    assert await out.actions() == ["service.event.order.expired"]
    await _act(client, world, code, "extend", {"expires": "2099-12-31"})
    await out.expect(("service.event.order.expirychanged", ev, payload), organizer_id=org)
    await _act(client, world, code, "mark_canceled")
    await out.expect(("service.event.order.canceled", ev, payload), organizer_id=org)
    await _act(client, world, code, "reactivate")
    # The order was paid before it was canceled: it is paid again, but nobody paid anew.
    await out.expect(("service.event.order.reactivated", ev, payload), organizer_id=org)
    await _act(client, world, code, "regenerate_secrets")
    await out.expect(("service.event.order.changed.secret", ev, payload), organizer_id=org)

    # Canceled keeping a fee: still a cancellation.
    other = await _order(client, world, item.id)
    await out.skip()
    await _act(client, world, other["code"], "mark_canceled", {"cancellation_fee": "1.00"})
    assert await out.actions() == ["service.event.order.canceled"]


async def test_order_approval(client, world: World, factory):
    item = await h.item(factory, world.event)
    free = await h.item(factory, world.event, "0.00")
    approved = await _order(client, world, item.id, require_approval=True)
    denied = await _order(client, world, item.id, require_approval=True)
    gratis = await _order(client, world, free.id, require_approval=True)
    out = Outbox(factory)
    await out.skip()
    ev, org = world.event.id, world.org.id

    await _act(client, world, approved["code"], "approve")
    await out.expect(
        ("service.event.order.approved", ev, {"code": approved["code"]}), organizer_id=org
    )
    await _act(client, world, denied["code"], "deny")
    await out.expect(("service.event.order.denied", ev, {"code": denied["code"]}), organizer_id=org)
    await _act(client, world, gratis["code"], "approve")  # free: paid on approval
    assert await out.actions() == [
        "service.event.order.approved",
        "service.event.order.payment.confirmed",
        "service.event.order.paid",
    ]


async def test_order_patch_and_delete(client, world: World, factory):
    item = await h.item(factory, world.event)
    order = await _order(client, world, item.id)
    test = await _order(client, world, item.id, testmode=True)
    out = Outbox(factory)
    await out.skip()
    ev, org = world.event.id, world.org.id
    url = h.url(world, f"orders/{order['code']}/")
    payload = {"code": order["code"]}

    async def patch(body: dict) -> list[str]:
        await ok(await client.patch(url, json=body, headers=auth(world.admin)))
        return await out.actions()

    assert await patch({"email": "new@example.org"}) == ["service.event.order.contact.changed"]
    assert await patch({"phone": "+4930123", "comment": "VIP"}) == [
        "service.event.order.contact.changed",
        "service.event.order.modified",
    ]
    assert await patch({"expires": "2099-01-01T00:00:00Z"}) == ["service.event.order.expirychanged"]
    await ok(await client.patch(url, json={"checkin_attention": True}, headers=auth(world.admin)))
    await out.expect(("service.event.order.modified", ev, payload), organizer_id=org)
    # Nothing changed, nothing to announce.
    assert await patch({"email": "new@example.org", "comment": "VIP"}) == []

    r = await client.delete(h.url(world, f"orders/{test['code']}/"), headers=auth(world.admin))
    await ok(r, 204)
    await out.expect(("service.event.order.deleted", ev, {"code": test["code"]}), organizer_id=org)


async def test_order_position_changes(client, world: World, factory):
    item = await h.item(factory, world.event)
    order = await _order(client, world, item.id, n=2)
    first, second = (p["id"] for p in order["positions"])
    out = Outbox(factory)
    await out.skip()
    ev, org, payload = world.event.id, world.org.id, {"code": order["code"]}
    url = h.url(world, f"orderpositions/{first}/")

    async def patch(body: dict) -> list[str]:
        await ok(await client.patch(url, json=body, headers=auth(world.admin)))
        return await out.actions()

    assert await patch({"attendee_name": "Ada"}) == ["service.event.order.modified"]
    assert await patch({"secret": "brand-new-secret"}) == ["service.event.order.changed.secret"]
    assert await patch({"valid_until": "2099-01-01T00:00:00Z"}) == [
        "service.event.order.changed.validity"
    ]
    await ok(await client.patch(url, json={"blocked": ["admin"]}, headers=auth(world.admin)))
    await out.expect(("service.event.order.changed.blocked", ev, payload), organizer_id=org)
    assert await patch({"attendee_name": "Ada", "blocked": ["admin"]}) == []

    r = await client.delete(h.url(world, f"orderpositions/{second}/"), headers=auth(world.admin))
    await ok(r, 204)
    await out.expect(("service.event.order.changed.cancel", ev, payload), organizer_id=org)
