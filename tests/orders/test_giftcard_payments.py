"""Gift cards paying for orders: debited in the payment's transaction (with a transaction row
naming the order and payment), refused when short, expired, foreign, in another currency or
the wrong mode; refunded back to the card; concurrent debits never take a card below zero."""

from __future__ import annotations

import asyncio
from decimal import Decimal

from sqlalchemy import select

from admit.giftcards.service import transact
from admit.models import GiftCardTransaction
from tests.factories import World
from tests.giftcards.helpers import accept, card, in_days, ledger
from tests.notifications.helpers import Outbox
from tests.orders import helpers as h
from tests.orders.test_payments import call, get_order, place

PAID = "service.event.order.paid"
CONFIRMED = "service.event.order.payment.confirmed"


def pay(card_ref: int | str, amount: str, state: str = "confirmed") -> dict:
    key = "gift_card" if isinstance(card_ref, int) else "gift_card_secret"
    return {"provider": "giftcard", "amount": amount, "state": state, "info": {key: card_ref}}


async def pending(client, world: World, factory, price: str = "20.00") -> str:
    item = await h.item(factory, world.event, price)
    return (await place(client, world, item.id))["code"]


async def transactions(factory, card_id: int) -> list[GiftCardTransaction]:
    async with factory.sessionmaker() as session:
        query = select(GiftCardTransaction).where(GiftCardTransaction.card_id == card_id)
        return list(await session.scalars(query.order_by(GiftCardTransaction.id)))


async def test_a_card_pays_an_order_and_is_refunded(client, world, factory):
    gc = await card(factory, world.org, "50.00")
    code = await pending(client, world, factory)
    out = Outbox(factory)
    await out.skip()
    r = await call(client, world, "POST", code, "payments/", pay(gc.id, "20.00"))
    assert r.status_code == 201, r.text
    payment = r.json()
    assert payment["state"] == "confirmed" and payment["provider"] == "giftcard"
    assert payment["details"] == {
        "gift_card": {"id": gc.id, "secret": gc.secret, "organizer": world.org.slug}
    }
    assert (await get_order(client, world, code))["status"] == "p"
    assert await ledger(factory, gc.id) == (Decimal("30.00"), Decimal("30.00"), 2)
    debit = (await transactions(factory, gc.id))[-1]
    assert debit.value == Decimal("-20.00") and debit.acceptor_id == world.org.id
    order_id = debit.order_id
    assert order_id is not None and debit.payment_id is not None
    assert await out.actions() == [CONFIRMED, PAID]

    r = await call(client, world, "POST", code, "payments/2/refund/", {"amount": "5.00"})
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "done" and r.json()["provider"] == "giftcard"
    assert r.json()["details"]["gift_card"]["id"] == gc.id
    assert await ledger(factory, gc.id) == (Decimal("35.00"), Decimal("35.00"), 3)
    credit = (await transactions(factory, gc.id))[-1]
    assert credit.value == Decimal("5.00") and credit.order_id == order_id
    assert await out.actions() == [
        "service.event.order.refund.created",
        "service.event.order.refund.done",
    ]
    assert (await get_order(client, world, code))["status"] == "n"  # 15 of 20 held
    r = await call(client, world, "POST", code, "payments/2/refund/", {"mark_canceled": True})
    assert r.status_code == 200 and r.json()["amount"] == "15.00"
    order = await get_order(client, world, code)
    assert order["status"] == "c"
    assert [p["state"] for p in order["payments"]] == ["canceled", "refunded"]
    assert await ledger(factory, gc.id) == (Decimal("50.00"), Decimal("50.00"), 4)


async def test_secret_and_partial_payment_then_the_rest(client, world, factory):
    gc = await card(factory, world.org, "8.00", secret="SPENDME")
    code = await pending(client, world, factory)
    r = await call(client, world, "POST", code, "payments/", pay("spendme", "8.00"))
    assert r.status_code == 201, r.text
    assert (await get_order(client, world, code))["status"] == "n"
    r = await call(client, world, "POST", code, "payments/", pay(gc.id, "0.01"))
    assert r.status_code == 409
    assert r.json() == {
        "amount": ["The gift card does not have sufficient credit for this operation."]
    }
    r = await call(
        client, world, "POST", code, "payments/", {"amount": "12.00", "state": "confirmed"}
    )
    assert r.status_code == 201
    assert (await get_order(client, world, code))["status"] == "p"
    assert await ledger(factory, gc.id) == (Decimal("0.00"), Decimal("0.00"), 2)


