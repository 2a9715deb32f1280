"""The e-invoices: the Factur-X XML extracted from the downloaded PDF and validated against the
official schema (XSD), its amounts and parties read back; the UBL
export validated likewise; a cancellation as a credit note referring to the invoice."""

from __future__ import annotations

from decimal import Decimal

import facturx
from lxml import etree

from tests.factories import World, auth
from tests.invoices import helpers as ih

RAM = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
RSM = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
NS = {"ram": RAM, "rsm": RSM}
CBC = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"


def _one(root, path: str) -> str:
    return root.xpath(path, namespaces=NS)[0].text


async def test_factur_x_xml_embedded_in_the_pdf(client, world: World, factory, background):
    full = await ih.vat_rule(factory, world, "19.00", eu_reverse_charge=True)
    reduced = await ih.vat_rule(factory, world, "7.00")
    a = await ih.ticket(factory, world, "119.00", full, name="Pass")
    b = await ih.ticket(factory, world, "10.70", reduced, name="Book")
    await ih.settings(client, world, **ih.ISSUER)
    order = await ih.order(client, world, [a, a, b], invoice_address=ih.DE_PERSON)
    invoice = (await ih.action(client, world, order["code"], "create_invoice")).json()
    pdf = (await ih.download(client, world, invoice["number"])).content

    name, xml = facturx.get_xml_from_pdf(pdf, check_xsd=True)
    assert name == "factur-x.xml"
    assert facturx.xml_check_xsd(xml, flavor="factur-x", level="en16931")
    assert facturx.get_level(etree.fromstring(xml)) == "en16931"
    root = etree.fromstring(xml)
    assert _one(root, "//rsm:ExchangedDocument/ram:ID") == invoice["number"]
    assert _one(root, "//rsm:ExchangedDocument/ram:TypeCode") == "380"
    seller = "//ram:SellerTradeParty"
    assert _one(root, f"{seller}/ram:Name") == "Acme Events GmbH"
    assert (
        _one(root, f"{seller}/ram:SpecifiedTaxRegistration/ram:ID[@schemeID='VA']") == "DE999999999"
    )
    assert _one(root, "//ram:BuyerTradeParty/ram:Name") == "Max Müller"
    summation = "//ram:SpecifiedTradeSettlementHeaderMonetarySummation"
    assert _one(root, f"{summation}/ram:GrandTotalAmount") == invoice["total"] == "248.70"
    assert _one(root, f"{summation}/ram:TaxBasisTotalAmount") == "210.00"
    assert _one(root, f"{summation}/ram:TaxTotalAmount") == "38.70"
    rates = sorted(Decimal(e.text) for e in root.xpath(
        "//ram:ApplicableHeaderTradeSettlement/ram:ApplicableTradeTax/ram:RateApplicablePercent",
        namespaces=NS))  # fmt: skip
    assert rates == [Decimal("7.00"), Decimal("19.00")]
    assert len(root.xpath("//ram:IncludedSupplyChainTradeLineItem", namespaces=NS)) == 3

    # The cancellation: a credit note (381) that names the invoice it cancels.
    await ih.action(client, world, order["code"], "mark_canceled")
    [cancellation] = await ih.invoices(client, world, is_cancellation="true")
    _, xml = facturx.get_xml_from_pdf(
        (await ih.download(client, world, cancellation["number"])).content, check_xsd=True
    )
    root = etree.fromstring(xml)
    assert _one(root, "//rsm:ExchangedDocument/ram:TypeCode") == "381"
    assert _one(root, "//ram:InvoiceReferencedDocument/ram:IssuerAssignedID") == invoice["number"]
    assert _one(root, f"{summation}/ram:GrandTotalAmount") == "248.70"


async def test_reverse_charge_in_the_xml_and_the_ubl_export(client, world: World, factory):
    rule = await ih.vat_rule(factory, world, eu_reverse_charge=True)
    item = await ih.ticket(factory, world, "100.00", rule)
    await ih.settings(client, world, **ih.ISSUER)
    order = await ih.order(client, world, [item], invoice_address=ih.FR_BUSINESS)
    number = (await ih.action(client, world, order["code"], "create_invoice")).json()["number"]
    r = await client.get(ih.event_url(world, f"invoices/{number}/ubl/"), headers=auth(world.admin))
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/xml")
    assert facturx.xml_check_xsd(r.content, flavor="ubl", level="en16931")
    root = etree.fromstring(r.content)
    assert root.findtext(f"{{{CBC}}}ID") == number
    assert root.findtext(f"{{{CBC}}}InvoiceTypeCode") == "380"
    texts = [e.text for e in root.iter(f"{{{CBC}}}TaxExemptionReasonCode")]
    assert texts == ["VATEX-EU-AE"]
    ids = [e.text for e in root.iter(f"{{{CBC}}}CompanyID")]
    assert "DE999999999" in ids and "FR12345678901" in ids
    r = await client.get(ih.event_url(world, "invoices/NOPE/ubl/"), headers=auth(world.admin))
    assert r.status_code == 404
