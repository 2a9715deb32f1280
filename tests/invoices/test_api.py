"""The invoice API end to end: ``create_invoice``, list and detail in the reference's shape,
filters and ordering, cancellation on cancel and refund, ``reissue``, ``regenerate``, the
download's 409-then-200, ``O/invoices/`` and tenancy."""

from __future__ import annotations

from decimal import Decimal

from tests.factories import World, auth
from tests.invoices import helpers as ih

REFERENCE_FIELDS = {
    "number", "event", "order", "is_cancellation", "invoice_from_name", "invoice_from",
    "invoice_from_zipcode", "invoice_from_city", "invoice_from_state", "invoice_from_country",
    "invoice_from_tax_id", "invoice_from_vat_id", "invoice_to", "invoice_to_is_business",
    "invoice_to_company", "invoice_to_name", "invoice_to_street", "invoice_to_zipcode",
    "invoice_to_city", "invoice_to_state", "invoice_to_country", "invoice_to_vat_id",
    "invoice_to_beneficiary", "custom_field", "internal_reference", "date", "refers", "locale",
    "introductory_text", "additional_text", "payment_provider_text", "payment_provider_stamp",
    "footer_text", "lines", "foreign_currency_display", "foreign_currency_rate",
    "foreign_currency_rate_date",
}  # fmt: skip
LINE_FIELDS = {
    "position", "description", "item", "variation", "subevent", "fee_type",
    "fee_internal_type", "event_date_from", "event_date_to", "event_location", "attendee_name",
    "gross_value", "tax_value", "tax_name", "tax_rate", "tax_code",
}  # fmt: skip


async def test_create_invoice_detail_and_list(client, world: World, factory):
    rule = await ih.vat_rule(factory, world)
    item = await ih.ticket(factory, world, "119.00", rule)
    await ih.settings(client, world, **ih.ISSUER, invoice_numbers_prefix="AC-%Y-")
    fee = {"fee_type": "service", "value": "2.38", "tax_rule": rule.id}
    order = await ih.order(client, world, [item, item], invoice_address=ih.DE_PERSON, fees=[fee])
    code = order["code"]
    r = await ih.action(client, world, code, "create_invoice")
    assert r.status_code == 201, r.text
    body = r.json()
    assert REFERENCE_FIELDS <= set(body)
    year = body["date"][:4]
    assert body["number"] == f"AC-{year}-00001" and body["order"] == code
    assert body["event"] == world.event.slug and body["refers"] is None
    assert body["invoice_from_name"] == "Acme Events GmbH"
    assert body["invoice_from_vat_id"] == "DE999999999"
    assert body["invoice_to_name"] == "Max Müller" and body["invoice_to_country"] == "DE"
    assert "Hauptstr. 1" in body["invoice_to"] and "10115 Berlin" in body["invoice_to"]
    assert [set(line) == LINE_FIELDS for line in body["lines"]] == [True] * 3
    first, _, fee = body["lines"]
    assert first["position"] == 1 and first["item"] == item and first["description"] == "Ticket"
    assert (first["gross_value"], first["tax_value"], first["tax_rate"]) == (
        "119.00",
        "19.00",
        "19.00",
    )
    assert first["tax_name"] == "VAT" and first["tax_code"] == "S/standard"
    assert fee["fee_type"] == "service" and fee["item"] is None and fee["tax_value"] == "0.38"
    assert body["total"] == "240.38" and body["reverse_charge"] is False
    assert body["taxes"] == [{"tax_rate": "19.00", "tax_name": "VAT", "tax_code": "S/standard",
                              "net_value": "202.00", "tax_value": "38.38",
                              "gross_value": "240.38"}]  # fmt: skip
    # Pending: the payment terms say when it is due.
    assert body["due_date"] and body["due_date"] in body["payment_provider_text"]

    detail = await client.get(ih.event_url(world, f"invoices/{body['number']}/"),
                              headers=auth(world.admin))  # fmt: skip
    assert detail.status_code == 200 and detail.json() == body
    assert await ih.invoices(client, world) == [body]
    # One invoice that is not canceled: a second is refused.
    again = await ih.action(client, world, code, "create_invoice")
    assert again.status_code == 400
    assert again.json() == {"detail": "An invoice for this order already exists."}


