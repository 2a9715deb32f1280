"""Invoice rows as the API shows them, and the queries that load what they show in a fixed
number of statements (the invoices with their lines, then one query for order codes, the
numbers they refer to and the event slugs)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from admit.invoices.content import totals_by_rate
from admit.models import Event, Invoice, InvoiceLine, Order

_FIELDS = (
    "is_cancellation invoice_from_name invoice_from invoice_from_zipcode invoice_from_city "
    "invoice_from_state invoice_from_country invoice_from_tax_id invoice_from_vat_id "
    "invoice_to invoice_to_is_business invoice_to_company invoice_to_name invoice_to_street "
    "invoice_to_zipcode invoice_to_city invoice_to_state invoice_to_country invoice_to_vat_id "
    "invoice_to_beneficiary custom_field internal_reference locale introductory_text "
    "additional_text payment_provider_text payment_provider_stamp footer_text currency "
    "reverse_charge"
).split()


def _money(value: Decimal) -> str:
    return f"{value:.2f}"


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def line_dict(line: InvoiceLine) -> dict[str, Any]:
    return {
        "position": line.position,
        "description": line.description,
        "item": line.item_id,
        "variation": line.variation_id,
        "subevent": line.subevent_id,
        "fee_type": line.fee_type,
        "fee_internal_type": line.fee_internal_type,
        "event_date_from": _iso(line.event_date_from),
        "event_date_to": _iso(line.event_date_to),
        "event_location": line.event_location,
        "attendee_name": line.attendee_name,
        "gross_value": _money(line.gross_value),
        "tax_value": _money(line.tax_value),
        "tax_rate": _money(line.tax_rate),
        "tax_name": line.tax_name,
        "tax_code": line.tax_code,
    }


def invoice_dict(invoice: Invoice, *, order: str, event: str, refers: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"number": invoice.full_invoice_no, "event": event, "order": order}
    body.update({key: getattr(invoice, key) for key in _FIELDS})
    body.update(
        date=invoice.date.isoformat(),
        refers=refers,
        lines=[line_dict(line) for line in invoice.lines],
        foreign_currency_display=None,
        foreign_currency_rate=None,
        foreign_currency_rate_date=None,
        total=_money(invoice.total),
        due_date=_iso(invoice.due_date),
        taxes=[
            {
                "tax_rate": _money(group["tax_rate"]),
                "tax_name": group["tax_name"],
                "tax_code": group["tax_code"],
                "net_value": _money(group["net"]),
                "tax_value": _money(group["tax"]),
                "gross_value": _money(group["gross"]),
            }
            for group in totals_by_rate(invoice.lines)
        ],
    )
    return body


_Refers = aliased(Invoice)


async def render_many(session: AsyncSession, invoices: Sequence[Invoice]) -> list[dict[str, Any]]:
    """The invoices (lines loaded) as the API shows them, in their order."""
    if not invoices:
        return []
    rows = await session.execute(
        select(Invoice.id, Order.code, Event.slug, _Refers.full_invoice_no)
        .join(Order, Order.id == Invoice.order_id)
        .join(Event, Event.id == Invoice.event_id)
        .outerjoin(_Refers, _Refers.id == Invoice.refers_id)
        .where(Invoice.id.in_([i.id for i in invoices]))
    )
    known = {pk: (code, slug, refers) for pk, code, slug, refers in rows}
    return [
        invoice_dict(
            invoice,
            order=known[invoice.id][0],
            event=known[invoice.id][1],
            refers=known[invoice.id][2],
        )
        for invoice in invoices
    ]
