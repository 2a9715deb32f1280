"""What an invoice says, computed from an order's rows and the event's settings (no database).

Lines come from the positions and fees as they were sold: ``price`` is the gross amount,
``tax_value`` the tax in it, ``tax_rate`` and ``tax_code`` what the tax rule decided for the
buyer's invoice address when the order was priced (``catalog/taxes/rules.py``: custom rules,
EU reverse charge). The invoice repeats them instead of taxing anew, so the invoice and the
order can never disagree. A line whose tax code is ``AE`` (reverse charge) makes the invoice
carry the reverse-charge note.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any

from admit.catalog.taxes.rules import REVERSE_CHARGE_CODE
from admit.invoices.settings_keys import setting
from admit.models import Event, Invoice, InvoiceLine
from admit.payments.fees import fee_label

ZERO = Decimal("0.00")
REVERSE_CHARGE_NOTE = (
    "Reverse charge: the recipient is liable for the VAT on this supply "
    "(Article 196, Council Directive 2006/112/EC)."
)


def text(value: Mapping[str, str] | str | None, locale: str) -> str:
    """One language of a multi-lingual text: the locale, its base language, English, any."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    for key in (locale, locale.split("-")[0], "en"):
        if value.get(key):
            return value[key]
    return next((v for v in value.values() if v), "")


