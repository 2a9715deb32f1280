"""The invoice API: ``E/invoices/`` (list, detail), ``…/download/`` (the PDF: 409 while it is
rendered, then 200), ``…/regenerate/`` (draw the same invoice again), ``…/reissue/`` (cancel it
and issue a new one), ``O/invoices/`` across the organizer's events, and the order's
``create_invoice`` action. Reading needs ``event.orders:read``, the rest
``event.orders:write``, as the reference's order permissions.

An invoice is named by its number (``full_invoice_no``) within the event. Downloads are GETs
(read-only transactions): a rendering they must start is queued in a session of its own, the
way ticket downloads do, and a concurrent request that lost the race serves the winner's job.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import Depends
from sqlalchemy import Select, select, update
from sqlalchemy.orm import selectinload
from starlette.responses import Response, StreamingResponse

from admit.db import write_intent
from admit.invoices import drawing, einvoice, exporter, serialize, service, tasks, triggers  # noqa: F401
from admit.invoices.schemas import InvoiceOut
from admit.jobs.downloads import content_disposition
from admit.jobs.queue import enqueue
from admit.jobs.storage import StoredFileMissing
from admit.kit.http.context import EventAccess, EventContext, OrganizerAccess, OrgContext
from admit.kit.http.errors import APIError, not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.http.transaction import commit_and_notify
from admit.kit.openapi import responses as openapi_responses
from admit.kit.openapi.bodies import empty_body
from admit.kit.resources.crud import Page
from admit.kit.resources.filtering import Filter, FilterSet, Ordering
from admit.kit.resources.pagination import paginate
from admit.models import Event, Invoice, Job, Order
from admit.orders.routes import load_order

router = api_router(tags=["invoices"])

READ = "event.orders:read"
WRITE = "event.orders:write"
O = "/organizers/{organizer}"  # noqa: E741
E = f"{O}/events/{{event}}"
ONE = f"{E}/invoices/{{number}}"
Reader = Annotated[EventContext, Depends(EventAccess(READ))]
Writer = Annotated[EventContext, Depends(EventAccess(WRITE))]

RENDERING = "The PDF of this invoice is being rendered; retry in a second."
CANCELED = "The invoice has already been canceled."

_orders = select(Order.id)
FILTERS = FilterSet(
    [
        Filter.boolean("is_cancellation", Invoice.is_cancellation),
        Filter.where(
            "order", str, lambda code: Invoice.order_id.in_(_orders.where(Order.code == code))
        ),
        Filter.where(
            "refers",
            str,
            lambda number: Invoice.refers_id.in_(
                select(Invoice.id).where(Invoice.full_invoice_no == number).scalar_subquery()
            ),
        ),
        Filter.eq("locale", Invoice.locale),
    ]
)
ORG_FILTERS = FilterSet(
    [
        *FILTERS.filters,
        Filter.where(
            "event",
            str,
            lambda slug: Invoice.event_id.in_(select(Event.id).where(Event.slug == slug)),
        ),
    ]
)
ORDERING = Ordering(
    fields={"date": Invoice.date, "nr": Invoice.full_invoice_no, "number": Invoice.full_invoice_no},
    default=("nr",),
    pk=Invoice.id,
)


async def _page(ctx: Any, query: Select[Any], filters: FilterSet) -> Response:
    query = ORDERING.apply(filters.apply(query, ctx.request.query_params), ctx.request)
    body = await paginate(
        ctx.request, ctx.session, query, list, options=[selectinload(Invoice.lines)]
    )
    body["results"] = await serialize.render_many(ctx.session, body["results"])
    return JSONResponse(body)


@router.get(f"{E}/invoices/", response_model=Page[InvoiceOut])
async def list_invoices(ctx: Reader) -> Response:
    """List an event's invoices

    Lists the event's invoices and cancellations, by number unless `ordering` says otherwise
    (`date`, `nr`); filters: `is_cancellation`, `order` (code), `refers` (number), `locale`.
    """
    return await _page(ctx, select(Invoice).where(Invoice.event_id == ctx.event.id), FILTERS)


@router.get(f"{O}/invoices/", response_model=Page[InvoiceOut])
async def list_organizer_invoices(
    ctx: Annotated[OrgContext, Depends(OrganizerAccess())],
) -> Response:
    """List the organizer's invoices

    The invoices of every event of the organizer whose orders the caller may read; the same
    filters as an event's list, and `event` (slug).
    """
    rows = await ctx.session.execute(select(Event.id).where(Event.organizer_id == ctx.organizer_id))
    readable = [eid for (eid,) in rows if ctx.has_event_permission(eid, READ)]
    query = select(Invoice).where(
        Invoice.organizer_id == ctx.organizer_id, Invoice.event_id.in_(readable)
    )
    return await _page(ctx, query, ORG_FILTERS)


async def _invoice(ctx: EventContext, number: str, *, lines: bool = True) -> Invoice:
    if len(number) > 200:
        raise not_found()
    query = select(Invoice).where(
        Invoice.event_id == ctx.event.id, Invoice.full_invoice_no == number
    )
    if lines:
        query = query.options(selectinload(Invoice.lines))
    invoice = (await ctx.session.execute(query)).scalars().first()
    if invoice is None:
        raise not_found()
    return invoice


@router.get(f"{ONE}/", response_model=InvoiceOut)
async def retrieve_invoice(number: str, ctx: Reader) -> Response:
    """Get an invoice

    Answers one invoice by its number: its parties, lines, totals per tax rate and payment
    terms, as they were when it was issued.
    """
    invoice = await _invoice(ctx, number)
    return JSONResponse((await serialize.render_many(ctx.session, [invoice]))[0])


def _waiting() -> Response:
    return JSONResponse({"detail": RENDERING}, status_code=409, headers={"Retry-After": "1"})


async def _start_render(ctx: EventContext, invoice: Invoice) -> None:
    """Queues a new rendering unless a concurrent request did (the update is conditional on
    the job the invoice named when this request read it)."""
    db = ctx.request.app.state.db
    token = write_intent.set(True)  # SQLite: this GET writes, so it takes the write lock first
    try:
        async with db.sessionmaker() as session:
            job_id, _ = await enqueue(
                session,
                service.RENDER_KIND,
                {"invoice": invoice.id},
                organizer_id=invoice.organizer_id,
                event_id=invoice.event_id,
            )
            same = (
                Invoice.render_job_id.is_(None)
                if invoice.render_job_id is None
                else Invoice.render_job_id == invoice.render_job_id
            )
            done = await session.execute(
                update(Invoice)
                .where(Invoice.id == invoice.id, same)
                .values(render_job_id=job_id, file_key=None)
            )
            if done.rowcount == 0:  # type: ignore[attr-defined]
                await session.rollback()
                return
            await commit_and_notify(session)
    finally:
        write_intent.reset(token)


async def _stream(ctx: EventContext, invoice: Invoice) -> Response | None:
    assert invoice.file_key is not None
    chunks = ctx.request.app.state.background.store.open(invoice.file_key)
    try:
        first = await anext(chunks)
    except StoredFileMissing:
        return None
    except StopAsyncIteration:
        first = b""

    async def body() -> Any:
        if first:
            yield first
        async for chunk in chunks:
            yield chunk

    headers = {"Content-Disposition": content_disposition(drawing.filename(invoice))}
    return StreamingResponse(body(), media_type="application/pdf", headers=headers)


@router.get(f"{ONE}/download/")
async def download_invoice(number: str, ctx: Reader) -> Response:
    """Download an invoice's PDF

    200 with the PDF once it is rendered; 409 (retry after a second) while it is, the first
    request for a missing file starting its rendering.
    """
    invoice = await _invoice(ctx, number, lines=False)
    if invoice.file_key is not None:
        response = await _stream(ctx, invoice)
        if response is not None:
            return response
    elif invoice.render_job_id is not None:
        status = await ctx.session.scalar(select(Job.status).where(Job.id == invoice.render_job_id))
        if status in ("waiting", "running"):
            return _waiting()
    # SQLite: no reader snapshot while this request writes. The rollback expires the
    # invoice's attributes, so it leaves the session first and keeps what was read.
    ctx.session.expunge(invoice)
    await ctx.session.rollback()
    await _start_render(ctx, invoice)
    return _waiting()


@router.post(f"{ONE}/regenerate/", status_code=204, openapi_extra=empty_body())
async def regenerate_invoice(number: str, ctx: Writer) -> Response:
    """Render an invoice again

    Draws the invoice's PDF anew from the invoice as it was issued (an invoice never changes;
    `reissue` makes a new one); the download answers 409 until it is done. 400 for a canceled
    invoice.
    """
    invoice = await _invoice(ctx, number, lines=False)
    if await service.is_canceled(ctx.session, invoice):
        raise APIError(400, CANCELED)
    await service.queue_render(ctx.session, invoice)
    return Response(status_code=204)


@router.post(f"{ONE}/reissue/", status_code=204, openapi_extra=empty_body())
async def reissue_invoice(number: str, ctx: Writer) -> Response:
    """Cancel an invoice and issue a new one

    Issues the cancellation of the invoice and, when the order still has anything to invoice,
    a new invoice of the order as it is now. 400 for a cancellation or an invoice canceled
    already.
    """
    invoice = await _invoice(ctx, number)
    if invoice.is_cancellation:
        raise APIError(400, "A cancellation cannot be reissued.")
    order = await load_order(ctx, await _order_code(ctx, invoice), lock=True)
    if await service.is_canceled(ctx.session, invoice):
        raise APIError(400, CANCELED)
    await service.cancel(ctx.session, ctx.event, order, invoice)
    lines = await service.order_lines(ctx.session, ctx.event, order)
    if service.qualifies(order, lines):
        await service.issue(ctx.session, ctx.event, order, lines)
    return Response(status_code=204)


@router.get(f"{ONE}/ubl/")
async def invoice_ubl(number: str, ctx: Reader) -> Response:
    """Get an invoice as UBL (XRechnung syntax)

    The invoice as an EN 16931 UBL 2.1 XML document (an Admit extension), checked against the
    UBL schema; the PDF carries the same invoice as Factur-X (CII) XML.
    """
    invoice = await _invoice(ctx, number)
    refers = await ctx.session.get(Invoice, invoice.refers_id) if invoice.refers_id else None
    try:
        xml = await asyncio.to_thread(
            einvoice.ubl_xml,
            invoice,
            refers.full_invoice_no if refers is not None else None,
            refers.date if refers is not None else None,
        )
    except Exception as exc:  # the library refuses data its schema does not allow
        raise APIError(409, f"This invoice cannot be expressed as UBL: {exc}"[:500]) from None
    name = drawing.filename(invoice).removesuffix(".pdf") + ".xml"
    return Response(
        xml,
        media_type="application/xml",
        headers={"Content-Disposition": content_disposition(name)},
    )


async def _order_code(ctx: EventContext, invoice: Invoice) -> str:
    return str(await ctx.session.scalar(select(Order.code).where(Order.id == invoice.order_id)))


_NOT_ISSUED = {
    "exists": "An invoice for this order already exists.",
    "nothing": "There is nothing to invoice for this order.",
}


@router.post(
    f"{E}/orders/{{code}}/create_invoice/",
    status_code=201,
    response_model=InvoiceOut,
    tags=["orders"],
    openapi_extra=empty_body(),
)
async def create_invoice(code: str, ctx: Writer) -> Response:
    """Issue an order's invoice

    Issues an invoice of the order as it is now, whatever `invoice_generate` says. 400 when
    the order has an invoice that is not canceled, or nothing to invoice (canceled, or only
    free products while `invoice_include_free` is off).
    """
    order = await load_order(ctx, code, lock=True)
    try:
        invoice = await service.issue_on_request(ctx.session, ctx.event, order)
    except service.NotIssued as exc:
        raise APIError(400, _NOT_ISSUED[exc.reason]) from None
    await ctx.session.flush()
    loaded = await _invoice(ctx, invoice.full_invoice_no)
    body = (await serialize.render_many(ctx.session, [loaded]))[0]
    return JSONResponse(body, status_code=201)


openapi_responses.document(
    {
        ("GET", f"{ONE}/download/"): openapi_responses.BINARY,
        ("GET", f"{ONE}/ubl/"): openapi_responses.BINARY,
    },
    {
        ("GET", f"{ONE}/download/"): {"409": openapi_responses.ERROR},
        ("GET", f"{ONE}/ubl/"): {"409": openapi_responses.ERROR},
    },
)
