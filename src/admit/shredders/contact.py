"""Contact data of orders: e-mail addresses (with the event's mail outbox), phone numbers and
invoice addresses. Identifiers are the reference's (``order_emails``, ``phone_numbers``,
``invoice_addresses``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import ColumnElement, delete, select, true, update

from admit.models import Order, OrderPosition, OutgoingMail
from admit.shredders.base import (
    JsonList,
    JsonMap,
    Part,
    Shredder,
    ShredRun,
    position_key,
    present,
    register,
    stream,
)
from admit.shredders.cache import drop_ticket_files


async def order_values(
    run: ShredRun, column: Any, where: ColumnElement[bool] | None = None
) -> AsyncIterator[tuple[str, Any]]:
    """``(order code, value)`` of the event's orders whose ``column`` holds data."""
    query = (
        select(Order.code, column)
        .where(
            Order.event_id == run.event_id, column.is_not(None), true() if where is None else where
        )
        .order_by(Order.code)
    )
    async for code, value in stream(run.session, query):
        if present(value):
            yield code, value


async def clear_orders(
    run: ShredRun, where: ColumnElement[bool] | None = None, **values: Any
) -> None:
    """Sets ``values`` on the event's orders (optionally only those ``where`` holds)."""
    statement = (
        update(Order)
        .where(Order.event_id == run.event_id, true() if where is None else where)
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    await run.session.execute(statement)


@register
class EmailAddressShredder(Shredder):
    """Order and attendee e-mail addresses, and the mails sent for the event (addresses and
    contents): the outbox rows are deleted; a mail still queued is not sent any more."""

    identifier = "order_emails"
    verbose_name = "E-mail addresses"

    async def parts(self, run: ShredRun) -> AsyncIterator[Part]:
        yield JsonMap("orders.json", order_values(run, Order.email))
        yield JsonMap("attendees.json", self._attendees(run))
        yield JsonList("mails.json", self._mails(run))

    async def _attendees(self, run: ShredRun) -> AsyncIterator[tuple[str, Any]]:
        query = (
            select(Order.code, OrderPosition.positionid, OrderPosition.attendee_email)
            .join(Order, Order.id == OrderPosition.order_id)
            .where(
                OrderPosition.event_id == run.event_id, OrderPosition.attendee_email.is_not(None)
            )
            .order_by(Order.code, OrderPosition.positionid)
        )
        async for code, positionid, email in stream(run.session, query):
            if present(email):
                yield position_key(code, positionid), email

    async def _mails(self, run: ShredRun) -> AsyncIterator[dict[str, Any]]:
        query = (
            select(OutgoingMail)
            .where(OutgoingMail.event_id == run.event_id)
            .order_by(OutgoingMail.id)
        )
        async for (mail,) in stream(run.session, query, chunk=200):
            yield {
                "created": mail.created,
                "sent": mail.sent,
                "status": mail.status,
                "to": mail.to,
                "cc": mail.cc,
                "bcc": mail.bcc,
                "subject": mail.subject,
                "body": mail.body,
                "html": mail.html,
                "attachments": [a.get("filename") for a in mail.attachments or ()],
            }

    async def shred(self, run: ShredRun) -> None:
        await clear_orders(run, Order.email.is_not(None), email=None)
        await run.session.execute(
            update(OrderPosition)
            .where(
                OrderPosition.event_id == run.event_id, OrderPosition.attendee_email.is_not(None)
            )
            .values(attendee_email=None)
            .execution_options(synchronize_session=False)
        )
        await run.session.execute(
            delete(OutgoingMail)
            .where(OutgoingMail.event_id == run.event_id)
            .execution_options(synchronize_session=False)
        )
        await drop_ticket_files(run)


@register
class PhoneNumberShredder(Shredder):
    identifier = "phone_numbers"
    verbose_name = "Phone numbers"

    async def parts(self, run: ShredRun) -> AsyncIterator[Part]:
        yield JsonMap("orders.json", order_values(run, Order.phone))

    async def shred(self, run: ShredRun) -> None:
        await clear_orders(run, Order.phone.is_not(None), phone=None)
        await drop_ticket_files(run)


@register
class InvoiceAddressShredder(Shredder):
    """Invoice addresses of orders. Tax-relevant: the export is what the organizer keeps
    (the API does not force its download, as the reference's does not)."""

    identifier = "invoice_addresses"
    verbose_name = "Invoice addresses"

    async def parts(self, run: ShredRun) -> AsyncIterator[Part]:
        yield JsonMap("orders.json", order_values(run, Order.invoice_address))

    async def shred(self, run: ShredRun) -> None:
        await clear_orders(run, invoice_address=None)
        await drop_ticket_files(run)
