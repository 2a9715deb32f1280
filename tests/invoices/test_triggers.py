"""When invoices are issued by themselves: an order waiting for approval gets its invoice
when approved (``invoice_generate: "True"``), and issuing one on payment costs the payment's
transaction one statement on PostgreSQL (the lines come from the order the route loaded; one
statement asks whether an invoice is in force, numbers and writes the invoice, its lines and
its rendering job)."""

from __future__ import annotations

from tests.factories import World
from tests.invoices import helpers as ih


async def test_an_order_waiting_for_approval_is_invoiced_when_approved(
    client, world: World, factory
):
    item = await ih.ticket(factory, world, "80.00")
    await ih.settings(client, world, **ih.ISSUER, invoice_generate="True")
    waiting = await ih.order(client, world, [item], require_approval=True)
    assert await ih.invoices(client, world) == []  # not while it waits
    denied = await ih.order(client, world, [item], require_approval=True)
    assert (await ih.action(client, world, denied["code"], "deny")).status_code == 200
    assert (await ih.action(client, world, waiting["code"], "approve")).status_code == 200
    [invoice] = await ih.invoices(client, world)
    assert invoice["order"] == waiting["code"] and invoice["total"] == "80.00"
    assert invoice["due_date"] is not None  # still pending: due when it expires
    # Paying it later issues nothing more (the invoice is in force).
    assert (await ih.action(client, world, waiting["code"], "mark_paid")).status_code == 200
    assert len(await ih.invoices(client, world)) == 1


async def test_approval_issues_nothing_where_invoices_come_with_payment(
    client, world: World, factory
):
    item = await ih.ticket(factory, world, "80.00")
    await ih.settings(client, world, invoice_generate="paid")
    waiting = await ih.order(client, world, [item], require_approval=True)
    assert (await ih.action(client, world, waiting["code"], "approve")).status_code == 200
    assert await ih.invoices(client, world) == []
    assert (await ih.action(client, world, waiting["code"], "mark_paid")).status_code == 200
    assert len(await ih.invoices(client, world)) == 1


async def test_issuing_on_payment_costs_no_round_trip_more(
    client, world: World, factory, count_queries, database_url: str
):
    """``mark_paid`` with and without an invoice issued on payment, counted as the app sends
    them, in the steady state: the counter row exists and the worker holds the catalog's
    names (a settings write moves the catalog's stamp, so a payment after it reads them)."""
    item = await ih.ticket(factory, world, "10.00")
    fee = {"fee_type": "service", "value": "1.00"}
    await ih.settings(client, world, **ih.ISSUER, invoice_generate="paid")
    first = await ih.order(client, world, [item], fees=[fee])
    assert (await ih.action(client, world, first["code"], "mark_paid")).status_code == 200
    counted = {}
    for mode in ("False", "paid"):
        await ih.settings(client, world, invoice_generate=mode)
        warm, order = [
            await ih.order(client, world, [item, item], invoice_address=ih.DE_PERSON, fees=[fee])
            for _ in range(2)
        ]
        assert (await ih.action(client, world, warm["code"], "mark_paid")).status_code == 200
        with count_queries() as q:
            assert (await ih.action(client, world, order["code"], "mark_paid")).status_code == 200
        counted[mode] = q.statements
    extra = len(counted["paid"]) - len(counted["False"])
    if database_url.startswith("postgresql"):
        # The invoice's statement also carries the sales ledger's totals (``kit/lanes/
        # hot_writes``): not one round trip more than the payment without an invoice.
        assert extra == 0, counted["paid"][-4:]
        last = counted["paid"][-1]
        assert last.lstrip().startswith("WITH ids AS") and "INSERT INTO sales_counts" in last
        assert "INSERT INTO sales_counts" in counted["False"][-1]
        assert not any("sales_counts" in s for s in counted["paid"][:-1] if "INSERT" in s)
    else:  # SQLite serialises writers anyway: the plain sequence of statements
        assert extra <= 6, counted["paid"]
    invoices = await ih.invoices(client, world, ordering="nr")
    assert [i["number"] for i in invoices] == ["SUMMIT-00001", "SUMMIT-00002", "SUMMIT-00003"]
    newest = invoices[-1]
    assert [line["gross_value"] for line in newest["lines"]] == ["10.00", "10.00", "1.00"]
    assert newest["lines"][2]["fee_type"] == "service" and newest["total"] == "21.00"
    assert newest["invoice_from_name"] == "Acme Events GmbH"
    assert newest["invoice_to_name"] == "Max Müller"