async def test_reverse_charge_and_custom_rules_on_the_lines(client, world: World, factory):
    rule = await ih.vat_rule(factory, world, eu_reverse_charge=True)
    custom = await ih.vat_rule(
        factory,
        world,
        custom_rules=[
            {
                "country": "FR",
                "address_type": "business_vat_id",
                "action": "vat",
                "rate": "5.50",
                "code": "S/reduced",
            }
        ],
    )
    plain = await ih.ticket(factory, world, "100.00", rule)
    special = await ih.ticket(factory, world, "105.50", custom, name="Workshop")
    order = await ih.order(client, world, [plain, special], invoice_address=ih.FR_BUSINESS)
    body = (await ih.action(client, world, order["code"], "create_invoice")).json()
    lines = {line["description"]: line for line in body["lines"]}
    # EU business with a validated VAT ID in another member state: reverse charged, no tax.
    assert lines["Ticket"]["tax_rate"] == "0.00" and lines["Ticket"]["tax_code"] == "AE"
    assert lines["Ticket"]["tax_value"] == "0.00"
    # The custom rule's own rate and code for that buyer.
    assert lines["Workshop"]["tax_rate"] == "5.50" and lines["Workshop"]["tax_code"] == "S/reduced"
    assert Decimal(lines["Workshop"]["tax_value"]) > 0
    assert body["reverse_charge"] is True
    assert body["invoice_to_vat_id"] == "FR12345678901" and body["invoice_to_is_business"]
    assert "VAT-ID: FR12345678901" in body["invoice_to"]
    assert [t["tax_code"] for t in body["taxes"]] == ["AE", "S/reduced"]


async def test_generate_on_payment_and_cancellation_on_cancel(client, world: World, factory):
    item = await ih.ticket(factory, world, "50.00")
    await ih.settings(client, world, invoice_generate="paid")
    order = await ih.order(client, world, [item])
    code = order["code"]
    assert await ih.invoices(client, world) == []
    assert (await ih.action(client, world, code, "mark_paid")).status_code == 200
    [invoice] = await ih.invoices(client, world)
    assert invoice["payment_provider_stamp"] == "paid" and invoice["due_date"] is None
    assert (await ih.action(client, world, code, "mark_canceled")).status_code == 200
    first, cancellation = await ih.invoices(client, world, ordering="nr")
    assert first == invoice
    assert cancellation["is_cancellation"] and cancellation["refers"] == invoice["number"]
    assert cancellation["number"] == "SUMMIT-00002"
    assert [line["gross_value"] for line in cancellation["lines"]] == ["-50.00"]
    assert cancellation["total"] == "-50.00"
    assert await ih.invoices(client, world, is_cancellation="true") == [cancellation]
    assert await ih.invoices(client, world, refers=invoice["number"]) == [cancellation]
    assert await ih.invoices(client, world, order=code, ordering="-nr") == [cancellation, first]
    # Canceled: nothing to invoice any more.
    r = await ih.action(client, world, code, "create_invoice")
    assert r.status_code == 400


async def test_generate_on_placement_and_refund_that_cancels(client, world: World, factory):
    item = await ih.ticket(factory, world, "30.00")
    await ih.settings(client, world, invoice_generate="True")
    order = await ih.order(client, world, [item], status="p", payment_provider="banktransfer")
    [invoice] = await ih.invoices(client, world)
    assert invoice["order"] == order["code"]
    r = await ih.action(client, world, order["code"], "payments/1/refund", {"mark_canceled": True})
    assert r.status_code == 200, r.text
    invoices = await ih.invoices(client, world, is_cancellation="true")
    assert [i["refers"] for i in invoices] == [invoice["number"]]


