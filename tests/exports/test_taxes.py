"""Exports show the taxes as the invoice address made them: a reverse-charged order's positions
and fees with rate 0, no tax and code ``AE`` in the JSON export."""

from __future__ import annotations

import json
from decimal import Decimal

from admit.models import TaxRule
from tests.exports.shop import export
from tests.factories import auth
from tests.orders import helpers as h


async def test_json_export_shows_reverse_charge(client, factory, world, background):
    async with factory.sessionmaker() as s:
        rule = TaxRule(
            event_id=world.event.id,
            name={"en": "VAT"},
            rate=Decimal("19.00"),
            code="S/standard",
            eu_reverse_charge=True,
            home_country="DE",
        )
        s.add(rule)
        await s.commit()
    ticket = await h.item(factory, world.event, "119.00", tax_rule_id=rule.id)
    address = {
        "is_business": True,
        "company": "SA",
        "country": "FR",
        "vat_id": "FR1",
        "vat_id_validated": True,
    }
    for invoice_address in (address, None):
        body = {
            "positions": [{"item": ticket.id}],
            "fees": [{"fee_type": "service", "value": "1.19", "tax_rule": rule.id}],
            "invoice_address": invoice_address,
        }
        r = await client.post(h.url(world), json=body, headers=auth(world.admin))
        assert r.status_code == 201, r.text
    response = await export(client, world, "json", {})
    orders = json.loads(response.content)["event"]["orders"]
    taxes = [
        [(p["price"], p["tax_rate"], p["tax_value"], p["tax_code"]) for p in o["positions"]]
        + [(f["value"], f["tax_rate"], f["tax_value"], f["tax_code"]) for f in o["fees"]]
        for o in orders
    ]
    assert taxes == [
        [("100.00", "0.00", "0.00", "AE"), ("1.19", "0.00", "0.00", "AE")],
        [("119.00", "19.00", "19.00", "S/standard"), ("1.19", "19.00", "0.19", "S/standard")],
    ]
    assert [o["total"] for o in orders] == ["101.19", "120.19"]
