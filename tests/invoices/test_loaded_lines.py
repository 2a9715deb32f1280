"""Issuing on payment takes the lines from the order the route loaded (``invoices/loaded.py``):
they must be the lines the query gives, and the catalog's names must follow a rename."""

from __future__ import annotations

from sqlalchemy import select

from admit.invoices import loaded, service
from admit.models import Event, Order
from admit.orders.serialize import ORDER_LOAD
from tests.factories import World, auth
from tests.invoices import helpers as ih
from tests.orders import helpers as oh


async def test_lines_from_the_loaded_order_equal_the_lines_read(client, world: World, factory):
    await ih.settings(
        client,
        world,
        **ih.ISSUER,
        invoice_attendee_name=True,
        invoice_event_location=True,
        invoice_include_free=True,
    )
    rule = await ih.vat_rule(factory, world)
    shirt = await oh.item(factory, world.event, "20.00", tax_rule_id=rule.id, name="Shirt")
    quota = await oh.quota_of(factory, shirt.id)
    large = await oh.variation(factory, shirt, "25.00", quota_id=quota.id)
    free = await ih.ticket(factory, world, "0.00")
    ticket = await ih.ticket(factory, world, "119.00", rule)
    positions = [
        {"item": ticket, "attendee_name": "Ada Lovelace"},
        {"item": shirt.id, "variation": large.id},
        {"item": free},
        {"item": ticket, "attendee_name": "Alan Turing"},
    ]
    body = {"email": "b@example.org", "positions": positions,
            "fees": [{"fee_type": "service", "value": "2.50"}]}  # fmt: skip
    r = await client.post(ih.event_url(world, "orders/"), json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    code = r.json()["code"]
    async with factory.sessionmaker() as s:
        event = await s.get(Event, world.event.id)
        query = select(Order).where(Order.code == code).options(*ORDER_LOAD)
        order = (await s.scalars(query)).one()
        assert loaded.is_loaded(order)
        from_memory = await loaded.lines(s, event, order)
        read = (await service.read(s, event, order)).lines
    assert from_memory == read
    assert [line.description.split("\n")[0] for line in from_memory] == [
        "Ticket",
        "Shirt – V",
        "Ticket",
        "Ticket",
        "Service fee",
    ]
    assert [line.attendee_name for line in from_memory[:4]] == ["Ada Lovelace", None, None,
                                                                "Alan Turing"]  # fmt: skip
    assert from_memory[0].tax_name == "VAT" and from_memory[2].gross_value == 0


async def test_an_order_loaded_without_its_positions_is_not_taken_from_memory(
    client, world: World, factory
):
    item = await ih.ticket(factory, world, "10.00")
    code = (await ih.order(client, world, [item]))["code"]
    async with factory.sessionmaker() as s:
        bare = (await s.scalars(select(Order).where(Order.code == code))).one()
        assert not loaded.is_loaded(bare)  # the trigger reads its lines by query instead


async def test_a_renamed_product_is_invoiced_under_its_new_name(client, world: World, factory):
    item = await ih.ticket(factory, world, "10.00")
    await ih.settings(client, world, **ih.ISSUER, invoice_generate="paid")
    before, after = [await ih.order(client, world, [item]) for _ in range(2)]
    assert (await ih.action(client, world, before["code"], "mark_paid")).status_code == 200
    renamed = await client.patch(
        ih.event_url(world, f"items/{item}/"),
        json={"name": {"en": "Day ticket"}},
        headers=auth(world.admin),
    )
    assert renamed.status_code == 200, renamed.text
    assert (await ih.action(client, world, after["code"], "mark_paid")).status_code == 200
    invoices = await ih.invoices(client, world, ordering="nr")
    assert [i["lines"][0]["description"] for i in invoices] == ["Ticket", "Day ticket"]


async def test_the_issuer_is_the_organizer_when_the_event_names_none(client, world: World, factory):
    item = await ih.ticket(factory, world, "10.00")
    await ih.settings(client, world, invoice_generate="paid", invoice_address_from_name="")
    order = await ih.order(client, world, [item])
    assert (await ih.action(client, world, order["code"], "mark_paid")).status_code == 200
    [invoice] = await ih.invoices(client, world)
    assert invoice["invoice_from_name"] == world.org.name != ""
