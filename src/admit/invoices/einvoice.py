"""Structured e-invoices (EN 16931) of a stored invoice: the Factur-X / ZUGFeRD XML (UN/CEFACT
CII) embedded in the PDF, and the same invoice as UBL 2.1 (the XRechnung syntax).

Both are made by the ``factur-x`` library from one dictionary of EN 16931 business terms
(BT-/BG- numbers), so the two formats say the same; the library checks each result against
the official XML schemas (XSD) before it is returned. (Its schematron check needs a Saxon
server, an XSLT 2 processor reached over HTTP: it is switched off, never a network call.) The tax
category of a line is the first part of its tax code (``S/standard`` → ``S``, ``AE`` reverse
charge, ``E``, ``O``, ...; without a code: ``S`` when taxed, else ``E``), with the exemption
reason EN 16931 asks for. A cancellation is a credit note (type 381) with the amounts of the
invoice it cancels (positive, as a credit note states them) and a reference to it.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal
from typing import Any

from admit.models import Invoice

LEVEL = "en16931"
CATEGORIES = {"S", "Z", "E", "AE", "K", "G", "O", "L", "M", "B"}
# Category -> (reason text, VATEX code) where EN 16931 requires an exemption reason.
EXEMPTIONS = {
    "AE": ("Reverse charge", "VATEX-EU-AE"),
    "E": ("Exempt from VAT", None),
    "O": ("Not subject to VAT", "VATEX-EU-O"),
    "K": ("Intra-community supply", "VATEX-EU-IC"),
    "G": ("Export outside the EU", "VATEX-EU-G"),
}
ZERO = Decimal("0.00")


def category(code: str | None, rate: Decimal) -> str:
    head = (code or "").split("/")[0].upper()
    if head in CATEGORIES:
        return head
    return "S" if rate > 0 else "E"


def _money(value: Decimal) -> str:
    return f"{value:.2f}"


def _party(name: str, street: str, city: str, zipcode: str, country: str | None) -> dict[str, Any]:
    party: dict[str, Any] = {"name": name or "-", "country_code": country or "DE"}
    if street:
        lines = street.splitlines()
        party["addr_l1"] = lines[0]
        if len(lines) > 1:
            party["addr_l2"] = " ".join(lines[1:])
    if city:
        party["city"] = city
    if zipcode:
        party["postcode"] = zipcode
    return party


def business_terms(
    invoice: Invoice, refers: str | None = None, refers_date: dt.date | None = None
) -> dict[str, Any]:
    """The EN 16931 terms of ``invoice`` (its ``lines`` loaded)."""
    sign = Decimal(-1) if invoice.is_cancellation else Decimal(1)
    seller = _party(
        invoice.invoice_from_name,
        invoice.invoice_from,
        invoice.invoice_from_city,
        invoice.invoice_from_zipcode,
        invoice.invoice_from_country,
    )
    if invoice.invoice_from_vat_id:
        seller["vat_identifier"] = invoice.invoice_from_vat_id
    if invoice.invoice_from_tax_id:
        seller["tax_identifier"] = invoice.invoice_from_tax_id
    buyer = _party(
        invoice.invoice_to_company or invoice.invoice_to_name,
        invoice.invoice_to_street,
        invoice.invoice_to_city,
        invoice.invoice_to_zipcode,
        invoice.invoice_to_country or invoice.invoice_from_country,
    )
    if invoice.invoice_to_vat_id:
        buyer["vat_identifier"] = invoice.invoice_to_vat_id
    lines, groups = [], defaultdict(lambda: [ZERO, ZERO])
    for line in invoice.lines:
        net = (line.gross_value - line.tax_value) * sign
        cat = category(line.tax_code, line.tax_rate)
        group = groups[(cat, line.tax_rate)]
        group[0] += net
        group[1] += line.tax_value * sign
        lines.append(
            {
                "BT-126": str(line.position),
                "BT-153": (line.description.splitlines() or ["-"])[0][:200] or "-",
                "BT-129": "1",
                "BT-130": "C62",
                "BT-146": _money(net),
                "BT-131": _money(net),
                "BT-151": cat,
                "BT-152": _money(line.tax_rate),
            }
        )
    breakdown = []
    for (cat, rate), (net, tax) in sorted(groups.items()):
        entry: dict[str, Any] = {
            "BT-116": _money(net),
            "BT-117": _money(tax),
            "BT-118": cat,
            "BT-119": _money(rate),
        }
        if cat in EXEMPTIONS:
            reason, code = EXEMPTIONS[cat]
            entry["BT-120"] = reason
            if code:
                entry["BT-121"] = code
        breakdown.append(entry)
    net_total = sum((g[0] for g in groups.values()), ZERO)
    tax_total = sum((g[1] for g in groups.values()), ZERO)
    paid = net_total + tax_total if invoice.payment_provider_stamp == "paid" else ZERO
    terms: dict[str, Any] = {
        "BT-1": invoice.full_invoice_no,
        "BT-2": invoice.date,
        "BT-3": "381" if invoice.is_cancellation else "380",
        "BT-5": invoice.currency,
        "BT-72": invoice.date,
        "BG-4": seller,
        "BG-7": buyer,
        "BG-23": breakdown,
        "BG-25": lines,
        "BT-106": _money(net_total),
        "BT-109": _money(net_total),
        "BT-110": _money(tax_total),
        "BT-112": _money(net_total + tax_total),
        "BT-113": _money(paid),
        "BT-115": _money(net_total + tax_total - paid),
    }
    notes = [text for text in (invoice.introductory_text, invoice.additional_text) if text]
    if invoice.reverse_charge:
        notes.append("Reverse charge: the recipient is liable for the VAT.")
    if notes:
        terms["BG-1"] = [{"BT-22": text} for text in notes]
    if invoice.due_date is not None:
        terms["BT-9"] = invoice.due_date
    if invoice.payment_provider_text:
        terms["BT-20"] = invoice.payment_provider_text
    if invoice.internal_reference:
        terms["BT-10"] = invoice.internal_reference[:200]
    if refers:
        reference: dict[str, Any] = {"BT-25": refers}
        if refers_date is not None:
            reference["BT-26"] = refers_date
        terms["BG-3"] = [reference]
    return terms


def cii_xml(invoice: Invoice, refers: str | None = None, refers_date: Any = None) -> bytes:
    """The Factur-X (CII) XML, checked against its schema."""
    from facturx import generate_cii_xml

    return bytes(
        generate_cii_xml(
            business_terms(invoice, refers, refers_date), level=LEVEL, check_schematron=False
        )
    )


def ubl_xml(invoice: Invoice, refers: str | None = None, refers_date: Any = None) -> bytes:
    """The UBL 2.1 XML (the XRechnung syntax), checked against its schema."""
    from facturx import generate_ubl_xml

    return bytes(
        generate_ubl_xml(
            business_terms(invoice, refers, refers_date), level=LEVEL, check_schematron=False
        )
    )
