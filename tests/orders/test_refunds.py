"""Order refunds: a payment's refund action, refunds recorded by hand, done / process /
cancel, what they do to the order (pending, canceled), overpayment after a cancellation fee,
and refunds that together would return too much, requested at once."""

from __future__ import annotations

import asyncio

from tests.factories import World
from tests.notifications.helpers import Outbox
from tests.orders import helpers as h
from tests.orders.test_payments import call, get_order, place

CREATED = "service.event.order.refund.created"
DONE = "service.event.order.refund.done"
ORDER_CANCELED = "service.event.order.canceled"
REFUND_FIELDS = {
    "local_id",
    "state",
    "source",
    "amount",
    "payment",
    "created",
    "execution_date",
    "comment",
    "provider",
    "details",
}


async def paid_order(client, world: World, factory, price: str = "10.00", n: int = 1) -> dict:
    item = await h.item(factory, world.event, price)
    return await place(client, world, item.id, n, status="p", payment_provider="banktransfer")


async def test_refund_of_a_payment_then_done(client, world, factory):
    order = await paid_order(client, world, factory)
    code = order["code"]
    out = Outbox(factory)
    await out.skip()
    r = await call(client, world, "POST", code, "payments/1/refund/", {"amount": "4.00"})
    assert r.status_code == 200, r.text
    refund = r.json()
    assert set(refund) == REFUND_FIELDS
    assert refund["local_id"] == 1 and refund["state"] == "created" and refund["source"] == "admin"
    assert refund["amount"] == "4.00" and refund["payment"] == 1
    assert refund["provider"] == "banktransfer" and refund["execution_date"] is None
    after = await get_order(client, world, code)
    assert after["refunds"] == [refund]
    # It holds 6.00 of 10.00: owes money again.
    assert after["status"] == "n" and after["last_modified"] > order["last_modified"]
    await out.expect((CREATED, world.event.id, {"code": code}), organizer_id=world.org.id)

    r = await call(client, world, "POST", code, "refunds/1/done/")
    assert r.status_code == 200 and r.json()["state"] == "done" and r.json()["execution_date"]
    assert await out.actions() == [DONE]
    assert (await call(client, world, "POST", code, "refunds/1/done/")).status_code == 400
    assert (await call(client, world, "POST", code, "refunds/1/cancel/")).status_code == 400

    r = await call(client, world, "POST", code, "payments/1/refund/", {"amount": "6.01"})
    assert r.status_code == 400
    assert r.json() == {"amount": ["Invalid refund amount, only 6.00 are available to refund."]}
    # No amount: all that is left; and the order canceled on the way.
    r = await call(client, world, "POST", code, "payments/1/refund/", {"mark_canceled": True})
    assert r.status_code == 200 and r.json()["amount"] == "6.00" and r.json()["local_id"] == 2
    assert await out.actions() == [CREATED, ORDER_CANCELED]
    assert (await get_order(client, world, code))["status"] == "c"
    r = await call(client, world, "POST", code, "refunds/2/done/")
    after = await get_order(client, world, code)
    assert after["payments"][0]["state"] == "refunded"
    r = await call(client, world, "POST", code, "payments/1/refund/")
    assert r.status_code == 400
    assert r.json() == {"detail": "Only confirmed payments can be refunded."}


