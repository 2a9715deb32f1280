"""Paying a pending order with a gift card from its order page: part of it (the rest stays
pending, by bank transfer), the rest (paid: the paid mail through a real SMTP server, the
notifications a confirmed payment records), the refusals as sentences at the field, and one
card paying twelve orders at once (PostgreSQL: truly concurrent) never going below zero."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal

from sqlalchemy import func, select

from admit.models import GiftCard, GiftCardTransaction, Job, Order, OrderPayment, OutgoingMail
from admit.models.checkin import Notification
from admit.shop.buyer_mails import KIND
from tests.conftest import asgi_client
from tests.factories import auth
from tests.mail.conftest import Mailbox, mailbox, settle, smtp  # noqa: F401
from tests.oauth.helpers import csrf
from tests.shop import helpers as h
from tests.shop.test_concurrency import InFlight

ORDERS = 12


async def _pending(client, world, shop: h.Shop) -> tuple[str, str]:
    """A pending bank-transfer order of one 23.00 ticket: (code, the order page's path)."""
    r = await h.cart(client, world, {"item": shop.ticket.id})
    assert r.status_code == 201, r.text
    r = await h.buy(client, world, r.json()["cart_id"], payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    return r.json()["code"], "/" + r.json()["url"].split("/", 3)[3]


async def _order(factory, code: str) -> tuple[Order, list[OrderPayment]]:
    async with factory.sessionmaker() as session:
        order = await session.scalar(select(Order).where(Order.code == code))
        payments = list(
            await session.scalars(
                select(OrderPayment)
                .where(OrderPayment.order_id == order.id)
                .order_by(OrderPayment.id)
            )
        )
    return order, payments


async def test_a_card_pays_part_then_another_the_rest(
    client,
    background,
    smtp: Mailbox,  # noqa: F811  (the fixture imported above)
    world,
    factory,
):
    shop = await h.setup(factory, world)
    code, page = await _pending(client, world, shop)
    text = (await client.get(page)).text
    assert "Pay with a gift card" in text and f'action="{page}giftcard"' in text
    token = csrf(text)
    small = await h.gift_card(factory, world, "SMALL-CARD", "10.00")
    big = await h.gift_card(factory, world, "BIG-CARD", "50.00")
    r = await client.post(f"{page}giftcard", data={"gift_card": "SMALL-CARD"})
    assert r.status_code == 403  # no CSRF token
    r = await client.post(f"{page}giftcard", data={"csrf_token": token, "gift_card": "small-card"})
    assert r.status_code == 303, r.text
    after = (await client.get(page)).text
    assert "Your gift card paid 10.00 EUR; 13.00 EUR remain to be paid." in after
    assert "Please transfer 13.00 EUR" in after and "Pending payment" in after
    order, payments = await _order(factory, code)
    assert order.status == "n"
    assert [(p.provider, p.state, p.amount) for p in payments] == [
        ("banktransfer", "created", Decimal("13.00")),
        ("giftcard", "confirmed", Decimal("10.00")),
    ]
    assert await h.card_value(factory, small.id) == 0
    r = await client.post(f"{page}giftcard", data={"csrf_token": token, "gift_card": "BIG-CARD"})
    assert r.status_code == 303
    after = (await client.get(page)).text
    assert "Your gift card paid 13.00 EUR: your order is paid." in after
    assert "Pay with a gift card" not in after  # nothing left to pay
    order, payments = await _order(factory, code)
    assert order.status == "p" and payments[0].state == "canceled"
    assert await h.card_value(factory, big.id) == Decimal("37.00")
    async with factory.sessionmaker() as session:
        actions = list(
            await session.scalars(
                select(Notification.action)
                .where(Notification.payload["code"].as_string() == code)
                .order_by(Notification.id)
            )
        )
        moved = await session.scalar(
            select(func.sum(GiftCardTransaction.value)).where(
                GiftCardTransaction.order_id == order.id
            )
        )
    assert actions.count("service.event.order.payment.confirmed") == 2
    assert actions.count("service.event.order.paid") == 1
    assert moved == Decimal("-23.00")
    # The paid mail, as after any payment confirmation: composed by its job, sent by SMTP.
    app = client._transport.app
    async with app.state.db.sessionmaker() as session:
        jobs = list(await session.scalars(select(Job).where(Job.kind == KIND)))
    assert len(jobs) == 1
    assert (await settle(app, jobs[0].id)).status == "finished"
    async with app.state.db.sessionmaker() as session:
        mails = list(await session.scalars(select(OutgoingMail).order_by(OutgoingMail.id)))
    for mail in mails:
        if mail.status == "queued":
            assert (await settle(app, mail.job_id)).status == "finished"
    [paid] = [m for m in smtp.messages if "Payment received" in m["Subject"]]
    assert code in paid["Subject"] and paid["To"] == "buyer@example.org"


async def test_refused_cards_are_sentences_at_the_field(client, world, factory):
    shop = await h.setup(factory, world)
    code, page = await _pending(client, world, shop)
    token = csrf((await client.get(page)).text)
    await h.gift_card(factory, world, "EMPTY", "0.00")
    old = await h.gift_card(factory, world, "OLD", "50.00")
    dollars = await h.gift_card(factory, world, "DOLLARS", "50.00")
    async with factory.sessionmaker() as session:
        (await session.get(GiftCard, old.id)).expires = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
        (await session.get(GiftCard, dollars.id)).currency = "USD"
        await session.commit()
    cases = {
        "NOPE": "This gift card does not exist or is not accepted by this organizer.",
        "EMPTY": "This gift card has no credit left.",
        "OLD": "This gift card has expired.",
        "DOLLARS": "This gift card is in USD, but this order is paid in EUR.",
        "": "Enter the code of your gift card.",
    }
    for card, sentence in cases.items():
        r = await client.post(f"{page}giftcard", data={"csrf_token": token, "gift_card": card})
        assert r.status_code == 400, card
        assert f'<p class="error" id="gift_card-error">{sentence}</p>' in r.text, card
        assert f'name="gift_card" autocomplete="off" required maxlength="190" value="{card}"' in (
            r.text
        )
    order, payments = await _order(factory, code)
    assert order.status == "n" and len(payments) == 1
    wrong = page.rstrip("/").rsplit("/", 1)[0] + "/" + "x" * 16 + "/"
    r = await client.post(f"{wrong}giftcard", data={"csrf_token": token, "gift_card": "EMPTY"})
    assert r.status_code == 404
    # Not offered (and refused) once gift cards are off for the event.
    r = await client.patch(
        f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/settings/",
        json={"payment_giftcard__enabled": False},
        headers=auth(world.admin),
    )
    assert r.status_code == 200, r.text
    assert "Pay with a gift card" not in (await client.get(page)).text
    r = await client.post(f"{page}giftcard", data={"csrf_token": token, "gift_card": "OLD"})
    assert r.status_code == 400 and "Gift cards are not accepted for this event." in r.text


async def test_one_card_paying_twelve_orders_at_once_never_goes_negative(
    client, world, factory, clean_app
):
    shop = await h.setup(factory, world, size=50)
    pages = [(await _pending(client, world, shop))[1] for _ in range(ORDERS)]
    card = await h.gift_card(factory, world, "SHARED", "100.00")
    token = csrf((await client.get(pages[0])).text)
    flight = InFlight()
    async with asgi_client(
        clean_app, request_hooks=[flight.started], response_hooks=[flight.ended]
    ) as c:
        c.cookies = client.cookies
        answers = await asyncio.gather(
            *(
                c.post(f"{p}giftcard", data={"csrf_token": token, "gift_card": "SHARED"})
                for p in pages
            )
        )
    statuses = [r.status_code for r in answers]
    # 23.00 each: four orders paid in full, one with the card's last 8.00, seven refused.
    assert statuses.count(303) == 5 and statuses.count(400) == 7, statuses
    refused = [r for r in answers if r.status_code == 400]
    assert all("This gift card has no credit left." in r.text for r in refused)
    assert await h.card_value(factory, card.id) == 0
    async with factory.sessionmaker() as session:
        moved = await session.scalar(
            select(func.sum(GiftCardTransaction.value)).where(
                GiftCardTransaction.card_id == card.id
            )
        )
        paid = await session.scalar(
            select(func.count()).select_from(Order).where(Order.status == "p")
        )
        parts = list(
            await session.scalars(
                select(OrderPayment.amount).where(
                    OrderPayment.provider == "giftcard", OrderPayment.state == "confirmed"
                )
            )
        )
    assert moved == Decimal("-100.00") and paid == 4
    assert sorted(parts) == [Decimal("8.00")] + [Decimal("23.00")] * 4
    if not clean_app.state.db.is_sqlite:
        assert flight.most >= ORDERS // 2, f"only {flight.most} payments overlapped"
