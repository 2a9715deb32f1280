"""Orders, tax rules and settings for invoice tests, through the API where behaviour is tested
and straight into the database where it is only set-up."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

from admit.models import TaxRule
from tests.factories import World, auth
from tests.orders import helpers as h

FR_BUSINESS = {
    "is_business": True,
    "company": "Société Générale d'Événements",
    "name": "Zoé Durand",
    "street": "12 rue de la Paix",
    "zipcode": "75002",
    "city": "Paris",
    "country": "FR",
    "vat_id": "FR12345678901",
    "vat_id_validated": True,
}
DE_PERSON = {"name": "Max Müller", "street": "Hauptstr. 1", "zipcode": "10115",
             "city": "Berlin", "country": "DE"}  # fmt: skip
ISSUER = {
    "invoice_address_from_name": "Acme Events GmbH",
    "invoice_address_from": "Am Markt 5",
    "invoice_address_from_zipcode": "04109",
    "invoice_address_from_city": "Leipzig",
    "invoice_address_from_country": "DE",
    "invoice_address_from_vat_id": "DE999999999",
    "invoice_address_from_tax_id": "231/123/45678",
}


def event_url(world: World, rest: str) -> str:
    return f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/{rest}"


async def settings(client, world: World, **values: Any) -> None:
    r = await client.patch(event_url(world, "settings/"), json=values, headers=auth(world.admin))
    assert r.status_code == 200, r.text


async def vat_rule(factory, world: World, rate: str = "19.00", **kw: Any) -> TaxRule:
    async with factory.sessionmaker() as s:
        rule = TaxRule(
            event_id=world.event.id,
            name={"en": "VAT"},
            rate=Decimal(rate),
            code="S/standard",
            home_country="DE",
            **kw,
        )
        s.add(rule)
        await s.commit()
        return rule


async def ticket(factory, world: World, price: str = "119.00", rule: TaxRule | None = None,
                 **kw: Any) -> int:  # fmt: skip
    item = await h.item(factory, world.event, price, tax_rule_id=rule.id if rule else None, **kw)
    return item.id


async def order(client, world: World, items: list[int], **kw: Any) -> dict[str, Any]:
    body = {"email": "buyer@example.org", "positions": [{"item": i} for i in items], **kw}
    r = await client.post(event_url(world, "orders/"), json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    return r.json()


async def action(client, world: World, code: str, name: str, body: Any = None) -> Any:
    return await client.post(
        event_url(world, f"orders/{code}/{name}/"), json=body or {}, headers=auth(world.admin)
    )


async def invoices(client, world: World, **params: Any) -> list[dict[str, Any]]:
    r = await client.get(event_url(world, "invoices/"), params=params, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    return r.json()["results"]


async def download(client, world: World, number: str, background=None) -> Any:
    """Polls the download until it is no longer 409 (the job engine draws meanwhile)."""
    url = event_url(world, f"invoices/{number}/download/")
    for _ in range(500):
        r = await client.get(url, headers=auth(world.admin))
        if r.status_code != 409:
            return r
        await asyncio.sleep(0.02)
    raise AssertionError("the invoice was never rendered")