async def test_refund_of_an_unpaid_payment_is_refused(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    code = (await place(client, world, item.id))["code"]
    r = await call(client, world, "POST", code, "payments/1/refund/")
    assert r.status_code == 400
    for body, field in (
        ({"amount": "0"}, "amount"),
        ({"amount": "x"}, "amount"),
        ({"mark_canceled": "x"}, "mark_canceled"),
    ):
        r = await call(client, world, "POST", code, "payments/1/refund/", body)
        assert r.status_code == 400 and field in r.json(), body


async def test_refunds_recorded_by_hand(client, world, factory):
    order = await paid_order(client, world, factory, "10.00", 2)
    code = order["code"]
    out = Outbox(factory)
    await out.skip()
    cases = [
        ({"amount": "20.01"}, "amount"),
        ({"amount": "5", "payment": 7}, "payment"),
        ({"amount": "5", "payment": True}, "payment"),
        ({"amount": "5", "source": "buyer"}, "source"),
        ({"amount": "5", "state": "requested"}, "state"),
        ({"amount": "5", "execution_date": "soon"}, "execution_date"),
        ({"amount": "5", "provider": "giftcard"}, "payment"),
        ({"state": "done"}, "amount"),
    ]
    for body, field in cases:
        r = await call(client, world, "POST", code, "refunds/", body)
        assert r.status_code == 400 and field in r.json(), (body, r.text)
    assert await out.actions() == []

    body = {"amount": "5.00", "payment": 1, "comment": "Goodwill", "provider": "manual"}
    r = await call(client, world, "POST", code, "refunds/", body)
    assert r.status_code == 201, r.text
    assert r.json()["state"] == "created" and r.json()["comment"] == "Goodwill"
    assert (await get_order(client, world, code))["status"] == "p"  # not asked to change it
    assert await out.actions() == ["service.event.order.refund.created"]
    r = await call(client, world, "POST", code, "refunds/1/cancel/")
    assert r.status_code == 200 and r.json()["state"] == "canceled"
    assert await out.actions() == ["service.event.order.refund.canceled"]

    external = {"amount": "20.00", "source": "external", "state": "external"}
    r = await call(client, world, "POST", code, "refunds/", external)
    assert r.status_code == 201 and r.json()["local_id"] == 2 and r.json()["payment"] is None
    assert await out.actions() == ["service.event.order.refund.created.externally"]
    assert (await call(client, world, "POST", code, "refunds/2/done/")).status_code == 400
    r = await call(client, world, "POST", code, "refunds/", {"amount": "0.01", "state": "failed"})
    assert r.status_code == 201
    assert await out.actions() == [
        "service.event.order.refund.created",
        "service.event.order.refund.failed",
    ]
    r = await call(client, world, "POST", code, "refunds/2/process/", {"mark_canceled": True})
    assert r.status_code == 200 and r.json()["state"] == "done"
    assert await out.actions() == [
        "service.event.order.refund.done",
        "service.event.order.canceled",
    ]
    assert (await get_order(client, world, code))["status"] == "c"
    r = await call(client, world, "POST", code, "refunds/2/process/")
    assert r.status_code == 400 and r.json() == {
        "detail": "Only external refunds can be processed."
    }

    r = await call(client, world, "GET", code, "refunds/")
    assert r.status_code == 200 and r.json()["count"] == 3
    assert [x["state"] for x in r.json()["results"]] == ["canceled", "done", "failed"]
    r2 = await call(client, world, "GET", code, "refunds/2/")
    assert r2.status_code == 200 and r2.json() == r.json()["results"][1]
    for bad in ("4", "0", "x"):
        r = await call(client, world, "GET", code, f"refunds/{bad}/")
        assert r.status_code == 404
        for action in ("done", "process", "cancel"):
            assert (
                await call(client, world, "POST", code, f"refunds/{bad}/{action}/")
            ).status_code == 404


async def test_process_without_cancel_returns_the_order_to_pending(client, world, factory):
    code = (await paid_order(client, world, factory))["code"]
    body = {"amount": "10.00", "source": "external", "state": "external", "payment": 1}
    assert (await call(client, world, "POST", code, "refunds/", body)).status_code == 201
    assert (await get_order(client, world, code))["status"] == "p"
    r = await call(client, world, "POST", code, "refunds/1/process/", {"mark_canceled": False})
    assert r.status_code == 200
    order = await get_order(client, world, code)
    assert order["status"] == "n" and order["payments"][0]["state"] == "refunded"


async def test_mark_pending_on_a_recorded_refund(client, world, factory):
    code = (await paid_order(client, world, factory))["code"]
    body = {
        "amount": "1.00",
        "state": "done",
        "mark_pending": True,
        "execution_date": "2030-01-01T01:00:00+01:00",
    }
    r = await call(client, world, "POST", code, "refunds/", body)
    assert r.status_code == 201 and r.json()["state"] == "done"
    assert r.json()["execution_date"] == "2030-01-01T00:00:00Z"
    assert (await get_order(client, world, code))["status"] == "n"


async def test_overpayment_after_a_cancellation_fee_can_be_refunded(client, world, factory):
    code = (await paid_order(client, world, factory, "20.00"))["code"]
    r = await call(client, world, "POST", code, "mark_canceled/", {"cancellation_fee": "5.00"})
    assert r.status_code == 200 and r.json()["total"] == "5.00" and r.json()["status"] == "p"
    r = await call(client, world, "POST", code, "payments/1/refund/", {"amount": "15.00"})
    assert r.status_code == 200, r.text
    assert (await get_order(client, world, code))["status"] == "p"  # the fee is still covered
    # The fee is what is left: refunding into it makes the order owe it again.
    r = await call(client, world, "POST", code, "payments/1/refund/", {"amount": "5.01"})
    assert r.status_code == 400
    assert r.json() == {"amount": ["Invalid refund amount, only 5.00 are available to refund."]}


async def test_refund_of_a_canceled_order_keeps_it_canceled(client, world, factory):
    code = (await paid_order(client, world, factory))["code"]
    assert (await call(client, world, "POST", code, "mark_canceled/")).status_code == 200
    r = await call(client, world, "POST", code, "payments/1/refund/", {"mark_canceled": True})
    assert r.status_code == 200 and r.json()["amount"] == "10.00"
    assert (await get_order(client, world, code))["status"] == "c"


async def test_refunds_that_together_exceed_the_payment_succeed_once(client, world, factory):
    """Ten refunds of the full amount at once (each in its own connection on PostgreSQL):
    exactly one is created, the others find nothing left to refund."""
    code = (await paid_order(client, world, factory))["code"]

    async def refund(i: int) -> int:
        if i % 2:
            r = await call(client, world, "POST", code, "payments/1/refund/", {"amount": "10"})
        else:
            r = await call(client, world, "POST", code, "refunds/", {"amount": "10", "payment": 1})
        return r.status_code

    statuses = await asyncio.gather(*(refund(i) for i in range(10)))
    assert sorted(s for s in statuses if s < 300) in ([200], [201]), statuses
    assert statuses.count(400) == 9, statuses
    order = await get_order(client, world, code)
    assert [x["amount"] for x in order["refunds"]] == ["10.00"]
