"""The order page's history (who did what, from the notifications outbox) and refunds through
the API's own money routes."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, select

from admit.models import GiftCard, GiftCardTransaction, Notification, Order, OrderRefund
from tests.control.conftest import E
from tests.control.test_pages import _as
from tests.oauth.helpers import csrf


async def test_history_names_the_token_and_the_user(web, api, people, factory, shop):
    code = shop.orders[1]["code"]
    headers = {"Authorization": f"Token {shop.token}"}
    extended = await api.post(f"{E}/orders/{code}/extend/", json={"expires": "2099-01-01"},
                              headers=headers)  # fmt: skip
    assert extended.status_code == 200, extended.text
    await _as(web, people["boss"])
    token = csrf((await web.get(f"{shop.base}orders/{code}/")).text)
    paid = await web.post(f"{shop.base}orders/{code}/mark_paid", data={"csrf_token": token})
    assert paid.status_code == 303
    async with factory.sessionmaker() as session:
        rows = (
            await session.execute(
                select(Notification.action, Notification.actor_kind)
                .where(Notification.action.in_(["service.event.order.expirychanged",
                                                "service.event.order.paid"]),
                       Notification.payload["code"].as_string() == code)
                .order_by(Notification.id)
            )
        ).all()  # fmt: skip
    assert rows == [("service.event.order.expirychanged", "token"),
                    ("service.event.order.paid", "user")]  # fmt: skip
    page = (await web.get(f"{shop.base}orders/{code}/")).text
    history = page[page.index("<h2>History</h2>") :]
    assert "Payment deadline changed" in history and "API token" in history
    assert "Marked as paid" in history and "user Boss" in history
    assert history.index("Payment deadline changed") < history.index("Marked as paid")


async def test_refund_part_then_mark_done(web, api, people, factory, shop):
    await _as(web, people["boss"])
    code = shop.orders[0]["code"]  # paid, 20.00
    url = f"{shop.base}orders/{code}/"
    page = await web.get(url)
    assert 'id="refund-payment"' in page.text
    token = csrf(page.text)
    too_much = await web.post(url + "refund", data={"csrf_token": token, "payment": "1",
                                                    "amount": "500.00"})  # fmt: skip
    assert too_much.status_code == 400
    assert 'id="refund-amount-error"' in too_much.text
    assert "only 20.00 are available to refund" in too_much.text
    assert 'value="500.00"' in too_much.text
    part = await web.post(url + "refund", data={"csrf_token": token, "payment": "1",
                                                "amount": "5.00"})  # fmt: skip
    assert part.status_code == 303, part.text[part.text.find("<main") :][:2000]
    refunds = await api.get(f"{E}/orders/{code}/refunds/",
                            headers={"Authorization": f"Token {shop.token}"})  # fmt: skip
    [refund] = refunds.json()["results"]
    assert refund["amount"] == "5.00" and refund["state"] == "created"
    done = await web.post(url + f"refunds/{refund['local_id']}/done", data={"csrf_token": token})
    assert done.status_code == 303
    again = await web.post(url + f"refunds/{refund['local_id']}/done", data={"csrf_token": token})
    assert again.status_code == 400 and "Only refunds in state created or transit" in again.text
    after = await web.get(url)
    assert "Refund created" in after.text and "Refund done" in after.text
    async with factory.sessionmaker() as session:
        order = (await session.scalars(select(Order).where(Order.code == code))).one()
        # the API's rule: a paid order left short by a refund is pending again (15 of 20)
        assert order.status == "n"


async def test_refund_onto_a_new_gift_card(web, api, people, factory, shop):
    """The money goes onto a new card of the organizer, at once: the card holds it (its
    transaction names the order), the refund is done and names the card, and the card can pay."""
    await _as(web, people["boss"])
    code = shop.orders[0]["code"]  # paid, 20.00
    url = f"{shop.base}orders/{code}/"
    token = csrf((await web.get(url)).text)
    refused = await web.post(url + "refund", data={"csrf_token": token, "payment": "1",
                                                   "amount": "lots", "to": "giftcard"})  # fmt: skip
    assert refused.status_code == 400 and 'id="refund-amount-error"' in refused.text
    assert 'value="giftcard" checked' in refused.text  # the choice kept
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(GiftCard)) == 0
    done = await web.post(url + "refund", data={"csrf_token": token, "payment": "1",
                                                "amount": "7.50", "to": "giftcard"})  # fmt: skip
    assert done.status_code == 303, done.text[done.text.find("<main") :][:2000]
    headers = {"Authorization": f"Token {shop.token}"}
    [refund] = (await api.get(f"{E}/orders/{code}/refunds/", headers=headers)).json()["results"]
    assert (refund["amount"], refund["state"], refund["provider"]) == ("7.50", "done", "giftcard")
    async with factory.sessionmaker() as session:
        card = (await session.scalars(select(GiftCard))).one()
        [booked] = (await session.scalars(select(GiftCardTransaction))).all()
        order = (await session.scalars(select(Order).where(Order.code == code))).one()
        info = (await session.scalars(select(OrderRefund.info))).one()
    assert card.value == Decimal("7.50") and card.currency == "EUR"
    assert booked.value == Decimal("7.50") and booked.order_id == order.id
    assert info["gift_card"] == {"id": card.id, "secret": card.secret}
    assert order.status == "n"  # short of its total: pending again, as any refund leaves it
    page = (await web.get(url)).text
    assert card.secret in page and "Refund done" in page
