"""Issuing and canceling invoices (no HTTP): the one path every trigger goes through.

:func:`issue` copies the order as it is now into a new invoice (addresses, lines, totals, the
payment terms) and takes its number; :func:`cancel` issues the cancellation of an invoice (its
lines negated, ``refers`` the invoice). Neither ever changes an invoice that exists: a changed
order gets a cancellation and a new invoice. Both queue the PDF's rendering in the same
transaction (:mod:`admit.invoices.tasks`), so a committed invoice always has its rendering on
the way and a rolled-back one leaves nothing.

Callers hold the order's row (the order routes lock it): two issuers of one order are
serialised there, and the numbers by the counter row (:mod:`admit.invoices.numbers`).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import bindparam, exists, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased, selectinload

from admit.db import utcnow
from admit.invoices import content, numbers
from admit.invoices.content import LineData, local_date, text
from admit.invoices.settings_keys import setting
from admit.jobs.queue import enqueue
from admit.models import (
    Event,
    Invoice,
    InvoiceLine,
    Item,
    ItemVariation,
    Order,
    OrderFee,
    OrderPosition,
    Organizer,
    SubEvent,
    TaxRule,
)

RENDER_KIND = "invoices.render"
ZERO = Decimal("0.00")

_Canceling = aliased(Invoice)
# Invoices of an order that are no cancellation and have none referring to them.
_ACTIVE = (
    select(Invoice)
    .where(
        Invoice.order_id == bindparam("order_id"),
        Invoice.is_cancellation.is_(False),
        ~exists().where(_Canceling.refers_id == Invoice.id, _Canceling.is_cancellation.is_(True)),
    )
    .options(selectinload(Invoice.lines))
    .order_by(Invoice.id)
)


async def active_invoices(session: AsyncSession, order_id: int) -> list[Invoice]:
    return list(await session.scalars(_ACTIVE, {"order_id": order_id}))


_HAS_ACTIVE = select(
    exists().where(
        Invoice.order_id == bindparam("order_id"),
        Invoice.is_cancellation.is_(False),
        ~exists().where(_Canceling.refers_id == Invoice.id, _Canceling.is_cancellation.is_(True)),
    )
)


async def has_active_invoice(session: AsyncSession, order_id: int) -> bool:
    """Whether the order has an invoice in force (one query, nothing loaded)."""
    return bool(await session.scalar(_HAS_ACTIVE, {"order_id": order_id}))


async def is_canceled(session: AsyncSession, invoice: Invoice) -> bool:
    found = await session.scalar(
        select(Invoice.id).where(Invoice.refers_id == invoice.id, Invoice.is_cancellation)
    )
    return found is not None


def qualifies(order: Order, lines: Sequence[LineData]) -> bool:
    """Whether the order has anything to invoice (a canceled order or one without lines has
    not)."""
    return order.status != "c" and bool(lines)


async def order_lines(session: AsyncSession, event: Event, order: Order) -> list[LineData]:
    """The order's live positions and fees as invoice lines, in the invoice's language."""
    locale = content.invoice_locale(event, order.locale)
    rows = (
        await session.execute(
            select(OrderPosition, Item, ItemVariation, SubEvent)
            .join(Item, Item.id == OrderPosition.item_id)
            .outerjoin(ItemVariation, ItemVariation.id == OrderPosition.variation_id)
            .outerjoin(SubEvent, SubEvent.id == OrderPosition.subevent_id)
            .where(OrderPosition.order_id == order.id, OrderPosition.canceled.is_(False))
            .order_by(OrderPosition.positionid)
        )
    ).all()
    fees = list(
        await session.scalars(
            select(OrderFee)
            .where(OrderFee.order_id == order.id, OrderFee.canceled.is_(False))
            .order_by(OrderFee.id)
        )
    )
    rule_ids = {p.tax_rule_id for p, *_ in rows} | {f.tax_rule_id for f in fees}
    rule_ids.discard(None)
    names = {}
    if rule_ids:
        for rule in await session.scalars(select(TaxRule).where(TaxRule.id.in_(rule_ids))):
            names[rule.id] = text(rule.name, locale)
    names_shown = bool(setting(event, "invoice_attendee_name"))
    location_shown = bool(setting(event, "invoice_event_location"))
    lines = []
    for position, item, variation, subevent in rows:
        description = text(item.name, locale)
        if variation is not None:
            description = f"{description} – {text(variation.value, locale)}"
        dated = subevent if subevent is not None else event
        if subevent is not None:
            description = f"{description}\n{text(subevent.name, locale)}"
        lines.append(
            LineData(
                description=description,
                gross_value=position.price,
                tax_value=position.tax_value,
                tax_rate=position.tax_rate,
                tax_name=names.get(position.tax_rule_id, ""),
                tax_code=position.tax_code,
                item_id=item.id,
                variation_id=variation.id if variation is not None else None,
                subevent_id=subevent.id if subevent is not None else None,
                event_date_from=dated.date_from,
                event_date_to=dated.date_to,
                event_location=text(dated.location, locale) or None if location_shown else None,
                attendee_name=(position.attendee_name_cached or None) if names_shown else None,
            )
        )
    for fee in fees:
        lines.append(
            LineData(
                description=fee.description or content.FEE_NAMES.get(fee.fee_type, "Fee"),
                gross_value=fee.value,
                tax_value=fee.tax_value,
                tax_rate=fee.tax_rate,
                tax_name=names.get(fee.tax_rule_id, ""),
                tax_code=fee.tax_code,
                fee_type=fee.fee_type,
                fee_internal_type=fee.internal_type or None,
            )
        )
    return [line for line in lines if content.keep_line(event, line)]


async def _organizer_name(session: AsyncSession, event: Event) -> str:
    """The organizer's name, read only when the issuer's company name is not set."""
    if setting(event, "invoice_address_from_name"):
        return ""
    query = select(Organizer.name).where(Organizer.id == event.organizer_id)
    return await session.scalar(query) or ""


def _terms(event: Event, order: Order, locale: str) -> tuple[dt.date | None, str, str | None]:
    """Payment terms: (due date, text, stamp). A pending order is due when it expires; a paid
    one says so."""
    if order.status == "p":
        return None, "This invoice has been paid.", "paid"
    due = local_date(order.expires, event.timezone)
    lines = [f"Please pay the total by {due.isoformat()}."]
    if setting(event, "payment_banktransfer__enabled"):
        holder = setting(event, "payment_banktransfer_bank_details_sepa_name")
        iban = setting(event, "payment_banktransfer_bank_details_sepa_iban")
        bic = setting(event, "payment_banktransfer_bank_details_sepa_bic")
        details = [f"Account holder: {holder}" if holder else "", f"IBAN: {iban}" if iban else ""]
        details.append(f"BIC: {bic}" if bic else "")
        details.append(f"Reference: {order.code}")
        other = text(setting(event, "payment_banktransfer_bank_details"), locale)
        lines.extend(d for d in (*details, other) if d)
    return due, "\n".join(lines), None


async def _write(
    session: AsyncSession,
    event: Event,
    order: Order,
    lines: Sequence[LineData],
    fields: dict[str, object],
    *,
    cancellation_of: Invoice | None = None,
) -> Invoice:
    """Writes the invoice, its lines and its rendering job first, under a placeholder number
    no real one can equal (``~`` and a random hex), and takes the number last: the counter
    row stays locked from taking the number to the commit, so concurrent issuers of one
    sequence wait for each other only for one ``UPDATE`` and the commit, not for the
    inserts."""
    issued = local_date(utcnow(), event.timezone)
    invoice = Invoice(
        organizer_id=event.organizer_id,
        event_id=event.id,
        order_id=order.id,
        prefix="",
        invoice_no=f"~{uuid.uuid4().hex}",
        full_invoice_no="",
        is_cancellation=cancellation_of is not None,
        refers_id=cancellation_of.id if cancellation_of is not None else None,
        date=issued,
        created=utcnow(),
        currency=event.currency,
        reverse_charge=content.is_reverse_charge(lines),
        total=sum((line.gross_value for line in lines), ZERO),
        **fields,
    )
    session.add(invoice)
    await session.flush()
    session.add_all(
        InvoiceLine(invoice_id=invoice.id, position=index, **content.line_values(line))
        for index, line in enumerate(lines, start=1)
    )
    await queue_render(session, invoice)
    # Not flushed before the counter's UPDATE: the job id and the number go in one UPDATE.
    with session.no_autoflush:
        number = await numbers.allocate(
            session, event, order, issued, cancellation=cancellation_of is not None
        )
    invoice.prefix, invoice.invoice_no, invoice.full_invoice_no = (
        number.prefix,
        number.invoice_no,
        number.full,
    )
    await session.flush()
    return invoice


async def queue_render(session: AsyncSession, invoice: Invoice) -> None:
    """Queues the drawing of the invoice's PDF (after this transaction commits); a file
    drawn before stops being served."""
    job_id, _ = await enqueue(
        session,
        RENDER_KIND,
        {"invoice": invoice.id},
        organizer_id=invoice.organizer_id,
        event_id=invoice.event_id,
    )
    invoice.render_job_id = job_id
    invoice.file_key = None


async def issue(
    session: AsyncSession, event: Event, order: Order, lines: Sequence[LineData] | None = None
) -> Invoice:
    """A new invoice of the order as it is now."""
    if lines is None:
        lines = await order_lines(session, event, order)
    locale = content.invoice_locale(event, order.locale)
    due, terms, stamp = _terms(event, order, locale)
    fields: dict[str, object] = {
        **content.issuer(event, await _organizer_name(session, event)),
        **content.recipient(order.invoice_address),
        "locale": locale,
        "introductory_text": text(setting(event, "invoice_introductory_text"), locale),
        "additional_text": text(setting(event, "invoice_additional_text"), locale),
        "footer_text": text(setting(event, "invoice_footer_text"), locale),
        "payment_provider_text": terms,
        "payment_provider_stamp": stamp,
        "due_date": due,
    }
    return await _write(session, event, order, lines, fields)


_COPIED = (
    "invoice_from_name invoice_from invoice_from_zipcode invoice_from_city invoice_from_state "
    "invoice_from_country invoice_from_tax_id invoice_from_vat_id invoice_to "
    "invoice_to_is_business invoice_to_company invoice_to_name invoice_to_street "
    "invoice_to_zipcode invoice_to_city invoice_to_state invoice_to_country invoice_to_vat_id "
    "invoice_to_beneficiary custom_field internal_reference locale footer_text"
).split()


async def cancel(session: AsyncSession, event: Event, order: Order, invoice: Invoice) -> Invoice:
    """The cancellation of ``invoice`` (same parties, lines negated); the caller checks that
    it is not canceled already. ``invoice.lines`` must be loaded."""
    fields: dict[str, object] = {key: getattr(invoice, key) for key in _COPIED}
    fields["introductory_text"] = f"Cancellation of invoice {invoice.full_invoice_no}."
    return await _write(
        session, event, order, content.negated(invoice), fields, cancellation_of=invoice
    )


async def cancel_all(session: AsyncSession, event: Event, order: Order) -> list[Invoice]:
    """Cancels every invoice of the order that is not canceled yet."""
    return [
        await cancel(session, event, order, invoice)
        for invoice in await active_invoices(session, order.id)
    ]