async def test_cards_that_cannot_pay(client, world, factory):
    code = await pending(client, world, factory)
    short = await card(factory, world.org, "19.99")
    expired = await card(factory, world.org, "50.00", expires=in_days(-1))
    foreign = await card(factory, world.other, "50.00")
    dollars = await card(factory, world.org, "50.00", currency="USD")
    test = await card(factory, world.org, "50.00", testmode=True)
    r = await call(client, world, "POST", code, "payments/", pay(short.id, "20.00"))
    assert r.status_code == 409 and "amount" in r.json()
    for gc, message in (
        (expired, "This gift card has expired."),
        (foreign, "This gift card does not exist or is not accepted by this organizer."),
        (dollars, "This gift card is in a different currency."),
        (test, "A test gift card can only pay test orders."),
    ):
        r = await call(client, world, "POST", code, "payments/", pay(gc.id, "20.00"))
        assert r.status_code == 400 and r.json() == {"info": [message]}, r.text
    for info in ({}, {"gift_card": "x"}, {"gift_card": 2**40}, {"gift_card_secret": ""}):
        body = {"provider": "giftcard", "amount": "1", "state": "confirmed", "info": info}
        r = await call(client, world, "POST", code, "payments/", body)
        assert r.status_code == 400 and "info" in r.json(), info
    body = {**pay(short.id, "1.00"), "state": "refunded"}
    r = await call(client, world, "POST", code, "payments/", body)
    assert r.status_code == 400 and "state" in r.json()
    order = await get_order(client, world, code)
    assert order["status"] == "n" and len(order["payments"]) == 1  # nothing was written
    assert await ledger(factory, short.id) == (Decimal("19.99"), Decimal("19.99"), 1)
    # Accepting the other organizer's cards lets them pay here.
    await accept(factory, world.other, world.org)
    r = await call(client, world, "POST", code, "payments/", pay(foreign.id, "20.00"))
    assert r.status_code == 201, r.text
    assert r.json()["details"]["gift_card"]["organizer"] == world.other.slug
    assert await ledger(factory, foreign.id) == (Decimal("30.00"), Decimal("30.00"), 2)


async def test_a_created_card_payment_is_debited_when_confirmed(client, world, factory):
    gc = await card(factory, world.org, "50.00")
    code = await pending(client, world, factory)
    assert (await call(client, world, "POST", code, "payments/1/cancel/")).status_code == 200
    r = await call(client, world, "POST", code, "payments/", pay(gc.id, "20.00", "created"))
    assert r.status_code == 201 and r.json()["state"] == "created"
    assert await ledger(factory, gc.id) == (Decimal("50.00"), Decimal("50.00"), 1)
    # mark_paid books money by hand: it does not pretend the card was charged; as in the
    # reference, the open card payment is canceled (the card keeps its value).
    r = await call(client, world, "POST", code, "mark_paid/")
    assert [p["state"] for p in r.json()["payments"]] == ["canceled", "canceled", "confirmed"]
    assert await ledger(factory, gc.id) == (Decimal("50.00"), Decimal("50.00"), 1)
    # Another order: the same card confirmed later, after its value dropped.
    code2 = await pending(client, world, factory)
    r = await call(client, world, "POST", code2, "payments/", pay(gc.id, "20.00", "pending"))
    assert r.status_code == 201
    async with factory.sessionmaker() as session:
        await transact(session, world.org.id, gc.id, Decimal("-45.00"), include_accepted=False)
        await session.commit()
    r = await call(client, world, "POST", code2, "payments/2/confirm/")
    assert r.status_code == 409
    assert [p["state"] for p in (await get_order(client, world, code2))["payments"]] == [
        "created",
        "pending",
    ]
    r = await call(client, world, "POST", code2, "payments/2/cancel/")
    assert r.status_code == 200
    assert await ledger(factory, gc.id) == (Decimal("5.00"), Decimal("5.00"), 2)


async def test_recorded_gift_card_refund_credits_when_done(client, world, factory):
    gc = await card(factory, world.org, "50.00")
    code = await pending(client, world, factory)
    assert (
        await call(client, world, "POST", code, "payments/", pay(gc.id, "20.00"))
    ).status_code == 201
    body = {"amount": "20.00", "provider": "giftcard", "payment": 2}
    r = await call(client, world, "POST", code, "refunds/", body)
    assert r.status_code == 201 and r.json()["state"] == "created"
    assert await ledger(factory, gc.id) == (Decimal("30.00"), Decimal("30.00"), 2)
    r = await call(client, world, "POST", code, "refunds/1/done/")
    assert r.status_code == 200 and r.json()["details"]["gift_card"]["id"] == gc.id
    assert await ledger(factory, gc.id) == (Decimal("50.00"), Decimal("50.00"), 3)
    # An external gift card refund happened elsewhere: the card is not credited here.
    code2 = await pending(client, world, factory)
    assert (
        await call(client, world, "POST", code2, "payments/", pay(gc.id, "20.00"))
    ).status_code == 201
    external = {"amount": "20", "provider": "giftcard", "source": "external", "state": "done"}
    assert (await call(client, world, "POST", code2, "refunds/", external)).status_code == 201
    assert await ledger(factory, gc.id) == (Decimal("30.00"), Decimal("30.00"), 4)


async def test_racing_debits_never_take_a_card_below_zero(client, world, factory):
    """Twelve orders of 10.00 paid at once from one card of 50.00 (on PostgreSQL each request
    in its own connection): exactly five are paid, the card ends at zero and its history
    adds up to its value."""
    gc = await card(factory, world.org, "50.00")
    item = await h.item(factory, world.event, "10.00")
    codes = [(await place(client, world, item.id))["code"] for _ in range(12)]

    async def pay_one(code: str) -> int:
        return (
            await call(client, world, "POST", code, "payments/", pay(gc.id, "10.00"))
        ).status_code

    statuses = await asyncio.gather(*(pay_one(c) for c in codes))
    assert sorted(statuses) == [201] * 5 + [409] * 7, statuses
    assert await ledger(factory, gc.id) == (Decimal("0.00"), Decimal("0.00"), 6)
    paid = [c for c in codes if (await get_order(client, world, c))["status"] == "p"]
    assert len(paid) == 5
