"""Order payments: list/detail, manual payments, confirm, cancel; the order becomes paid when
its money covers the total (an expired order only with its quota); races on one payment."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

from tests.factories import World, auth
from tests.notifications.helpers import Outbox
from tests.orders import helpers as h

CONFIRMED = "service.event.order.payment.confirmed"
PAID = "service.event.order.paid"
PAYMENT_FIELDS = {
    "local_id",
    "state",
    "amount",
    "created",
    "payment_date",
    "payment_url",
    "details",
    "provider",
}


async def place(client, world: World, item_id: int, n: int = 1, **kw: Any) -> dict:
    """An order through the API (pending unless ``status`` says otherwise)."""
    r = await client.post(h.url(world), json=h.body(item_id, n, **kw), headers=auth(world.admin))
    assert r.status_code == 201, r.text
    return r.json()


def call(client, world: World, method: str, code: str, rest: str, body: Any = None):
    url = h.url(world, f"orders/{code}/{rest}")
    if method == "GET":
        return client.get(url, headers=auth(world.admin))
    return client.post(url, json={} if body is None else body, headers=auth(world.admin))


async def get_order(client, world: World, code: str) -> dict:
    r = await client.get(h.url(world, f"orders/{code}/"), headers=auth(world.admin))
    assert r.status_code == 200, r.text
    return r.json()


async def test_list_and_detail(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    order = await place(client, world, item.id)
    r = await call(client, world, "GET", order["code"], "payments/")
    assert r.status_code == 200
    body = r.json()
    assert body["count"] == 1 and body["next"] is None and body["previous"] is None
    payment = body["results"][0]
    assert set(payment) == PAYMENT_FIELDS
    assert payment["local_id"] == 1 and payment["state"] == "created"
    assert payment["amount"] == "10.00" and payment["provider"] == "manual"
    assert payment["payment_url"] is None and payment["details"] == {}
    assert payment == order["payments"][0]
    r = await call(client, world, "GET", order["code"], "payments/1/")
    assert r.status_code == 200 and r.json() == payment
    for bad in ("2", "0", "abc", "+1", "99999999999"):
        r = await call(client, world, "GET", order["code"], f"payments/{bad}/")
        assert r.status_code == 404 and r.json() == {"detail": "Not found."}, bad
    r = await call(client, world, "GET", "NOPE1", "payments/")
    assert r.status_code == 404
    # Another event's order is as unknown as a missing one.
    url = f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/orders/{order['code']}"
    other = url.replace(world.event.slug, "elsewhere")
    await factory.event(world.org, "elsewhere")
    assert (await client.get(f"{other}/payments/", headers=auth(world.admin))).status_code == 404
    # Read permission is enough to read, not to write.
    assert (await client.get(f"{url}/payments/", headers=auth(world.nobody))).status_code == 403


async def test_confirm_makes_the_order_paid_once(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    order = await place(client, world, item.id)
    code = order["code"]
    out = Outbox(factory)
    await out.skip()
    r = await call(client, world, "POST", code, "payments/1/confirm/", {"send_email": True})
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "confirmed" and r.json()["payment_date"]
    after = await get_order(client, world, code)
    assert after["status"] == "p" and after["payment_date"] == r.json()["payment_date"]
    assert after["last_modified"] > order["last_modified"]
    ev = world.event.id
    await out.expect(
        (CONFIRMED, ev, {"code": code}), (PAID, ev, {"code": code}), organizer_id=world.org.id
    )
    r = await call(client, world, "POST", code, "payments/1/confirm/")
    assert r.status_code == 400
    assert r.json() == {"detail": "Only payments in state created or pending can be confirmed."}
    r = await call(client, world, "POST", code, "payments/1/cancel/")
    assert r.status_code == 400
    assert await out.actions() == []
    assert (await get_order(client, world, code))["last_modified"] == after["last_modified"]


async def test_partial_payments_add_up_to_paid(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    order = await place(client, world, item.id, 2)
    code = order["code"]
    out = Outbox(factory)
    await out.skip()
    r = await call(
        client, world, "POST", code, "payments/", {"amount": "5.00", "state": "confirmed"}
    )
    assert r.status_code == 201, r.text
    assert r.json()["local_id"] == 2 and r.json()["provider"] == "manual"
    assert (await get_order(client, world, code))["status"] == "n"
    assert await out.actions() == [CONFIRMED]
    r = await call(
        client, world, "POST", code, "payments/", {"amount": "15.01", "state": "confirmed"}
    )
    assert r.status_code == 400
    assert r.json() == {"amount": ["The amount exceeds what this order still owes (15.00)."]}
    r = await call(
        client,
        world,
        "POST",
        code,
        "payments/",
        {"amount": 15, "state": "confirmed", "provider": "banktransfer",
         "payment_date": "2030-01-02T03:04:05+01:00", "info": {"reference": "X1"}},
    )  # fmt: skip
    assert r.status_code == 201, r.text
    assert r.json()["payment_date"] == "2030-01-02T02:04:05Z"
    after = await get_order(client, world, code)
    assert after["status"] == "p"
    assert [p["state"] for p in after["payments"]] == ["created", "confirmed", "confirmed"]
    assert await out.actions() == [CONFIRMED, PAID]
    r = await call(client, world, "POST", code, "payments/", {"amount": "1.00"})
    assert r.status_code == 400 and r.json() == {"amount": ["This order is already paid in full."]}


async def test_mark_paid_after_a_partial_payment_books_only_what_is_owed(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    order = await place(client, world, item.id)
    code = order["code"]
    r = await call(
        client, world, "POST", code, "payments/", {"amount": "4.00", "state": "confirmed"}
    )
    assert r.status_code == 201
    r = await call(client, world, "POST", code, "mark_paid/")
    assert r.status_code == 200 and r.json()["status"] == "p"
    amounts = {p["local_id"]: (p["state"], p["amount"]) for p in r.json()["payments"]}
    # The reference: the open payment (10.00, not what is owed) is canceled and a confirmed
    # manual payment of the 6.00 still owed is added.
    assert amounts == {
        1: ("canceled", "10.00"),
        2: ("confirmed", "4.00"),
        3: ("confirmed", "6.00"),
    }


async def test_mark_paid_books_a_manual_payment_as_the_reference(client, world, factory):
    """Issue 28: the order's open bank transfer payment is canceled, a confirmed ``manual``
    payment is added, and ``payment_provider`` says ``manual``."""
    item = await h.item(factory, world.event, "10.00")
    order = await place(client, world, item.id, payment_provider="banktransfer")
    assert [(p["provider"], p["state"]) for p in order["payments"]] == [("banktransfer", "created")]
    r = await call(client, world, "POST", order["code"], "mark_paid/")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "p" and body["payment_provider"] == "manual"
    assert [(p["local_id"], p["provider"], p["state"], p["amount"]) for p in body["payments"]] == [
        (1, "banktransfer", "canceled", "10.00"),
        (2, "manual", "confirmed", "10.00"),
    ]
    assert body["payment_date"] is not None


async def test_mark_paid_confirms_an_open_manual_payment_of_the_owed_amount(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    code = (await place(client, world, item.id, payment_provider="banktransfer"))["code"]
    r = await call(
        client, world, "POST", code, "payments/", {"amount": "10.00", "provider": "manual"}
    )
    assert r.status_code == 201, r.text
    manual = r.json()["local_id"]
    before = len((await get_order(client, world, code))["payments"])
    r = await call(client, world, "POST", code, "mark_paid/")
    payments = {p["local_id"]: p for p in r.json()["payments"]}
    assert len(payments) == before  # nothing added: the open manual payment was confirmed
    assert (payments[manual]["provider"], payments[manual]["state"]) == ("manual", "confirmed")
    assert r.json()["payment_provider"] == "manual"


async def test_bad_payment_input(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    code = (await place(client, world, item.id))["code"]
    cases = [
        ({}, "amount"),
        ({"amount": "0.00"}, "amount"),
        ({"amount": "-1"}, "amount"),
        ({"amount": "1.001"}, "amount"),
        ({"amount": "abc"}, "amount"),
        ({"amount": True}, "amount"),
        ({"amount": "1", "state": "paid"}, "state"),
        ({"amount": "1", "provider": ""}, "provider"),
        ({"amount": "1", "provider": "x" * 65}, "provider"),
        ({"amount": "1", "provider": "a b"}, "provider"),
        ({"amount": "1", "payment_date": "yesterday"}, "payment_date"),
        ({"amount": "1", "info": []}, "info"),
        ({"amount": "1", "info": {str(i): i for i in range(51)}}, "info"),
        ({"amount": "11", "state": "refunded"}, "amount"),
    ]
    for body, field in cases:
        r = await call(client, world, "POST", code, "payments/", body)
        assert r.status_code == 400 and field in r.json(), (body, r.text)
    r = await call(client, world, "POST", code, "payments/", ["x"])
    assert r.status_code == 400 and "non_field_errors" in r.json()
    r = await call(client, world, "POST", code, "payments/1/confirm/", {"force": "maybe"})
    assert r.status_code == 400 and "force" in r.json()
    r = await call(client, world, "POST", "NOPE1", "payments/", {"amount": "1"})
    assert r.status_code == 404
    for action in ("confirm", "cancel", "refund"):
        r = await call(client, world, "POST", code, f"payments/7/{action}/")
        assert r.status_code == 404, action
    assert len((await get_order(client, world, code))["payments"]) == 1  # nothing written


async def test_cancel_payment_and_canceled_orders(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    code = (await place(client, world, item.id))["code"]
    r = await call(client, world, "POST", code, "payments/", {"amount": "10", "state": "pending"})
    assert r.status_code == 201 and r.json()["state"] == "pending"
    r = await call(client, world, "POST", code, "payments/2/cancel/")
    assert r.status_code == 200 and r.json()["state"] == "canceled"
    assert (await call(client, world, "POST", code, "payments/2/confirm/")).status_code == 400
    # Canceling the order cancels the money it still waited for.
    r = await call(client, world, "POST", code, "mark_canceled/")
    assert [p["state"] for p in r.json()["payments"]] == ["canceled", "canceled"]
    r = await call(client, world, "POST", code, "payments/", {"amount": "1"})
    assert r.status_code == 400
    assert r.json() == {"detail": "Payments cannot be added to a canceled order."}


async def test_expired_order_is_paid_only_with_its_quota(client, world, factory):
    item = await h.item(factory, world.event, "10.00", quota=1)
    quota = await h.quota_of(factory, item.id)
    code = (await place(client, world, item.id))["code"]
    assert (await call(client, world, "POST", code, "mark_expired/")).status_code == 200
    await place(client, world, item.id)  # someone else takes the only ticket
    out = Outbox(factory)
    await out.skip()
    body = {"amount": "10.00", "state": "confirmed"}
    r = await call(client, world, "POST", code, "payments/", body)
    assert r.status_code == 400 and "quota" in r.json()["detail"]
    r = await call(client, world, "POST", code, "payments/1/confirm/")
    assert r.status_code == 400 and "quota" in r.json()["detail"]
    order = await get_order(client, world, code)
    assert order["status"] == "e" and [p["state"] for p in order["payments"]] == ["created"]
    assert await out.actions() == []
    r = await call(client, world, "POST", code, "payments/1/confirm/", {"force": True})
    assert r.status_code == 200
    assert (await get_order(client, world, code))["status"] == "p"
    assert await h.availability(client, world, factory, quota.id) == 0
    assert await out.actions() == [CONFIRMED, PAID]


async def test_unapproved_order_cannot_be_paid(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    code = (await place(client, world, item.id, require_approval=True))["code"]
    message = {"detail": "This order is not yet approved and can not be marked as paid."}
    r = await call(client, world, "POST", code, "payments/1/confirm/")
    assert r.status_code == 400 and r.json() == message
    r = await call(client, world, "POST", code, "payments/", {"amount": "10", "state": "confirmed"})
    assert r.status_code == 400 and r.json() == message


async def test_payment_recorded_as_refunded_brings_its_refund(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    code = (await place(client, world, item.id))["code"]
    r = await call(client, world, "POST", code, "payments/", {"amount": "3", "state": "refunded"})
    assert r.status_code == 201 and r.json()["state"] == "refunded"
    order = await get_order(client, world, code)
    assert order["status"] == "n"
    [refund] = order["refunds"]
    assert refund["payment"] == 2 and refund["state"] == "done" and refund["source"] == "external"
    assert refund["amount"] == "3.00"
    # It holds no money: the order still owes all of its total.
    r = await call(client, world, "POST", code, "payments/", {"amount": "10", "state": "confirmed"})
    assert r.status_code == 201
    assert (await get_order(client, world, code))["status"] == "p"


async def test_concurrent_confirms_of_one_payment_succeed_once(client, world, factory):
    """20 confirms of one payment at once (on PostgreSQL each in its own connection): the
    order's row lock lets one through, the others see it confirmed."""
    item = await h.item(factory, world.event, "10.00")
    code = (await place(client, world, item.id))["code"]
    out = Outbox(factory)
    await out.skip()

    async def confirm() -> int:
        return (await call(client, world, "POST", code, "payments/1/confirm/")).status_code

    statuses = await asyncio.gather(*(confirm() for _ in range(20)))
    assert sorted(statuses) == [200] + [400] * 19, statuses
    order = await get_order(client, world, code)
    assert order["status"] == "p"
    assert [(p["state"], p["amount"]) for p in order["payments"]] == [("confirmed", "10.00")]
    assert await out.actions() == [CONFIRMED, PAID]


async def test_concurrent_partial_payments_never_overpay(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    code = (await place(client, world, item.id))["code"]

    async def pay() -> int:
        body = {"amount": "4.00", "state": "confirmed"}
        return (await call(client, world, "POST", code, "payments/", body)).status_code

    statuses = await asyncio.gather(*(pay() for _ in range(10)))
    assert sorted(statuses) == [201, 201] + [400] * 8, statuses
    order = await get_order(client, world, code)
    confirmed = [Decimal(p["amount"]) for p in order["payments"] if p["state"] == "confirmed"]
    assert sum(confirmed) == Decimal("8.00") and order["status"] == "n"
