"""Issuing and canceling invoices (no HTTP): the one path every trigger goes through.

:func:`issue` copies the order as it is now into a new invoice (addresses, lines, totals, the
payment terms) and takes its number; :func:`cancel` issues the cancellation of an invoice (its
lines negated, ``refers`` the invoice). Neither ever changes an invoice that exists: a changed
order gets a cancellation and a new invoice. Both queue the PDF's rendering in the same
transaction (:mod:`admit.invoices.tasks`), so a committed invoice always has its rendering on
the way and a rolled-back one leaves nothing.

Callers hold the order's row (the order routes lock it): two issuers of one order are
serialised there, and the numbers by the counter row (:mod:`admit.invoices.numbers`). Issuing
runs in the transaction that makes an order paid, so it reads the order in one query
(:func:`read`) and writes through :mod:`admit.invoices.writing` (one statement on PostgreSQL).
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import Integer, bindparam, exists, literal, literal_column, null, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased, selectinload

from admit.db import utcnow
from admit.invoices import content, numbers, writing
from admit.invoices.content import LineData, local_date, text
from admit.invoices.settings_keys import setting
from admit.jobs.queue import enqueue
from admit.kit.lanes import in_transaction
from admit.models import (
    Event,
    Invoice,
    Item,
    ItemVariation,
    Order,
    OrderFee,
    OrderPosition,
    Organizer,
    SubEvent,
    TaxRule,
)

RENDER_KIND = writing.RENDER_KIND
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


async def is_canceled(session: AsyncSession, invoice: Invoice) -> bool:
    found = await session.scalar(
        select(Invoice.id).where(Invoice.refers_id == invoice.id, Invoice.is_cancellation)
    )
    return found is not None


def qualifies(order: Order, lines: Sequence[LineData]) -> bool:
    """Whether the order has anything to invoice (a canceled order or one without lines has
    not)."""
    return order.status != "c" and bool(lines)


@dataclass(frozen=True)
class OrderContent:
    """What an order gives its invoice, read in one query: the lines, whether an invoice is in
    force already, and the organizer's name (the issuer's name when none is set)."""

    lines: list[LineData]
    invoiced: bool
    organizer_name: str


@functools.cache
def _read_query() -> Any:
    """Built once (parameters ``r_order``, ``r_organizer``): compiled once, prepared once per
    connection."""
    order_id = bindparam("r_order", type_=Integer)
    invoiced = writing.in_force(order_id).label("invoiced")
    organizer = (
        select(Organizer.name)
        .where(Organizer.id == bindparam("r_organizer", type_=Integer))
        .scalar_subquery()
    ).label("organizer")
    rule_name = (
        select(TaxRule.name).where(TaxRule.id == OrderPosition.tax_rule_id).scalar_subquery()
    )
    positions = (
        select(
            literal(0).label("kind"),
            OrderPosition.positionid.label("sort"),
            OrderPosition.price.label("gross"),
            OrderPosition.tax_value,
            OrderPosition.tax_rate,
            OrderPosition.tax_code,
            rule_name.label("rule_name"),
            Item.id.label("item_id"),
            Item.name.label("item_name"),
            ItemVariation.id.label("variation_id"),
            ItemVariation.value.label("variation_name"),
            SubEvent.id.label("subevent_id"),
            SubEvent.name.label("subevent_name"),
            SubEvent.date_from,
            SubEvent.date_to,
            SubEvent.location,
            OrderPosition.attendee_name_cached.label("attendee_name"),
            null().label("fee_type"),
            null().label("fee_description"),
            null().label("fee_internal_type"),
            invoiced,
            organizer,
        )
        .join(Item, Item.id == OrderPosition.item_id)
        .outerjoin(ItemVariation, ItemVariation.id == OrderPosition.variation_id)
        .outerjoin(SubEvent, SubEvent.id == OrderPosition.subevent_id)
        .where(OrderPosition.order_id == order_id, OrderPosition.canceled.is_(False))
    )
    fee_rule_name = select(TaxRule.name).where(TaxRule.id == OrderFee.tax_rule_id).scalar_subquery()
    fees = select(
        literal(1),
        OrderFee.id,
        OrderFee.value,
        OrderFee.tax_value,
        OrderFee.tax_rate,
        OrderFee.tax_code,
        fee_rule_name,
        null(),
        null(),
        null(),
        null(),
        null(),
        null(),
        null(),
        null(),
        null(),
        null(),
        OrderFee.fee_type,
        OrderFee.description,
        OrderFee.internal_type,
        invoiced,
        organizer,
    ).where(OrderFee.order_id == order_id, OrderFee.canceled.is_(False))
    union = union_all(positions, fees).subquery()
    # With neither positions nor fees the union is empty: the flags come from a row of
    # their own that carries no line.
    empty = select(literal(2), literal(0), *(null() for _ in range(18)), invoiced, organizer)
    return union_all(select(union), empty).order_by(literal_column("kind"), literal_column("sort"))


async def read(session: AsyncSession, event: Event, order: Order) -> OrderContent:
    """The order's live positions and fees as invoice lines, in the invoice's language (one
    query, no ORM objects: it runs in the payment's transaction)."""
    locale = content.invoice_locale(event, order.locale)
    names_shown = bool(setting(event, "invoice_attendee_name"))
    location_shown = bool(setting(event, "invoice_event_location"))
    lines: list[LineData] = []
    invoiced, organizer = False, ""
    params = {"r_order": order.id, "r_organizer": event.organizer_id}
    for row in await in_transaction.fetch(session, _read_query(), params):
        invoiced, organizer = bool(row["invoiced"]), row["organizer"] or ""
        if row["kind"] != 2:
            lines.append(content.line_of(row, event, locale, names_shown, location_shown))
    kept = [line for line in lines if content.keep_line(event, line)]
    return OrderContent(kept, invoiced, organizer)


async def order_lines(session: AsyncSession, event: Event, order: Order) -> list[LineData]:
    """The order's live positions and fees as invoice lines, in the invoice's language."""
    return (await read(session, event, order)).lines


async def _organizer_name(session: AsyncSession, event: Event) -> str:
    """The organizer's name, read only when the issuer's company name is not set."""
    if setting(event, "invoice_address_from_name"):
        return ""
    query = select(Organizer.name).where(Organizer.id == event.organizer_id)
    return await session.scalar(query) or ""


def _expire_date(event: Event, order: Order) -> dt.date | None:
    """The pending order's expiry, printed with ``invoice_include_expire_date``."""
    if order.status != "n" or not setting(event, "invoice_include_expire_date"):
        return None
    return local_date(order.expires, event.timezone)


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


def _plan(
    event: Event,
    order: Order,
    lines: Sequence[LineData],
    fields: dict[str, object],
    *,
    cancellation_of: Invoice | None = None,
) -> writing.Plan:
    """The invoice to write: its rows, and the sequence its number comes from."""
    issued = local_date(utcnow(), event.timezone)
    sequence = numbers.sequence_for(event, order, issued, cancellation=cancellation_of is not None)
    row: dict[str, Any] = {
        "organizer_id": event.organizer_id,
        "event_id": event.id,
        "order_id": order.id,
        "is_cancellation": cancellation_of is not None,
        "refers_id": cancellation_of.id if cancellation_of is not None else None,
        "date": issued,
        "created": utcnow(),
        "currency": event.currency,
        "reverse_charge": content.is_reverse_charge(lines),
        "total": sum((line.gross_value for line in lines), ZERO),
        "file_key": None,
        **fields,
    }
    return writing.Plan(
        organizer_id=event.organizer_id,
        event_id=event.id,
        row=row,
        lines=lines,
        prefix=sequence.prefix,
        counter=sequence.counter,
        width=sequence.width,
        order_code=order.code,
    )


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


async def planned(
    session: AsyncSession,
    event: Event,
    order: Order,
    lines: Sequence[LineData] | None = None,
    *,
    organizer_name: str | None = None,
) -> writing.Plan:
    """A new invoice of the order as it is now, ready to be written (``organizer_name``: when
    the caller read it with the lines, see :func:`read`). Planning takes no lock: a caller
    may plan early in its transaction and write just before the commit."""
    if lines is None:
        found = await read(session, event, order)
        lines, organizer_name = found.lines, found.organizer_name
    if organizer_name is None:
        organizer_name = await _organizer_name(session, event)
    locale = content.invoice_locale(event, order.locale)
    due, terms, stamp = _terms(event, order, locale)
    fields: dict[str, object] = {
        **content.issuer(event, organizer_name),
        **content.recipient(order.invoice_address),
        "locale": locale,
        "introductory_text": text(setting(event, "invoice_introductory_text"), locale),
        "additional_text": text(setting(event, "invoice_additional_text"), locale),
        "footer_text": text(setting(event, "invoice_footer_text"), locale),
        "payment_provider_text": terms,
        "payment_provider_stamp": stamp,
        "due_date": due,
        "expire_date": _expire_date(event, order),
    }
    return _plan(event, order, lines, fields)


async def issue(
    session: AsyncSession,
    event: Event,
    order: Order,
    lines: Sequence[LineData] | None = None,
    *,
    organizer_name: str | None = None,
) -> writing.Issued:
    """A new invoice of the order as it is now, written at once."""
    plan = await planned(session, event, order, lines, organizer_name=organizer_name)
    return await writing.write(session, plan)


class NotIssued(Exception):
    """Why :func:`issue_on_request` issued nothing: ``"exists"`` (the order has an invoice that
    is not canceled) or ``"nothing"`` (nothing to invoice)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def issue_on_request(session: AsyncSession, event: Event, order: Order) -> writing.Issued:
    """The invoice someone asked for (the API's ``create_invoice``, the buyer's "request an
    invoice" form): one per order. The caller holds the order's row lock, so two requests at
    once are serialised and the second finds the first's invoice (:class:`NotIssued`)."""
    if await active_invoices(session, order.id):
        raise NotIssued("exists")
    lines = await order_lines(session, event, order)
    if not qualifies(order, lines):
        raise NotIssued("nothing")
    return await issue(session, event, order, lines)


_COPIED = (
    "invoice_from_name invoice_from invoice_from_zipcode invoice_from_city invoice_from_state "
    "invoice_from_country invoice_from_tax_id invoice_from_vat_id invoice_to "
    "invoice_to_is_business invoice_to_company invoice_to_name invoice_to_street "
    "invoice_to_zipcode invoice_to_city invoice_to_state invoice_to_country invoice_to_vat_id "
    "invoice_to_beneficiary custom_field internal_reference locale footer_text"
).split()


async def cancel(
    session: AsyncSession, event: Event, order: Order, invoice: Invoice
) -> writing.Issued:
    """The cancellation of ``invoice`` (same parties, lines negated); the caller checks that
    it is not canceled already. ``invoice.lines`` must be loaded."""
    fields: dict[str, object] = {key: getattr(invoice, key) for key in _COPIED}
    fields["introductory_text"] = f"Cancellation of invoice {invoice.full_invoice_no}."
    plan = _plan(event, order, content.negated(invoice), fields, cancellation_of=invoice)
    return await writing.write(session, plan)


async def cancel_all(session: AsyncSession, event: Event, order: Order) -> list[writing.Issued]:
    """Cancels every invoice of the order that is not canceled yet."""
    return [
        await cancel(session, event, order, invoice)
        for invoice in await active_invoices(session, order.id)
    ]
