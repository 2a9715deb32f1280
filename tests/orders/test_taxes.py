"""Tax rules applied to the invoice address when orders are created and changed through the
API: positions (price, tax_rate, tax_value, tax_code), fees and totals; a blocked sale is 400
and sells nothing; a rule's ``require_approval`` action is the shop's: an order created through
the API needs approval only when its creator asks (as the reference answers)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import func, select

from admit.catalog.taxes.rules import Buyer, applicable
from admit.models import Notification, Order, OrderPosition, TaxRule
from tests.factories import auth
from tests.orders import helpers as h

FR_BUSINESS = {
    "is_business": True,
    "company": "Société",
    "country": "FR",
    "vat_id": "FR12345678901",
    "vat_id_validated": True,
}
US_PERSON = {"name": "Sam", "country": "US"}
DE_PERSON = {"name": "Max", "country": "DE"}
GB_BUSINESS = {"is_business": True, "company": "Ltd", "country": "GB"}

CUSTOM = [
    {"country": "EU", "address_type": "business_vat_id", "action": "reverse"},
    {"country": "US", "address_type": "", "action": "block"},
    {"country": "GB", "address_type": "business", "action": "require_approval"},
    {"country": "CH", "address_type": "", "action": "vat", "rate": "8.10", "code": "S/reduced"},
]


async def _rule(factory, world, **kw: Any) -> TaxRule:
    async with factory.sessionmaker() as s:
        rule = TaxRule(
            event_id=world.event.id,
            name={"en": "VAT"},
            rate=Decimal("19.00"),
            code="S/standard",
            home_country="DE",
            **kw,
        )
        s.add(rule)
        await s.commit()
        return rule


async def _post(client, world, body: dict) -> Any:
    return await client.post(h.url(world), json=body, headers=auth(world.admin))


def _taxes(position: dict) -> tuple[str, str, str, str | None]:
    return position["price"], position["tax_rate"], position["tax_value"], position["tax_code"]


async def test_eu_reverse_charge_by_invoice_address(client, world, factory):
    rule = await _rule(factory, world, eu_reverse_charge=True)
    ticket = await h.item(factory, world.event, "119.00", tax_rule_id=rule.id)
    fee = {"fee_type": "service", "value": "5.95", "tax_rule": rule.id}
    cases = [
        (FR_BUSINESS, ("100.00", "0.00", "0.00", "AE"), ("5.95", "0.00", "0.00", "AE")),
        (US_PERSON, ("100.00", "0.00", "0.00", "O"), ("5.95", "0.00", "0.00", "O")),
        (DE_PERSON, ("119.00", "19.00", "19.00", "S/standard"), ("5.95", "19.00", "0.95", None)),
        (None, ("119.00", "19.00", "19.00", "S/standard"), ("5.95", "19.00", "0.95", None)),
    ]
    for address, position, fee_taxes in cases:
        body = {
            "positions": [{"item": ticket.id}, {"item": ticket.id, "price": "50.00"}],
            "fees": [fee],
            "invoice_address": address,
        }
        r = await _post(client, world, body)
        assert r.status_code == 201, r.text
        data = r.json()
        computed, given = data["positions"]
        assert _taxes(computed) == position, address
        # A price the client gives is gross and stays; only the tax follows the address.
        assert given["price"] == "50.00" and given["tax_code"] == position[3]
        assert given["tax_value"] == ("0.00" if position[1] == "0.00" else "7.98")
        [f] = data["fees"]
        assert (f["value"], f["tax_rate"], f["tax_value"]) == fee_taxes[:3]
        assert f["tax_code"] == (fee_taxes[3] or position[3])
        total = Decimal(computed["price"]) + Decimal("50.00") + Decimal("5.95")
        assert data["total"] == f"{total:.2f}"
        detail = await client.get(
            h.url(world, f"orders/{data['code']}/"), headers=auth(world.admin)
        )
        assert detail.json() == data


async def test_keep_gross_if_rate_changes(client, world, factory):
    rule = await _rule(factory, world, eu_reverse_charge=True, keep_gross_if_rate_changes=True)
    ticket = await h.item(factory, world.event, "119.00", tax_rule_id=rule.id)
    r = await _post(
        client, world, {"positions": [{"item": ticket.id}], "invoice_address": FR_BUSINESS}
    )
    assert _taxes(r.json()["positions"][0]) == ("119.00", "0.00", "0.00", "AE")
    assert r.json()["total"] == "119.00"


async def test_net_prices_keep_their_net_amount(client, world, factory):
    rule = await _rule(factory, world, custom_rules=CUSTOM, price_includes_tax=False)
    ticket = await h.item(factory, world.event, "100.00", tax_rule_id=rule.id)
    swiss = {"name": "Heidi", "country": "CH"}
    r = await _post(client, world, {"positions": [{"item": ticket.id}], "invoice_address": swiss})
    assert _taxes(r.json()["positions"][0]) == ("108.10", "8.10", "8.10", "S/reduced")
    r = await _post(
        client, world, {"positions": [{"item": ticket.id}], "invoice_address": FR_BUSINESS}
    )
    assert _taxes(r.json()["positions"][0]) == ("100.00", "0.00", "0.00", "AE")


async def test_a_blocked_sale_is_400_and_sells_nothing(client, world, factory):
    rule = await _rule(factory, world, custom_rules=CUSTOM)
    ticket = await h.item(factory, world.event, "20.00", tax_rule_id=rule.id, quota=5)
    untaxed = await h.item(factory, world.event, "5.00", quota=5)
    quota = await h.quota_of(factory, ticket.id)
    before = await h.availability(client, world, factory, quota.id)
    body = {
        "positions": [{"item": untaxed.id}, {"item": ticket.id}],
        "invoice_address": US_PERSON,
    }
    r = await _post(client, world, body)
    assert r.status_code == 400, r.text
    message = (
        'The tax rule "VAT" does not allow this sale for the given invoice address '
        "(custom rule 2 blocks it)."
    )
    assert r.json() == {"positions": [{}, {"item": [message]}]}
    fee_only = {
        "positions": [{"item": untaxed.id}],
        "fees": [{"fee_type": "shipping", "value": "3.00", "tax_rule": rule.id}],
        "invoice_address": US_PERSON,
    }
    r = await _post(client, world, fee_only)
    assert r.json() == {"fees": [{"tax_rule": [message]}]}
    async with factory.sessionmaker() as s:
        assert await s.scalar(select(func.count()).select_from(Order)) == 0
        assert await s.scalar(select(func.count()).select_from(OrderPosition)) == 0
        assert await s.scalar(select(func.count()).select_from(Notification)) == 0
    assert await h.availability(client, world, factory, quota.id) == before == 5
    # The same products sell to an address the rule allows.
    body["invoice_address"] = DE_PERSON
    assert (await _post(client, world, body)).status_code == 201


async def test_require_approval_action_is_not_forced_on_api_orders(client, world, factory):
    """Side by side with the reference: an API order matching a ``require_approval`` rule is
    created as asked (a box office selling paid tickets gets a paid order); the pricing still
    reports the rule's wish for the shop's checkout."""
    rule = await _rule(factory, world, custom_rules=CUSTOM)
    ticket = await h.item(factory, world.event, "20.00", tax_rule_id=rule.id)
    body = {"positions": [{"item": ticket.id}], "invoice_address": GB_BUSINESS}
    r = await _post(client, world, body)
    assert r.status_code == 201, r.text
    data = r.json()
    assert (data["require_approval"], data["status"]) == (False, "n")
    assert _taxes(data["positions"][0]) == ("20.00", "19.00", "3.19", "S/standard")
    r = await _post(client, world, {**body, "status": "p", "payment_provider": "manual"})
    assert (r.json()["require_approval"], r.json()["status"]) == (False, "p")
    # Asked for, approval holds the order as before.
    r = await _post(client, world, {**body, "require_approval": True})
    assert (r.json()["require_approval"], r.json()["status"]) == (True, "n")
    async with factory.sessionmaker() as s:
        actions = list(await s.scalars(select(Notification.action).order_by(Notification.id)))
    assert actions[-1] == "service.event.order.placed.require_approval"
    assert applicable(rule, Buyer.of(GB_BUSINESS)).requires_approval  # for the shop


async def _change(client, world, code: str, body: dict) -> Any:
    return await client.post(
        h.url(world, f"orders/{code}/change/"), json=body, headers=auth(world.admin)
    )


async def test_order_changes_apply_the_invoice_address(client, world, factory):
    rule = await _rule(factory, world, custom_rules=CUSTOM)
    ticket = await h.item(factory, world.event, "119.00", tax_rule_id=rule.id)
    plain = await h.tax_rule(factory, world.event, "19.00")
    body = {
        "positions": [{"item": ticket.id}],
        "fees": [{"fee_type": "shipping", "value": "11.90", "tax_rule": plain.id}],
        "invoice_address": FR_BUSINESS,
    }
    order = (await _post(client, world, body)).json()
    assert _taxes(order["positions"][0]) == ("100.00", "0.00", "0.00", "AE")
    # Added positions are priced for the address; a patched price stays gross.
    r = await _change(
        client,
        world,
        order["code"],
        {
            "create_positions": [{"item": ticket.id}],
            "patch_positions": [
                {"position": order["positions"][0]["id"], "body": {"price": "80.00"}}
            ],
        },
    )
    assert r.status_code == 200, r.text
    first, added = r.json()["positions"]
    assert _taxes(first) == ("80.00", "0.00", "0.00", "AE")
    assert _taxes(added) == ("100.00", "0.00", "0.00", "AE")
    # The fee's rule is plain: its tax stays. Recalculating moves both to the rule's reading.
    async with factory.sessionmaker() as s:
        stored = await s.get(TaxRule, plain.id)
        stored.custom_rules = [{"country": "FR", "address_type": "", "action": "no", "code": "E"}]
        await s.commit()
    r = await _change(client, world, order["code"], {"recalculate_taxes": "keep_gross"})
    assert r.status_code == 200, r.text
    [fee] = r.json()["fees"]
    assert (fee["value"], fee["tax_value"], fee["tax_code"]) == ("11.90", "0.00", "E")
    assert r.json()["total"] == "191.90"
    # A buyer the rule blocks gets no new positions.
    blocked = (
        await _post(
            client,
            world,
            {"positions": [{"item": ticket.id}], "invoice_address": DE_PERSON},
        )
    ).json()
    async with factory.sessionmaker() as s:
        stored = await s.get(TaxRule, rule.id)
        stored.custom_rules = [{"country": "DE", "address_type": "", "action": "block"}]
        await s.commit()
    r = await _change(client, world, blocked["code"], {"create_positions": [{"item": ticket.id}]})
    assert r.status_code == 400
    assert "custom rule 1 blocks it" in r.json()["non_field_errors"][0]
    r = await _change(client, world, blocked["code"], {"recalculate_taxes": "keep_net"})
    assert r.status_code == 400
    assert (
        len(
            (
                await client.get(
                    h.url(world, f"orders/{blocked['code']}/"), headers=auth(world.admin)
                )
            ).json()["positions"]
        )
        == 1
    )


async def test_a_simulated_order_is_priced_as_a_real_one(client, world, factory):
    rule = await _rule(factory, world, custom_rules=CUSTOM)
    ticket = await h.item(factory, world.event, "119.00", tax_rule_id=rule.id)
    body = {"positions": [{"item": ticket.id}], "invoice_address": FR_BUSINESS, "simulate": True}
    r = await _post(client, world, body)
    assert r.status_code == 201, r.text
    assert r.json()["code"] == "PREVIEW"
    assert _taxes(r.json()["positions"][0]) == ("100.00", "0.00", "0.00", "AE")
    r = await _post(client, world, {**body, "invoice_address": US_PERSON})
    assert r.status_code == 400 and "custom rule 2 blocks it" in str(r.json())