async def test_cancellation_fee_cancels_and_invoices_the_fee(client, world: World, factory):
    item = await ih.ticket(factory, world, "40.00")
    await ih.settings(client, world, invoice_generate="paid")
    order = await ih.order(client, world, [item], status="p", payment_provider="banktransfer")
    r = await ih.action(client, world, order["code"], "mark_canceled", {"cancellation_fee": "5.00"})
    assert r.status_code == 200, r.text
    first, cancellation, fee_only = await ih.invoices(client, world)
    assert cancellation["refers"] == first["number"] and cancellation["total"] == "-40.00"
    assert not fee_only["is_cancellation"] and fee_only["total"] == "5.00"
    assert [line["fee_type"] for line in fee_only["lines"]] == ["cancellation"]


async def test_reissue_and_regenerate(client, world: World, factory):
    item = await ih.ticket(factory, world, "20.00")
    order = await ih.order(client, world, [item])
    first = (await ih.action(client, world, order["code"], "create_invoice")).json()
    url = ih.event_url(world, f"invoices/{first['number']}/")
    r = await client.post(f"{url}reissue/", headers=auth(world.admin))
    assert r.status_code == 204, r.text
    numbers = [
        (i["number"], i["is_cancellation"], i["refers"]) for i in await ih.invoices(client, world)
    ]
    assert numbers == [("SUMMIT-00001", False, None), ("SUMMIT-00002", True, "SUMMIT-00001"),
                       ("SUMMIT-00003", False, None)]  # fmt: skip
    # Canceled already: neither again.
    for action in ("reissue", "regenerate"):
        r = await client.post(f"{url}{action}/", headers=auth(world.admin))
        assert r.status_code == 400 and r.json() == {
            "detail": "The invoice has already been canceled."
        }
    cancel_url = ih.event_url(world, "invoices/SUMMIT-00002/reissue/")
    assert (await client.post(cancel_url, headers=auth(world.admin))).status_code == 400
    regen = ih.event_url(world, "invoices/SUMMIT-00003/regenerate/")
    assert (await client.post(regen, headers=auth(world.admin))).status_code == 204
    # The invoice itself is unchanged by both.
    after = await ih.invoices(client, world)
    assert after[0] == first


async def test_download_is_409_until_rendered_then_the_pdf(client, world: World, factory):
    item = await ih.ticket(factory, world, "20.00")
    order = await ih.order(client, world, [item])
    number = (await ih.action(client, world, order["code"], "create_invoice")).json()["number"]
    url = ih.event_url(world, f"invoices/{number}/download/")
    # No job engine runs yet: the rendering waits, and the download says so, every time.
    for _ in range(2):
        r = await client.get(url, headers=auth(world.admin))
        assert r.status_code == 409 and r.headers["retry-after"] == "1"
        assert r.json() == {
            "detail": "The PDF of this invoice is being rendered; retry in a second."
        }


async def test_download_after_rendering(client, world: World, factory, background):
    item = await ih.ticket(factory, world, "20.00")
    order = await ih.order(client, world, [item])
    number = (await ih.action(client, world, order["code"], "create_invoice")).json()["number"]
    r = await ih.download(client, world, number)
    assert r.status_code == 200 and r.headers["content-type"] == "application/pdf"
    assert r.content.startswith(b"%PDF") and "SUMMIT-00001.pdf" in r.headers["content-disposition"]
    # regenerate: 409 again until the new file is drawn, then a PDF again.
    regen = ih.event_url(world, f"invoices/{number}/regenerate/")
    assert (await client.post(regen, headers=auth(world.admin))).status_code == 204
    assert (await ih.download(client, world, number)).content.startswith(b"%PDF")


async def test_a_lost_file_without_a_job_is_drawn_again(
    client, world: World, factory, background, clean_app
):
    """The download that finds neither a file nor a job starts the rendering itself (after
    giving up its read snapshot): 409, then the PDF."""
    from sqlalchemy import text

    item = await ih.ticket(factory, world, "20.00")
    order = await ih.order(client, world, [item])
    number = (await ih.action(client, world, order["code"], "create_invoice")).json()["number"]
    assert (await ih.download(client, world, number)).status_code == 200
    async with clean_app.state.db.engine.begin() as conn:
        await conn.execute(text("UPDATE invoices SET file_key = NULL, render_job_id = NULL"))
    url = ih.event_url(world, f"invoices/{number}/download/")
    assert (await client.get(url, headers=auth(world.admin))).status_code == 409
    again = await ih.download(client, world, number)
    assert again.status_code == 200 and again.content.startswith(b"%PDF")


