"""Gift-card products: a paid order issues one card per position, worth its price, once."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import select

from admit.giftcards.issuance import issue_for_paid_order
from admit.models import GiftCard, GiftCardTransaction, Order
from tests.factories import World, auth
from tests.giftcards.helpers import cards_url
from tests.orders import helpers as orders


async def test_paid_order_issues_cards_once(client, world: World, factory):
    voucher = await orders.item(factory, world.event, "25.00", issue_giftcard=True, admission=False)
    ticket = await orders.item(factory, world.event, "10.00")
    body = {
        "email": "fan@example.org",
        "status": "p",
        "payment_provider": "manual",
        "positions": [{"item": voucher.id}, {"item": ticket.id}, {"item": voucher.id}],
    }
    r = await client.post(orders.url(world), json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    code = r.json()["code"]
    voucher_positions = [p["id"] for p in r.json()["positions"] if p["item"] == voucher.id]

    async with factory.sessionmaker() as session:
        order = (await session.scalars(select(Order).where(Order.code == code))).one()
        # Issued by the order-paid hook when the order was created paid; again: nothing.
        assert await issue_for_paid_order(session, order) == []
        await session.commit()
        cards = (await session.scalars(select(GiftCard).order_by(GiftCard.id))).all()
        history = (await session.scalars(select(GiftCardTransaction))).all()

    assert sorted(c.issued_in_id for c in cards) == sorted(voucher_positions)
    assert all(c.value == Decimal("25.00") and c.currency == "EUR" for c in cards)
    assert all(t.order_id == order.id and t.value == Decimal("25.00") for t in history)
    assert len(history) == 2
    listed = await client.get(
        cards_url(world.org, f"{cards[0].id}/transactions/"), headers=auth(world.admin)
    )
    [opening] = listed.json()["results"]
    assert opening["order"] == code and opening["event"] == world.event.slug


async def test_marking_paid_issues_the_card(client, world: World, factory):
    product = await orders.item(factory, world.event, "30.00", issue_giftcard=True, admission=False)
    body = {"email": "fan@example.org", "positions": [{"item": product.id}]}
    r = await client.post(orders.url(world), json=body, headers=auth(world.admin))
    assert r.status_code == 201 and r.json()["status"] == "n", r.text
    listed = await client.get(cards_url(world.org), headers=auth(world.admin))
    assert listed.json()["count"] == 0  # not before it is paid
    code = r.json()["code"]
    paid = await client.post(
        orders.url(world, f"orders/{code}/mark_paid/"), headers=auth(world.admin)
    )
    assert paid.status_code == 200, paid.text
    listed = await client.get(cards_url(world.org), headers=auth(world.admin))
    assert [c["value"] for c in listed.json()["results"]] == ["30.00"]
