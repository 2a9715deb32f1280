"""A change of an invoiced order where invoices are issued on their own: the old invoice gets
its cancellation and a new one is issued with the order as it is now (the change API with a
price and a fee; a position canceled and an attendee's name only with
``invoice_reissue_after_modify``). Changes that touch nothing on the invoice, a change API call
with ``reissue_invoice: false``, or events that invoice only on demand, leave the invoice as
it is."""

from __future__ import annotations

from tests.factories import World, auth
from tests.invoices import helpers as ih


async def _change(client, world: World, code: str, body: dict):
    r = await client.post(
        ih.event_url(world, f"orders/{code}/change/"), json=body, headers=auth(world.admin)
    )
    assert r.status_code == 200, r.text
    return r.json()


def _by_number(invoices: list[dict]) -> dict[str, dict]:
    return {i["number"]: i for i in invoices}


async def test_a_change_cancels_and_reissues(client, world: World, factory):
    rule = await ih.vat_rule(factory, world)
    item = await ih.ticket(factory, world, "119.00", rule)
    await ih.settings(client, world, **ih.ISSUER, invoice_generate="True")
    fee = {"fee_type": "service", "value": "2.38", "tax_rule": rule.id}
    order = await ih.order(client, world, [item, item], invoice_address=ih.DE_PERSON, fees=[fee])
    code = order["code"]
    [first] = await ih.invoices(client, world)
    assert first["total"] == "240.38"
    fee_id = order["fees"][0]["id"]
    first_pos, second_pos = (p["id"] for p in order["positions"])

    # a change that touches nothing on the invoice (the secret): the invoice stays
    await _change(client, world, code, {"patch_positions": [
        {"position": second_pos, "body": {"secret": "anothersecret1"}}]})  # fmt: skip
    assert [i["number"] for i in await ih.invoices(client, world)] == [first["number"]]

    # a price and a fee: cancellation of the first, a new invoice of the changed order
    await _change(client, world, code, {
        "patch_positions": [{"position": first_pos, "body": {"price": "59.50"}}],
        "patch_fees": [{"fee": fee_id, "body": {"value": "11.90"}}],
    })  # fmt: skip
    invoices = _by_number(await ih.invoices(client, world))
    assert len(invoices) == 3
    [cancellation] = [i for i in invoices.values() if i["is_cancellation"]]
    assert cancellation["refers"] == first["number"] and cancellation["total"] == "-240.38"
    [new] = [i for i in invoices.values() if not i["is_cancellation"] and i is not first
             and i["number"] != first["number"]]  # fmt: skip
    assert new["total"] == "190.40"  # 59.50 + 119.00 + 11.90
    assert sorted(line["gross_value"] for line in new["lines"]) == ["11.90", "119.00", "59.50"]

    # the change API's reissue_invoice: false keeps the invoice, even for a new price
    await _change(client, world, code, {
        "patch_positions": [{"position": first_pos, "body": {"price": "60.00"}}],
        "reissue_invoice": False,
    })  # fmt: skip
    assert len(await ih.invoices(client, world)) == 3
    await _change(client, world, code, {"patch_positions": [
        {"position": first_pos, "body": {"price": "59.50"}}]})  # fmt: skip
    assert len(await ih.invoices(client, world)) == 3  # back to what the invoice says

    # a position canceled through its own endpoint, invoice_reissue_after_modify off (the
    # default): the invoice stays as it is
    r = await client.delete(
        ih.event_url(world, f"orderpositions/{second_pos}/"), headers=auth(world.admin)
    )
    assert r.status_code == 204, r.text
    assert len(await ih.invoices(client, world)) == 3

    # with invoice_reissue_after_modify, an attendee's name (printed on the invoice line)
    # through the position's PATCH reissues it, with the canceled position gone as well
    await ih.settings(client, world, invoice_reissue_after_modify=True)
    r = await client.patch(
        ih.event_url(world, f"orderpositions/{first_pos}/"),
        json={"attendee_name": "Grace Hopper"},
        headers=auth(world.admin),
    )
    assert r.status_code == 200, r.text
    invoices = _by_number(await ih.invoices(client, world))
    assert len(invoices) == 5
    live = [i for i in invoices.values() if not i["is_cancellation"]
            and not any(c["refers"] == i["number"] for c in invoices.values())]  # fmt: skip
    assert [i["total"] for i in live] == ["71.40"]  # 59.50 + 11.90
    assert "Grace Hopper" in [line["attendee_name"] for line in live[0]["lines"]]
    numbers = sorted(invoices)
    assert numbers == [f"SUMMIT-{n:05d}" for n in range(1, 6)]  # no gaps


async def test_no_reissue_where_invoices_are_made_on_demand(client, world: World, factory):
    item = await ih.ticket(factory, world, "119.00", await ih.vat_rule(factory, world))
    await ih.settings(client, world, **ih.ISSUER, invoice_generate="admin")
    order = await ih.order(client, world, [item, item], invoice_address=ih.DE_PERSON)
    r = await ih.action(client, world, order["code"], "create_invoice")
    assert r.status_code == 201
    first_pos = order["positions"][0]["id"]
    await _change(client, world, order["code"], {"patch_positions": [
        {"position": first_pos, "body": {"price": "10.00"}}]})  # fmt: skip
    [only] = await ih.invoices(client, world)
    assert only["total"] == "238.00"
