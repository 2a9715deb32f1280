"""The PDF read back with pypdf: the parties with their VAT IDs, every line, the totals per
tax rate and in all, the reverse-charge note, a cancellation's reference, text in other
scripts; and the drawing speed."""

from __future__ import annotations

import io
import time

import pypdf
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from admit.invoices import pdf
from admit.models import Invoice
from tests.factories import World, auth
from tests.invoices import helpers as ih


def _text(content: bytes) -> str:
    reader = pypdf.PdfReader(io.BytesIO(content))
    return "\n".join(page.extract_text() for page in reader.pages)


async def test_the_pdf_says_what_the_invoice_says(client, world: World, factory, background):
    rule = await ih.vat_rule(factory, world, eu_reverse_charge=True)
    plain = await ih.ticket(factory, world, "100.00", rule, name="Конференция 会议")
    await ih.settings(client, world, **ih.ISSUER, invoice_generate="paid",
                      invoice_footer_text={"en": "Acme Events GmbH · Leipzig"})  # fmt: skip
    order = await ih.order(client, world, [plain, plain], invoice_address=ih.FR_BUSINESS,
                           status="p", payment_provider="banktransfer")  # fmt: skip
    [invoice] = await ih.invoices(client, world)
    r = await ih.download(client, world, invoice["number"])
    assert r.status_code == 200
    text = _text(r.content)
    for expected in (
        "Invoice SUMMIT-00001",
        "Acme Events GmbH",
        "VAT ID: DE999999999",
        "Tax ID: 231/123/45678",
        "Société Générale d'Événements",
        "VAT-ID: FR12345678901",
        "Конференция 会议",
        order["code"],
        "0.00 % VAT (AE)",
        "Invoice total",
        f"{invoice['total']} EUR",
        invoice["lines"][0]["gross_value"],
        "Reverse charge",
        "This invoice has been paid.",
    ):
        assert expected in text, (expected, text)
    assert text.count("Конференция 会议") == 2  # one line per position
    reader = pypdf.PdfReader(io.BytesIO(r.content))
    assert reader.metadata.title == "Invoice SUMMIT-00001"

    await ih.action(client, world, order["code"], "mark_canceled")
    cancellation = (await ih.invoices(client, world, is_cancellation="true"))[0]
    text = _text((await ih.download(client, world, cancellation["number"])).content)
    assert "Cancellation SUMMIT-00002" in text and "Cancels invoice" in text
    assert "SUMMIT-00001" in text and f"-{invoice['total']} EUR" in text


async def test_totals_per_rate_in_the_pdf(client, world: World, factory):
    full = await ih.vat_rule(factory, world, "19.00")
    reduced = await ih.vat_rule(factory, world, "7.00")
    a = await ih.ticket(factory, world, "119.00", full, name="Pass")
    b = await ih.ticket(factory, world, "10.70", reduced, name="Book")
    order = await ih.order(client, world, [a, b], invoice_address=ih.DE_PERSON)
    number = (await ih.action(client, world, order["code"], "create_invoice")).json()["number"]
    async with factory.sessionmaker() as s:
        invoice = await s.scalar(
            select(Invoice)
            .where(Invoice.full_invoice_no == number)
            .options(selectinload(Invoice.lines))
        )
    text = _text(pdf.render(invoice, order["code"]))
    for expected in ("7.00 % VAT", "10.00 EUR", "0.70 EUR", "19.00 % VAT", "100.00 EUR",
                     "19.00 EUR", "129.70 EUR", "Max Müller", "Due date"):  # fmt: skip
        assert expected in text, (expected, text)


async def _drawn(factory, number: str, code: str) -> str:
    async with factory.sessionmaker() as s:
        invoice = await s.scalar(
            select(Invoice)
            .where(Invoice.full_invoice_no == number)
            .options(selectinload(Invoice.lines))
        )
    return _text(pdf.render(invoice, code))


async def test_the_pending_orders_expiry_with_invoice_include_expire_date(
    client, world: World, factory
):
    item = await ih.ticket(factory, world, "20.00")
    expires = "2031-03-04T12:00:00+00:00"
    plain = await ih.order(client, world, [item], expires=expires)
    number = (await ih.action(client, world, plain["code"], "create_invoice")).json()["number"]
    assert "Order expires" not in await _drawn(factory, number, plain["code"])  # off: default

    await ih.settings(client, world, invoice_include_expire_date=True)
    shown = await ih.order(client, world, [item], expires=expires)
    number = (await ih.action(client, world, shown["code"], "create_invoice")).json()["number"]
    text = await _drawn(factory, number, shown["code"])
    assert "Order expires" in text and "2031-03-04" in text, text
    # Turned off later: the issued invoice keeps saying it (it is a copy, drawn again alike).
    await ih.settings(client, world, invoice_include_expire_date=False)
    assert "Order expires" in await _drawn(factory, number, shown["code"])
    # A paid order has no expiry to show.
    await ih.settings(client, world, invoice_include_expire_date=True)
    paid = await ih.order(client, world, [item], status="p", payment_provider="banktransfer")
    number = (await ih.action(client, world, paid["code"], "create_invoice")).json()["number"]
    assert "Order expires" not in await _drawn(factory, number, paid["code"])


async def test_drawing_is_fast(client, world: World, factory):
    """Bounded work per PDF (fonts are registered once): twenty invoices within a few seconds
    even on a loaded machine (``bench/invoice_pdfs.py`` measures a thousand)."""
    item = await ih.ticket(factory, world, "10.00")
    order = await ih.order(client, world, [item, item, item], invoice_address=ih.DE_PERSON)
    number = (await ih.action(client, world, order["code"], "create_invoice")).json()["number"]
    async with factory.sessionmaker() as s:
        invoice = await s.scalar(
            select(Invoice)
            .where(Invoice.full_invoice_no == number)
            .options(selectinload(Invoice.lines))
        )
    pdf.render(invoice, order["code"])  # fonts loaded
    started = time.perf_counter()
    sizes = [len(pdf.render(invoice, order["code"])) for _ in range(20)]
    elapsed = time.perf_counter() - started
    assert min(sizes) > 1000 and elapsed < 6, elapsed
    r = await client.get(ih.event_url(world, f"invoices/{number}/"), headers=auth(world.admin))
    assert r.json()["lines"][0]["description"] == "Ticket"
