"""Invoices on the buyer's order page: the list with a download link each, the PDF itself
(``…/order/{code}/{secret}/invoices/{id}.pdf``), and the "request an invoice" form where the
event issues invoices on the buyer's request (``invoice_generate`` = ``"user"``).

Everything here needs the order's secret, as the order page does: a wrong secret, or an
invoice of another order, is the page's 404. The PDF is the invoice's stored file when its
rendering is done; before that it is drawn in the request (a few milliseconds, in a thread),
so the buyer never sees the API's 409.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.invoices import drawing, service
from admit.invoices.settings_keys import setting
from admit.jobs.storage import StoredFileMissing
from admit.kit.http.context import Session
from admit.kit.http.errors import APIError
from admit.kit.resources.filtering import parse_pk
from admit.models import Event, Invoice, Order
from admit.shop import catalog, orders
from admit.web.page import Page
from admit.web.render import SECURITY_HEADERS

router = APIRouter(include_in_schema=False)
ORDER = "/{organizer}/{event}/order/{code}/{secret}"


def may_request(event: Event, order: Order) -> bool:
    """The buyer may ask for an invoice: the event issues them on request, and the order is
    live (a canceled one has nothing left to invoice)."""
    return setting(event, "invoice_generate") == "user" and order.status in ("n", "p")


async def listed(session: AsyncSession, event: Event, order: Order) -> dict[str, Any]:
    """What the order page shows: the order's invoices (cancellations too, oldest first) and
    whether it offers the request form (only while the order has no invoice in force)."""
    rows = list(
        await session.scalars(
            select(Invoice).where(Invoice.order_id == order.id).order_by(Invoice.id)
        )
    )
    invoices = [
        {
            "id": invoice.id,
            "number": invoice.full_invoice_no,
            "date": invoice.date.isoformat(),
            "is_cancellation": invoice.is_cancellation,
        }
        for invoice in rows
    ]
    active = bool(await service.active_invoices(session, order.id)) if rows else False
    return {"invoices": invoices, "can_request": may_request(event, order) and not active}


async def _found(
    request: Request, session: AsyncSession, organizer: str, event: str, code: str, secret: str,
    *, lock: bool = False,
) -> tuple[Page, Event | None, Order | None]:  # fmt: skip
    web = await Page.load(request, session)
    found = await catalog.load_event(session, organizer, event)
    order = await orders.find(session, found, code, secret, lock=lock) if found else None
    return web, found, order


async def _pdf(request: Request, invoice: Invoice, session: AsyncSession) -> bytes:
    store = request.app.state.background.store
    if invoice.file_key is not None:
        try:
            return b"".join([chunk async for chunk in store.open(invoice.file_key)])
        except StoredFileMissing:
            pass
    content = await drawing.render_pdf(session, store, invoice.id)
    assert content is not None  # the invoice was just read
    return content


@router.get(f"{ORDER}/invoices/{{invoice_id}}.pdf")
async def invoice_pdf(
    organizer: str,
    event: str,
    code: str,
    secret: str,
    invoice_id: str,
    request: Request,
    session: Session,
) -> Response:
    web, found, order = await _found(request, session, organizer, event, code, secret)
    if found is None or order is None:
        return web.not_found()
    try:
        number = parse_pk(invoice_id)
    except APIError:  # not an id (junk, or past what PostgreSQL's INTEGER holds)
        return web.not_found()
    invoice = await session.get(Invoice, number)
    if invoice is None or invoice.order_id != order.id:
        return web.not_found()
    content = await _pdf(request, invoice, session)
    headers = {
        **SECURITY_HEADERS,
        "Content-Disposition": f'attachment; filename="{drawing.filename(invoice)}"',
    }
    return Response(content, media_type="application/pdf", headers=headers)


_NOT_ISSUED = {
    "exists": "This order has an invoice already.",
    "nothing": "There is nothing to invoice in this order.",
}


@router.post(f"{ORDER}/invoice")
async def request_invoice(
    organizer: str, event: str, code: str, secret: str, request: Request, session: Session
) -> Response:
    web, found, order = await _found(request, session, organizer, event, code, secret, lock=True)
    if found is None or order is None:
        return web.not_found()
    _pairs, refused = await web.post()
    if refused:
        return refused
    here = f"/{organizer}/{event}/order/{order.code}/{order.secret}/"
    if not may_request(found, order):
        web.web.flash("Invoices are not issued on request for this order.")
        return web.redirect(here)
    try:
        invoice = await service.issue_on_request(session, found, order)
    except service.NotIssued as exc:
        web.web.flash(_NOT_ISSUED[exc.reason])
        return web.redirect(here)
    web.web.flash(f"Your invoice {invoice.full_invoice_no} has been issued.")
    return web.redirect(here)
