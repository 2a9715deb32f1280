"""The whole event as JSON (``json``), parsed and compared with the database."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from admit.exports.exporters import json_export
from admit.models import Order, OrderPosition
from tests.exports.shop import build_shop, export


@pytest.mark.parametrize("chunk", [500, 1], ids=["one-chunk", "chunk-per-order"])
async def test_orders_and_catalog_as_one_document(
    client, factory, world, background, monkeypatch, chunk
):
    monkeypatch.setattr(json_export, "ORDER_CHUNK", chunk)
    shop = await build_shop(client, factory, world)
    response = await export(client, world, "json", {})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert ".json" in response.headers["content-disposition"]
    event = json.loads(response.content)["event"]
    assert (event["slug"], event["currency"], event["timezone"]) == (
        "summit",
        "EUR",
        "Europe/Berlin",
    )
    assert event["organizer"] == {"name": "Acme", "slug": "acme"}
    assert [i["name"] for i in event["items"]] == [{"en": "Ticket"}, {"en": "Workshop"}]
    # No internal name set: null, as the API shows it.
    assert [i["internal_name"] for i in event["items"]] == [None, None]
    workshop = event["items"][1]
    assert workshop["default_price"] == "10.50"
    assert [v["id"] for v in workshop["variations"]] == [shop.morning.id]
    assert [q["identifier"] for q in event["questions"]] == [
        "AGE", "DIET", "SHIRT", "TOPICS", "NEWS", "BIRTH",
    ]  # fmt: skip
    shirt = event["questions"][2]
    assert [o["answer"] for o in shirt["options"]] == [{"en": "S"}, {"en": "M"}, {"en": "L"}]
    assert shirt["items"] == [shop.ticket.id]
    assert event["tax_rules"][0]["rate"] == "19.00"
    assert {q["items"][0] for q in event["quotas"]} == {shop.ticket.id, shop.workshop.id}

    async with factory.sessionmaker() as s:
        stored = list(
            await s.scalars(
                select(Order).where(Order.event_id == world.event.id).order_by(Order.id)
            )
        )
        positions = list(
            await s.scalars(
                select(OrderPosition)
                .join(Order)
                .where(Order.event_id == world.event.id)
                .order_by(OrderPosition.order_id, OrderPosition.positionid)
            )
        )
    orders = event["orders"]
    assert [o["code"] for o in orders] == [o.code for o in stored]
    assert [o["total"] for o in orders] == [f"{o.total:.2f}" for o in stored]
    assert [o["status"] for o in orders] == ["p", "n", "c", "p"]
    assert [p["secret"] for o in orders for p in o["positions"]] == [p.secret for p in positions]
    ada = orders[0]
    assert ada["invoice_address"]["company"] == "Analytical Engines Ltd"
    assert ada["fees"] == [
        {
            "fee_type": "service",
            "value": "2.50",
            "description": "Handling",
            "internal_type": "",
            "tax_rate": "0.00",
            "tax_value": "0.00",
            "tax_rule": None,
            "tax_code": None,
            "canceled": False,
        }
    ]
    assert [(p["provider"], p["state"], p["amount"]) for p in ada["payments"]] == [
        ("banktransfer", "confirmed", "37.50")
    ]
    first = ada["positions"][0]
    assert first["price"] == "23.00" and first["tax_value"] == "3.67"
    assert first["attendee_name"] == "Ada Lovelace"
    answers = {a["question_identifier"]: a for a in first["answers"]}
    assert answers["AGE"]["answer"] == "36" and answers["AGE"]["options"] == []
    assert answers["SHIRT"]["options"] == [shop.options["SHIRT"][1].id]
    assert sorted(answers["TOPICS"]["options"]) == sorted(
        [shop.options["TOPICS"][0].id, shop.options["TOPICS"][2].id]
    )
    assert answers["DIET"]["answer"] == "Vegan & <gluten-free>"
    addon = orders[3]["positions"][1]
    assert addon["addon_to"] == orders[3]["positions"][0]["id"]


async def test_an_event_without_orders(client, world, background):
    response = await export(client, world, "json", {})
    event = json.loads(response.content)["event"]
    assert event["orders"] == [] and event["items"] == [] and event["slug"] == "summit"
