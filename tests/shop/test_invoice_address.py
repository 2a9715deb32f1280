"""The invoice address at checkout: asked and required as the event says, stored on the
order, and feeding the tax rules — an EU business with a VAT ID from another member state is
reverse charged, and the checkout page shows that price before the binding order."""

from __future__ import annotations

import re

from sqlalchemy import select

from admit.models import Order, OrderPosition
from admit.shop.address import vat_id_plausible
from tests.oauth.helpers import csrf
from tests.shop import helpers as h

ADDRESS = {
    "ia_is_business": "yes",
    "ia_company": "Société Exemple SARL",
    "ia_street": "1 rue de la Paix",
    "ia_zipcode": "75002",
    "ia_city": "Paris",
    "ia_country": "FR",
    "ia_vat_id": "FR 40 303265045",
}


def test_vat_id_formats():
    assert vat_id_plausible("FR", "FR40303265045")
    assert vat_id_plausible("GR", "EL123456789")
    assert vat_id_plausible("NL", "NL123456789B01")
    assert not vat_id_plausible("FR", "DE123456789")  # another country's prefix
    assert not vat_id_plausible("DE", "DE12345")  # too short
    assert not vat_id_plausible("US", "US123456789")  # not an EU VAT ID


async def _cart_page(client, world, shop) -> tuple[str, str]:
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = csrf((await client.get(front)).text)
    r = await client.post(
        f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.ticket.id}": "1"}
    )
    assert r.status_code == 303
    return front, token


async def test_reverse_charge_shown_then_ordered(client, world, factory):
    shop = await h.setup(factory, world, invoice_address_vatid=True)
    await h.reverse_charge_rule(factory, shop)
    front, token = await _cart_page(client, world, shop)
    form = (await client.get(f"{front}checkout/")).text
    assert 'id="ia_vat_id"' in form and "23.00" in form
    base = {
        "csrf_token": token,
        "email": "compta@example.fr",
        "email_repeat": "compta@example.fr",
        "payment": "banktransfer",
    }
    # "update prices": the same form, priced for the address; nothing is ordered
    r = await client.post(f"{front}checkout/", data={**base, **ADDRESS, "step": "prices"})
    assert r.status_code == 200
    assert 'id="reverse-charge"' in r.text
    assert re.search(r'name="shown_total" value="19.33"', r.text)
    assert 'value="Société Exemple SARL"' in r.text  # the input is kept
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(Order.id)) is None
    # placing the order with the total shown before the address was typed is refused
    r = await client.post(f"{front}checkout/", data={**base, **ADDRESS, "shown_total": "23.00"})
    assert r.status_code == 400 and "The prices changed" in r.text
    r = await client.post(f"{front}checkout/", data={**base, **ADDRESS, "shown_total": "19.33"})
    assert r.status_code == 303, r.text
    async with factory.sessionmaker() as session:
        order = await session.scalar(select(Order))
        position = await session.scalar(select(OrderPosition))
    assert str(order.total) == "19.33" and str(position.tax_value) == "0.00"
    assert position.tax_code == "AE"
    address = order.invoice_address
    assert address["company"] == "Société Exemple SARL" and address["country"] == "FR"
    assert address["vat_id"] == "FR40303265045" and address["vat_id_validated"] is True


async def test_private_buyer_pays_vat_and_bad_vat_id_is_refused(client, world, factory):
    shop = await h.setup(factory, world, invoice_address_vatid=True)
    await h.reverse_charge_rule(factory, shop)
    front, token = await _cart_page(client, world, shop)
    base = {
        "csrf_token": token,
        "email": "a@example.fr",
        "email_repeat": "a@example.fr",
        "payment": "banktransfer",
    }
    r = await client.post(f"{front}checkout/", data={**base, **ADDRESS, "ia_vat_id": "FR123"})
    assert r.status_code == 400
    assert "Invoice address – VAT ID: This VAT ID does not look valid" in r.text
    private = {k: v for k, v in ADDRESS.items() if k not in ("ia_is_business", "ia_vat_id")}
    r = await client.post(f"{front}checkout/", data={**base, **private, "step": "prices"})
    assert 'name="shown_total" value="23.00"' in r.text and "reverse-charge" not in r.text
    r = await client.post(f"{front}checkout/", data={**base, **private, "shown_total": "23.00"})
    assert r.status_code == 303, r.text


async def test_required_address_and_headless_checkout(client, world, factory):
    shop = await h.setup(factory, world, invoice_address_vatid=True, invoice_address_required=True)
    await h.reverse_charge_rule(factory, shop)
    info = (await client.get(f"{h.base(world)}/")).json()
    assert info["invoice_address"]["required"] is True and info["invoice_address"]["vat_id"]
    r = await h.cart(client, world, {"item": shop.ticket.id})
    cart_id = r.json()["cart_id"]
    priced = await client.get(
        f"{h.base(world)}/carts/{cart_id}/",
        params={"country": "FR", "is_business": "true", "vat_id": "FR40303265045"},
    )
    assert priced.json()["total"] == "19.33" and priced.json()["reverse_charge"] is True
    r = await h.buy(client, world, cart_id, payment_provider="banktransfer")
    assert r.status_code == 400 and "invoice_address" in r.json()
    # a client cannot claim its VAT ID was validated: the shop decides
    claimed = {
        "is_business": True,
        "company": "Acme",
        "street": "Main St 1",
        "zipcode": "1010",
        "city": "Wien",
        "country": "AT",
        "vat_id": "ATU1",
        "vat_id_validated": True,
    }
    pay = {"payment_provider": "banktransfer"}
    r = await h.buy(client, world, cart_id, **pay, invoice_address=claimed)
    assert r.status_code == 400 and "vat_id" in r.json()["invoice_address"]
    swiss = {**claimed, "country": "CH", "vat_id": "CHE-123.456.789"}
    r = await h.buy(client, world, cart_id, **pay, invoice_address=swiss)
    assert r.status_code == 201, r.text
    async with factory.sessionmaker() as session:
        stored = await session.scalar(select(Order.invoice_address))
    assert stored["vat_id_validated"] is False  # the client's claim is not taken


async def test_headless_reverse_charge_order(client, world, factory):
    shop = await h.setup(factory, world, invoice_address_vatid=True)
    await h.reverse_charge_rule(factory, shop)
    cart_id = (await h.cart(client, world, {"item": shop.ticket.id})).json()["cart_id"]
    good = {"is_business": True, "company": "Acme", "country": "AT", "vat_id": "ATU12345678"}
    r = await h.buy(client, world, cart_id, payment_provider="banktransfer", invoice_address=good)
    assert r.status_code == 201, r.text
    assert r.json()["total"] == "19.33"
