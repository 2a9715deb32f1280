"""Payment fees (issue 30): the settings at ``E/settings/``, the fee in the cart's preview, in
the headless checkout's order (one ``payment`` fee with its tax), on the checkout page and the
order page, in the buyer's mail; gift cards and free orders carry none; the checkout's fast
lane hands a checkout with a fee to the general path."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import select

from admit.models import OrderFee, OrderPayment, OutgoingMail, TaxRule
from admit.orders import lane
from tests.factories import auth
from tests.lane_spy import record_outcomes
from tests.oauth.helpers import csrf
from tests.shop import helpers as h

SETTINGS = "/api/v1/organizers/acme/events/summit/settings/"
FEE = {
    "payment_banktransfer__fee_abs": "0.25",
    "payment_banktransfer__fee_percent": "2.90",
}  # on 23.00, calculated back: (23.25 / 0.971) - 23 = 0.9444 -> 0.94


async def _default_vat(factory, shop) -> TaxRule:
    return await factory._add(
        TaxRule(event_id=shop.event.id, name={"en": "VAT"}, rate=Decimal("19.00"), default=True)
    )


async def test_the_fee_settings_round_trip_and_refuse_bad_values(client, world, factory):
    await h.setup(factory, world)
    r = await client.get(SETTINGS, headers=auth(world.admin))
    body = r.json()
    assert body["payment_banktransfer__fee_abs"] == "0.00"
    assert body["payment_banktransfer__fee_percent"] == "0.00"
    assert body["payment_banktransfer__fee_reverse_calc"] is True
    assert body["tax_rule_payment"] == "default"
    assert "payment_giftcard__fee_abs" not in body and "payment_free__fee_abs" not in body
    new = {
        "payment_banktransfer__fee_abs": 1.5,
        "payment_banktransfer__fee_percent": "2.9",
        "payment_banktransfer__fee_reverse_calc": False,
        "tax_rule_payment": "none",
    }
    r = await client.patch(SETTINGS, json=new, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    r = await client.get(SETTINGS, headers=auth(world.admin))
    got = {k: r.json()[k] for k in new}
    assert got == {
        "payment_banktransfer__fee_abs": "1.50",
        "payment_banktransfer__fee_percent": "2.90",
        "payment_banktransfer__fee_reverse_calc": False,
        "tax_rule_payment": "none",
    }
    bad = [
        ("payment_banktransfer__fee_abs", "lots"),
        ("payment_banktransfer__fee_abs", -1),
        ("payment_banktransfer__fee_abs", "1.505"),
        ("payment_banktransfer__fee_abs", True),
        ("payment_banktransfer__fee_abs", "NaN"),
        ("payment_banktransfer__fee_abs", "1e12"),
        ("payment_banktransfer__fee_abs", [1]),
        ("payment_banktransfer__fee_percent", 101),
        ("payment_banktransfer__fee_percent", "-0.5"),
        ("payment_banktransfer__fee_percent", "Infinity"),
        ("payment_banktransfer__fee_reverse_calc", "sometimes"),
        ("tax_rule_payment", "split-it"),
        ("tax_rule_payment", 3),
    ]
    for key, value in bad:
        r = await client.patch(SETTINGS, json={key: value}, headers=auth(world.admin))
        assert r.status_code == 400, (key, value, r.text)
        assert list(r.json()) == [key] and isinstance(r.json()[key][0], str), r.text
    # 100 % calculated back would leave the organizer nothing: refused on the merged state
    both = {
        "payment_banktransfer__fee_percent": 100,
        "payment_banktransfer__fee_reverse_calc": True,
    }
    r = await client.patch(SETTINGS, json=both, headers=auth(world.admin))
    assert r.status_code == 400 and "payment_banktransfer__fee_percent" in r.json(), r.text
    r = await client.get(SETTINGS, headers=auth(world.admin))
    assert r.json()["payment_banktransfer__fee_abs"] == "1.50"  # nothing of the refusals kept


async def test_a_headless_checkout_pays_the_fee_with_its_tax(client, world, factory):
    shop = await h.setup(factory, world, invoice_generate="True", **FEE)
    vat = await _default_vat(factory, shop)
    r = await h.cart(client, world, {"item": shop.ticket.id})
    cart = r.json()
    assert cart["total"] == "23.00"
    previews = {p["provider"]: p for p in cart["payment_fees"]}
    assert previews["banktransfer"] == {"provider": "banktransfer", "fee": "0.94", "total": "23.94"}
    assert previews["giftcard"]["fee"] == "0.00"
    r = await h.buy(client, world, cart["cart_id"], payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    order = r.json()
    assert order["total"] == "23.94"
    assert order["fees"] == [
        {
            "fee_type": "payment",
            "label": "Payment fee (Bank transfer)",
            "value": "0.94",
            "tax_rate": "19.00",
            "tax_value": "0.15",  # 0.94 - 0.94 / 1.19
        }
    ]
    assert order["payment_instructions"]["details"]["Amount"] == "23.94 EUR"
    # the order as the API has it: the fee with the default rule's tax, the payment the total
    api = await client.get(
        f"/api/v1/organizers/acme/events/summit/orders/{order['code']}/", headers=auth(world.admin)
    )
    assert api.json()["total"] == "23.94"
    (fee,) = api.json()["fees"]
    assert (fee["fee_type"], fee["value"], fee["tax_rule"], fee["tax_rate"], fee["tax_value"]) == (
        "payment",
        "0.94",
        vat.id,
        "19.00",
        "0.15",
    )
    assert fee["internal_type"] == "banktransfer" and fee["description"] == "Bank transfer"
    async with factory.sessionmaker() as session:
        payments = (await session.scalars(select(OrderPayment))).all()
        mail = await session.scalar(select(OutgoingMail))
    assert [(p.provider, p.amount) for p in payments] == [("banktransfer", Decimal("23.94"))]
    assert "Payment fee (Bank transfer): 0.94 EUR" in mail.body and "23.94 EUR" in mail.body
    assert "Payment fee (Bank transfer): 0.94 EUR" in mail.html
    # the invoice written with the order has it as a line, with its tax
    invoices = await client.get(
        "/api/v1/organizers/acme/events/summit/invoices/", headers=auth(world.admin)
    )
    (invoice,) = invoices.json()["results"]
    line = invoice["lines"][-1]
    assert (line["fee_type"], line["gross_value"], line["tax_rate"], line["tax_value"]) == (
        "payment",
        "0.94",
        "19.00",
        "0.15",
    )
    assert line["description"] == "Payment fee (Bank transfer)"  # its kind, and what for
    assert invoice["total"] == "23.94"
    # the buyer's order page (JSON) lists it too
    again = await client.get(order["url"].replace(
        f"http://testserver/{world.org.slug}/{world.event.slug}/order/",
        f"{h.base(world)}/orders/",
    ))  # fmt: skip
    assert again.status_code == 200 and again.json()["fees"] == order["fees"]


async def test_an_untaxed_fee_and_no_fee_for_gift_cards_or_free_orders(client, world, factory):
    shop = await h.setup(factory, world, tax_rule_payment="none", **FEE)
    await _default_vat(factory, shop)
    r = await h.cart(client, world, {"item": shop.ticket.id})
    r = await h.buy(client, world, r.json()["cart_id"], payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    (fee,) = r.json()["fees"]
    assert (fee["value"], fee["tax_rate"], fee["tax_value"]) == ("0.94", "0.00", "0.00")
    # a gift card paying the whole order: no fee
    await h.gift_card(factory, world, "GIFT-50", "50.00")
    r = await h.cart(client, world, {"item": shop.ticket.id})
    r = await h.buy_with_card(client, world, r.json()["cart_id"], "GIFT-50")
    assert r.status_code == 201, r.text
    assert r.json()["total"] == "23.00" and r.json()["fees"] == [] and r.json()["status"] == "p"
    # a free order: no fee, whatever method was asked for
    r = await h.cart(client, world, {"item": shop.free.id})
    assert r.json()["payment_fees"] == []
    r = await h.buy(client, world, r.json()["cart_id"], payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    assert r.json()["total"] == "0.00" and r.json()["fees"] == []
    async with factory.sessionmaker() as session:
        fees = (await session.scalars(select(OrderFee))).all()
    assert len(fees) == 1  # the first order's only


async def test_the_checkout_page_shows_each_methods_fee_and_the_order_page_the_fee(
    client, world, factory
):
    shop = await h.setup(factory, world, **FEE)
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = csrf((await client.get(front)).text)
    r = await client.post(
        f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.ticket.id}": "1"}
    )
    assert r.status_code == 303
    page = (await client.get(f"{front}checkout/")).text
    assert 'id="fee-banktransfer"' in page
    assert "+ 0.94 EUR payment fee · total 23.94 EUR" in page
    assert 'data-total="23.94 EUR"' in page and 'data-total="23.00 EUR"' in page
    assert 'id="fee-giftcard"' not in page  # no fee: nothing added to its label
    # the total shown is the checked method's (bank transfer, the first), with its fee
    assert '<strong id="total-amount">23.94 EUR</strong>' in page
    assert "with the fee of the payment method chosen" in page
    # the gift card checked (as a refused form keeps it): the total without a fee
    r = await h.checkout_form(
        client, front, token, email_repeat="x@example.org", payment="giftcard"
    )
    assert r.status_code == 400 and '<strong id="total-amount">23.00 EUR</strong>' in r.text
    r = await h.checkout_form(client, front, token, shown_total="23.00")
    assert r.status_code == 303, r.text
    order = (await client.get(r.headers["location"])).text
    assert "Payment fee (Bank transfer)" in order and "0.94 EUR" in order
    assert "23.94 EUR" in order


async def test_the_checkout_lane_hands_a_checkout_with_a_fee_to_the_general_path(
    client, world, factory, clean_app, monkeypatch
):
    shop = await h.setup(factory, world, size=5, **FEE)
    outcomes = record_outcomes(clean_app, monkeypatch, lane._checkouts)  # skips off PostgreSQL
    r = await h.cart(client, world, {"item": shop.ticket.id})
    r = await h.buy(client, world, r.json()["cart_id"], payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    assert outcomes == []  # the lane left it: the general path wrote the order, with its fee
    assert r.json()["total"] == "23.94" and r.json()["fees"][0]["value"] == "0.94"
    # without a fee the lane takes the same checkout (it is the lane's plain case)
    zero = {"payment_banktransfer__fee_abs": "0", "payment_banktransfer__fee_percent": "0"}
    patched = await client.patch(SETTINGS, json=zero, headers=auth(world.admin))
    assert patched.status_code == 200, patched.text
    r = await h.cart(client, world, {"item": shop.ticket.id})
    r = await h.buy(client, world, r.json()["cart_id"], payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    assert outcomes == ["done"] and r.json()["total"] == "23.00" and r.json()["fees"] == []


async def test_a_german_buyer_sees_the_fee_in_german(client, world, factory):
    shop = await h.setup(factory, world, locales=["en", "de"], locale="de", **FEE)
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = csrf((await client.get(front)).text)
    await client.post(f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.ticket.id}": "1"})
    page = (await client.get(f"{front}checkout/")).text
    assert "Banküberweisung" in page and "+ 0.94 EUR Zahlungsgebühr · gesamt 23.94 EUR" in page
    r = await h.checkout_form(client, front, token)
    assert r.status_code == 303, r.text
    order = (await client.get(r.headers["location"])).text
    assert "Zahlungsgebühr (Banküberweisung)" in order
    async with factory.sessionmaker() as session:
        mail = await session.scalar(select(OutgoingMail))
    assert "Zahlungsgebühr (Banküberweisung): 0.94 EUR" in mail.body