async def test_organizer_list_and_tenancy(client, world: World, factory):
    item = await ih.ticket(factory, world, "20.00")
    order = await ih.order(client, world, [item])
    number = (await ih.action(client, world, order["code"], "create_invoice")).json()["number"]
    r = await client.get(
        f"/api/v1/organizers/{world.org.slug}/invoices/", headers=auth(world.admin)
    )
    assert r.status_code == 200 and [i["number"] for i in r.json()["results"]] == [number]
    r = await client.get(f"/api/v1/organizers/{world.org.slug}/invoices/",
                         params={"event": "nope"}, headers=auth(world.admin))  # fmt: skip
    assert r.json()["count"] == 0
    other = f"/api/v1/organizers/{world.other.slug}/events/{world.other_event.slug}/invoices/"
    r = await client.get(f"{other}{number}/", headers=auth(world.outsider))
    assert r.status_code == 404
    r = await client.get(f"/api/v1/organizers/{world.other.slug}/invoices/",
                         headers=auth(world.outsider))  # fmt: skip
    assert r.json()["count"] == 0
    r = await client.get(ih.event_url(world, "invoices/"), params={"is_cancellation": "maybe"},
                         headers=auth(world.admin))  # fmt: skip
    assert r.status_code == 400 and "is_cancellation" in r.json()


async def test_settings_keys_with_the_reference_names(client, world: World, factory):
    r = await client.get(ih.event_url(world, "settings/"), headers=auth(world.admin))
    body = r.json()
    assert body["invoice_generate"] == "False" and body["invoice_numbers_prefix"] == ""
    assert body["invoice_numbers_consecutive"] is True
    assert body["invoice_numbers_counter_length"] == 5
    assert body["invoice_address_from_vat_id"] == "" and body["invoice_include_free"] is True
    r = await client.patch(ih.event_url(world, "settings/"),
                           json={"invoice_numbers_counter_length": 0,
                                 "invoice_address_from_country": "Germany",
                                 "invoice_generate": "sometimes"},
                           headers=auth(world.admin))  # fmt: skip
    assert r.status_code == 400
    assert {"invoice_numbers_counter_length", "invoice_address_from_country",
            "invoice_generate"} <= set(r.json())  # fmt: skip
    # Free products left out when asked: an order of nothing but free ones has nothing to invoice.
    await ih.settings(client, world, invoice_include_free=False)
    free = await ih.ticket(factory, world, "0.00")
    order = await ih.order(client, world, [free])
    r = await ih.action(client, world, order["code"], "create_invoice")
    assert r.status_code == 400
    assert r.json() == {"detail": "There is nothing to invoice for this order."}


async def test_invoice_list_export(client, world: World, factory, background):
    from tests.exports.shop import csv_rows, export, records

    item = await ih.ticket(factory, world, "119.00", await ih.vat_rule(factory, world))
    order = await ih.order(client, world, [item], invoice_address=ih.FR_BUSINESS)
    await ih.action(client, world, order["code"], "create_invoice")
    await ih.action(client, world, order["code"], "mark_canceled")
    response = await export(client, world, "invoicelist", {"_format": "csv"})
    assert response.status_code == 200
    rows = records(csv_rows(response.content))
    assert [(r["Invoice number"], r["Cancels invoice"], r["Gross total"]) for r in rows] == [
        ("SUMMIT-00001", "", "119.00"),
        ("SUMMIT-00002", "SUMMIT-00001", "-119.00"),
    ]
    assert rows[0]["VAT ID"] == "FR12345678901" and rows[0]["Net total"] == "100.00"
    assert rows[0]["Tax total"] == "19.00" and rows[0]["Order code"] == order["code"]
    body = {"_format": "xlsx", "date_from": "2000-01-01", "date_to": "2000-12-31"}
    response = await export(client, world, "invoicelist", body)
    assert response.status_code == 200 and response.content.startswith(b"PK")
