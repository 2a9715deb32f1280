"""The headless checkout: catalog, cart with vouchers and computed prices, checkout with every
rule the shop promises, the order with its page URL, payments by the three providers."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select, update

from admit.models import CartPosition, GiftCardTransaction, Item, Order, OrderPayment
from tests.shop import helpers as h


async def test_catalog_lists_prices_and_availability(client, world, factory):
    shop = await h.setup(factory, world, size=2)
    r = await client.get(f"{h.base(world)}/catalog/")
    assert r.status_code == 200
    products = {p["name"]: p for p in r.json()["products"]}
    assert products["Ticket"]["price"] == "23.00"
    assert products["Ticket"]["availability"] == "available"
    assert products["Free entry"]["price"] == "0.00"
    # sold out once the quota is gone (into carts: "reserved")
    r = await h.cart(client, world, {"item": shop.ticket.id, "count": 2})
    assert r.status_code == 201, r.text
    r = await client.get(f"{h.base(world)}/catalog/")
    assert {p["name"]: p for p in r.json()["products"]}["Ticket"]["availability"] == "reserved"


async def test_unknown_or_offline_event_is_404(client, world, factory):
    r = await client.get(f"{h.base(world)}/catalog/")
    assert r.status_code == 404  # the event is not live
    await h.setup(factory, world)
    r = await client.get(f"/api/v1/public/organizers/{world.other.slug}/events/{world.event.slug}/")
    assert r.status_code == 404


async def test_free_ticket_checkout_is_paid_at_once(client, world, factory):
    shop = await h.setup(factory, world)
    r = await h.cart(client, world, {"item": shop.free.id})
    cart_id = r.json()["cart_id"]
    assert r.json()["total"] == "0.00"
    r = await h.buy(client, world, cart_id)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["status"] == "p"
    assert body["url"].startswith(f"http://testserver/{world.org.slug}/{world.event.slug}/order/")
    assert body["tickets"] is True
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(CartPosition)) == 0
        providers = (await session.scalars(select(OrderPayment.provider))).all()
    assert providers == ["free"]
    # the same cart cannot be checked out twice
    r = await h.buy(client, world, cart_id)
    assert r.status_code == 400
    assert "cart_id" in r.json()


async def test_bank_transfer_order_is_pending_with_instructions(client, world, factory):
    shop = await h.setup(factory, world)
    r = await h.cart(client, world, {"item": shop.ticket.id, "count": 2})
    assert r.json()["total"] == "46.00"
    r = await h.buy(client, world, r.json()["cart_id"], payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["status"] == "n" and body["total"] == "46.00"
    details = body["payment_instructions"]["details"]
    assert details["IBAN"] == h.IBAN
    assert details["Reference"] == body["code"]
    assert details["Amount"] == "46.00 EUR"
    assert body["tickets"] is False  # not before the money arrived
    # the order page's JSON twin: right secret 200, wrong secret 404
    code, secret = body["url"].rstrip("/").split("/")[-2:]
    r = await client.get(f"{h.base(world)}/orders/{code}/{secret}/")
    assert r.status_code == 200 and r.json()["code"] == code
    r = await client.get(f"{h.base(world)}/orders/{code}/{'x' * len(secret)}/")
    assert r.status_code == 404
    # the buyer may cancel a pending order (cancel_allow_user is on by default)
    r = await client.post(f"{h.base(world)}/orders/{code}/{secret}/cancel/")
    assert r.status_code == 200 and r.json()["status"] == "c"
    r = await client.post(f"{h.base(world)}/orders/{code}/{secret}/cancel/")
    assert r.status_code == 400


async def test_voucher_price_and_hidden_product(client, world, factory):
    shop = await h.setup(factory, world)
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Item).where(Item.id == shop.ticket.id).values(hide_without_voucher=True)
        )
        await session.commit()
    await h.voucher(factory, shop.event, "HALF", price_mode="percent", value=50, max_usages=1)
    r = await client.get(f"{h.base(world)}/catalog/")
    assert "Ticket" not in {p["name"] for p in r.json()["products"]}
    r = await client.get(f"{h.base(world)}/catalog/", params={"voucher": "half"})
    assert {p["name"]: p["price"] for p in r.json()["products"]}["Ticket"] == "11.50"
    r = await h.cart(client, world, {"item": shop.ticket.id})
    assert r.status_code == 400 and "item" in r.json()
    r = await h.cart(client, world, {"item": shop.ticket.id}, voucher="HALF")
    assert r.status_code == 201, r.text
    assert r.json()["total"] == "11.50"
    assert r.json()["positions"][0]["voucher"] == "HALF"
    # the voucher's one usage is held by that cart
    r2 = await h.cart(client, world, {"item": shop.ticket.id}, voucher="HALF")
    assert r2.status_code == 400 and "voucher" in str(r2.json())
    r = await h.buy(client, world, r.json()["cart_id"], payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    assert r.json()["total"] == "11.50"


async def test_checkout_validates_rules(client, world, factory):
    shop = await h.setup(
        factory, world, attendee_names_required=True, terms_url="https://example.org/terms"
    )
    q = await h.question(factory, shop.event, shop.ticket, "Company", required=True)
    async with factory.sessionmaker() as session:
        await session.execute(update(Item).where(Item.id == shop.ticket.id).values(min_per_order=2))
        await session.commit()
    r = await h.cart(client, world, {"item": shop.ticket.id})
    cart_id = r.json()["cart_id"]
    pid = r.json()["positions"][0]["id"]
    r = await h.buy(client, world, cart_id, email="nope", payment_provider="banktransfer")
    assert r.status_code == 400
    errors = r.json()
    assert errors["email"] and errors["accept_terms"]
    position = errors["positions"][0]
    assert "at least 2" in position["item"][0]
    assert position["attendee_name"] and position["answers"]
    # nothing was kept: the cart still holds its ticket
    r = await client.get(f"{h.base(world)}/carts/{cart_id}/")
    assert len(r.json()["positions"]) == 1
    r = await h.cart(client, world, {"item": shop.ticket.id}, cart_id=cart_id)
    details = [
        {"id": p["id"], "attendee_name": "Ada", "answers": [{"question": q.id, "answer": "ACME"}]}
        for p in r.json()["positions"]
    ]
    r = await h.buy(
        client,
        world,
        cart_id,
        payment_provider="banktransfer",
        accept_terms=True,
        positions=details,
    )
    assert r.status_code == 201, r.text
    assert [p["attendee_name"] for p in r.json()["positions"]] == ["Ada", "Ada"]
    assert pid in {d["id"] for d in details}


async def test_sale_window_and_closed_shop(client, world, factory):
    shop = await h.setup(factory, world)
    r = await h.cart(client, world, {"item": shop.ticket.id})
    cart_id = r.json()["cart_id"]
    past = dt.datetime(2001, 1, 1, tzinfo=dt.UTC)
    async with factory.sessionmaker() as session:
        # an ORM write, as the organizer's: it moves the catalog's stamp (the lanes' copies)
        item = await session.get(Item, shop.ticket.id)
        item.available_until = past
        await session.commit()
    r = await h.buy(client, world, cart_id, payment_provider="banktransfer")
    assert r.status_code == 400
    assert "ended" in r.json()["positions"][0]["item"][0]
    r = await h.cart(client, world, {"item": shop.free.id})
    assert r.status_code == 201


async def test_gift_card_pays_all_or_leaves_the_rest_to_bank_transfer(client, world, factory):
    shop = await h.setup(factory, world)
    card = await h.gift_card(factory, world, "GIFT-30", "30.00")
    r = await h.cart(client, world, {"item": shop.ticket.id})
    r = await h.buy_with_card(client, world, r.json()["cart_id"], "gift-30")
    assert r.status_code == 201, r.text
    assert r.json()["status"] == "p"
    assert await h.card_value(factory, card.id) == 7
    r = await h.cart(client, world, {"item": shop.ticket.id})
    r = await h.buy_with_card(client, world, r.json()["cart_id"], "GIFT-30")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["status"] == "n"
    assert body["payment_instructions"]["details"]["Amount"] == "16.00 EUR"
    assert await h.card_value(factory, card.id) == 0
    async with factory.sessionmaker() as session:
        total = await session.scalar(select(func.sum(GiftCardTransaction.value)))
        paid = await session.scalar(
            select(func.count()).select_from(Order).where(Order.status == "p")
        )
    assert total == -30 and paid == 1
    r = await h.cart(client, world, {"item": shop.ticket.id})
    r = await h.buy_with_card(client, world, r.json()["cart_id"], "GIFT-30")
    assert r.status_code == 400 and r.json() == {
        "gift_card": ["This gift card has no credit left."]
    }


async def test_event_settings_carry_the_shop_keys(client, world, factory):
    await h.setup(factory, world)
    from tests.factories import auth

    url = f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/settings/"
    r = await client.patch(
        url,
        json={"shop_open": False, "terms_url": "https://example.org/t"},
        headers=auth(world.admin),
    )
    assert r.status_code == 200, r.text
    assert r.json()["shop_open"] is False and r.json()["payment_giftcard__enabled"] is True
    r = await client.get(f"{h.base(world)}/")
    assert r.json()["shop_open"] is False
    r = await h.cart(client, world, {"item": 1})
    assert r.status_code == 400 and "closed" in str(r.json())


async def test_the_buyer_gets_a_mail_with_payment_instructions(client, world, factory):
    from admit.models import OutgoingMail

    shop = await h.setup(factory, world, contact_mail="help@acme.example")
    r = await h.cart(client, world, {"item": shop.ticket.id})
    r = await h.buy(client, world, r.json()["cart_id"], payment_provider="banktransfer")
    code = r.json()["code"]
    r = await h.cart(client, world, {"item": shop.free.id})
    r = await h.buy(client, world, r.json()["cart_id"])
    free_code = r.json()["code"]
    async with factory.sessionmaker() as session:
        mails = (await session.scalars(select(OutgoingMail).order_by(OutgoingMail.id))).all()
    assert [m.to for m in mails] == [["buyer@example.org"], ["buyer@example.org"]]
    pending, paid = mails
    assert code in pending.subject and "please pay" in pending.subject
    assert h.IBAN in pending.body and f"Reference: {code}" in pending.body
    assert f"/order/{code}/" in pending.body and "help@acme.example" in pending.body
    assert h.IBAN in pending.html and "<script" not in pending.html
    assert free_code in paid.subject and "Your tickets" in paid.subject
    assert "Your order is complete" in paid.body


async def test_an_expired_cart_is_shown_and_checked_again(client, world, factory):
    shop = await h.setup(factory, world, size=1)
    r = await h.cart(client, world, {"item": shop.ticket.id})
    cart_id = r.json()["cart_id"]
    past = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    async with factory.sessionmaker() as session:
        await session.execute(update(CartPosition).values(expires=past))
        await session.commit()
    r = await client.get(f"{h.base(world)}/carts/{cart_id}/")
    assert [p["expired"] for p in r.json()["positions"]] == [True]
    assert r.json()["expires"] is None and r.json()["seconds_left"] == 0
    # someone else takes the unit the expired cart let go: the checkout says so
    other = await h.cart(client, world, {"item": shop.ticket.id})
    assert other.status_code == 201
    r = await h.buy(client, world, cart_id, payment_provider="banktransfer")
    assert r.status_code == 400 and "not enough quota" in str(r.json())


async def test_a_keyed_checkout_repeated_replays_the_one_order(client, world, factory):
    """A buyer's client that repeats its checkout after a lost answer (same
    ``X-Idempotency-Key``, no credentials: keyed per client address) gets the first answer
    again, and one order exists."""
    shop = await h.setup(factory, world)
    cart_id = (await h.cart(client, world, {"item": shop.ticket.id})).json()["cart_id"]
    body = {"cart_id": cart_id, "email": "buyer@example.org", "payment_provider": "banktransfer"}
    keyed = {"X-Idempotency-Key": "checkout-1"}
    first = await client.post(f"{h.base(world)}/checkout/", json=body, headers=keyed)
    again = await client.post(f"{h.base(world)}/checkout/", json=body, headers=keyed)
    assert first.status_code == 201, first.text
    assert again.status_code == 201 and again.content == first.content
    assert again.headers.get("idempotent-replayed") == "true"
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(Order)) == 1