def local_date(moment: dt.datetime, timezone: str) -> dt.date:
    try:
        zone = zoneinfo.ZoneInfo(timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        zone = zoneinfo.ZoneInfo("UTC")
    return moment.astimezone(zone).date()


@dataclass
class LineData:
    """One line before it is written (the fields of :class:`InvoiceLine`)."""

    description: str
    gross_value: Decimal
    tax_value: Decimal
    tax_rate: Decimal
    tax_name: str = ""
    tax_code: str | None = None
    item_id: int | None = None
    variation_id: int | None = None
    subevent_id: int | None = None
    fee_type: str | None = None
    fee_internal_type: str | None = None
    event_date_from: dt.datetime | None = None
    event_date_to: dt.datetime | None = None
    event_location: str | None = None
    attendee_name: str | None = None


def line_values(line: LineData | InvoiceLine) -> dict[str, Any]:
    """The columns of a line (a :class:`LineData` or a written :class:`InvoiceLine`), to
    write it or to derive another from it."""
    return {f.name: getattr(line, f.name) for f in fields(LineData)}


def line_of(
    row: Mapping[str, Any], event: Event, locale: str, names_shown: bool, location_shown: bool
) -> LineData:
    """The line of a position (``kind`` 0) or a fee (``kind`` 1) given as a row of the
    order's lines, in the invoice's language: the keys :func:`admit.invoices.service.read`
    selects, which ``invoices/loaded.py`` fills from memory."""
    rule = text(row["rule_name"], locale) if row["rule_name"] is not None else ""
    money = {
        "gross_value": row["gross"],
        "tax_value": row["tax_value"],
        "tax_rate": row["tax_rate"],
        "tax_name": rule,
        "tax_code": row["tax_code"],
    }
    if row["kind"] == 1:
        # its kind and what it is for, as the order page says it: "Payment fee (Bank transfer)"
        description = fee_label(row["fee_type"] or "", row["fee_description"] or "")
        return LineData(
            description=description,
            fee_type=row["fee_type"],
            fee_internal_type=row["fee_internal_type"] or None,
            **money,
        )
    description = text(row["item_name"], locale)
    if row["variation_id"] is not None:
        description = f"{description} – {text(row['variation_name'], locale)}"
    if row["subevent_id"] is not None:
        description = f"{description}\n{text(row['subevent_name'], locale)}"
        dated = (row["date_from"], row["date_to"], row["location"])
    else:
        dated = (event.date_from, event.date_to, event.location)
    return LineData(
        description=description,
        item_id=row["item_id"],
        variation_id=row["variation_id"],
        subevent_id=row["subevent_id"],
        event_date_from=dated[0],
        event_date_to=dated[1],
        event_location=(text(dated[2], locale) or None) if location_shown else None,
        attendee_name=(row["attendee_name"] or None) if names_shown else None,
        **money,
    )


def recipient(address: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``invoice_to*`` fields from an order's invoice address (empty without one)."""
    a = address or {}
    lines = [
        a.get("company") or "",
        a.get("name") or "",
        a.get("street") or "",
        " ".join(p for p in (a.get("zipcode") or "", a.get("city") or "") if p),
        a.get("state") or "",
        a.get("country") or "",
    ]
    if a.get("vat_id"):
        lines.append(f"VAT-ID: {a['vat_id']}")
    return {
        "invoice_to": "\n".join(line for line in lines if line),
        "invoice_to_is_business": bool(a.get("is_business")) if address else None,
        "invoice_to_company": a.get("company") or "",
        "invoice_to_name": a.get("name") or "",
        "invoice_to_street": a.get("street") or "",
        "invoice_to_zipcode": a.get("zipcode") or "",
        "invoice_to_city": a.get("city") or "",
        "invoice_to_state": a.get("state") or None,
        "invoice_to_country": a.get("country") or None,
        "invoice_to_vat_id": a.get("vat_id") or "",
        "invoice_to_beneficiary": a.get("beneficiary") or "",
        "custom_field": a.get("custom_field"),
        "internal_reference": a.get("internal_reference") or "",
    }


def issuer(event: Event, organizer_name: str) -> dict[str, Any]:
    """The ``invoice_from*`` fields from the event's settings (the organizer's name when no
    company name is set)."""
    return {
        "invoice_from_name": setting(event, "invoice_address_from_name") or organizer_name,
        "invoice_from": setting(event, "invoice_address_from"),
        "invoice_from_zipcode": setting(event, "invoice_address_from_zipcode"),
        "invoice_from_city": setting(event, "invoice_address_from_city"),
        "invoice_from_state": setting(event, "invoice_address_from_state"),
        "invoice_from_country": setting(event, "invoice_address_from_country"),
        "invoice_from_tax_id": setting(event, "invoice_address_from_tax_id"),
        "invoice_from_vat_id": setting(event, "invoice_address_from_vat_id"),
    }


def invoice_locale(event: Event, order_locale: str) -> str:
    chosen = setting(event, "invoice_language")
    return order_locale if chosen in ("", "__user__") else chosen


def keep_line(event: Event, line: LineData) -> bool:
    return line.gross_value != 0 or bool(setting(event, "invoice_include_free"))


def totals_by_rate(lines: Iterable[InvoiceLine | LineData]) -> list[dict[str, Any]]:
    """Net, tax and gross per (rate, tax name, code), in rate order: the invoice's tax summary."""
    groups: dict[tuple[Decimal, str, str | None], list[Decimal]] = {}
    for line in lines:
        key = (Decimal(line.tax_rate), line.tax_name or "", line.tax_code)
        sums = groups.setdefault(key, [ZERO, ZERO])
        sums[0] += line.gross_value
        sums[1] += line.tax_value
    return [
        {
            "tax_rate": rate,
            "tax_name": name,
            "tax_code": code,
            "net": gross - tax,
            "tax": tax,
            "gross": gross,
        }
        for (rate, name, code), (gross, tax) in sorted(groups.items(), key=lambda kv: kv[0][0])
    ]


def is_reverse_charge(lines: Sequence[LineData | InvoiceLine]) -> bool:
    return any(line.tax_code == REVERSE_CHARGE_CODE for line in lines)


def negated(invoice: Invoice) -> list[LineData]:
    """The lines of a cancellation: every line of ``invoice`` with its amounts negated."""
    return [
        LineData(
            **{
                **line_values(line),
                "gross_value": -line.gross_value,
                "tax_value": -line.tax_value,
            }
        )
        for line in invoice.lines
    ]
