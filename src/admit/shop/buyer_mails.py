"""The buyer's mails after the checkout: "paid" (the tickets and the invoice attached) and
"canceled".

Order hooks record in the transaction which orders became paid or canceled; right before the
commit, when the caller wanted the mails (:mod:`admit.orders.buyer_mails`: the API's
``send_email``, the shop's own pages), one ``shop.buyer_mail`` job per order is queued in the
same transaction. A rolled-back change mails nothing, and the request does no drawing: the job
draws the tickets and composes the mail after the commit, then stores it in the outbox
(:mod:`admit.mail.outbox`), whose own job delivers it.

The invoice the payment issued (``invoice_generate``: issued right before the commit, so in
the same transaction as the job) exists when the job runs; its PDF is drawn by its own job
(``invoices.render``), so the mail waits a little for it (:data:`WAIT_ATTEMPTS` retries) and
draws it itself only when that job is gone or failed. Files: the tickets are the job's result
file (kept as long as the job, :data:`KEEP_HOURS`, longer than a mail's retries take); the
invoice is attached from its own file, which is never deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.events.settings import value
from admit.invoices import drawing
from admit.invoices import service as invoice_service
from admit.invoices.settings_keys import setting
from admit.jobs.queue import JobContext, JobFailed, RetryLater, enqueue, job_kind
from admit.kit.http.transaction import before_commit, commit_and_notify
from admit.kit.resources.i18n import localized
from admit.mail.outbox import queue_mail
from admit.models import Event, Invoice, Job, Order, OrderPosition, Organizer
from admit.orders import buyer_mails, hooks
from admit.orders.serialize import ORDER_LOAD
from admit.shop import mails, orders
from admit.shop.checkout import order_url
from admit.tickets.tasks import safe_filename

KIND = "shop.buyer_mail"
KEEP_HOURS = 24.0 * 7
MAX_ATTEMPTS = 8
# Runs that wait for the invoice's own rendering before drawing it here.
WAIT_ATTEMPTS = 5
PDF = "application/pdf"
_PENDING = "buyer_mails_pending"


def _record(session: AsyncSession, order: Order, kind: str) -> None:
    pending: dict[int, tuple[int, str]] = session.info.setdefault(_PENDING, {})
    # Paid and canceled in one transaction: the buyer hears of the outcome, the cancellation.
    if order.id not in pending or kind == "canceled":
        pending[order.id] = (order.event_id, kind)
    before_commit(session, _PENDING, _queue_jobs)


async def on_paid(session: AsyncSession, order: Order, _positions: Sequence[OrderPosition]) -> None:
    if order.email:
        _record(session, order, "paid")


async def on_canceled(
    session: AsyncSession, order: Order, _positions: Sequence[OrderPosition]
) -> None:
    if order.email:
        _record(session, order, "canceled")


async def _queue_jobs(session: AsyncSession) -> None:
    pending: dict[int, tuple[int, str]] = session.info.pop(_PENDING, {})
    base = buyer_mails.base_url(session)
    if base is None or not pending:
        return
    organizers = dict(
        (
            await session.execute(
                select(Event.id, Event.organizer_id).where(
                    Event.id.in_({event for event, _ in pending.values()})
                )
            )
        ).all()
    )
    for order_id, (event_id, kind) in pending.items():
        await enqueue(
            session,
            KIND,
            {"order": order_id, "kind": kind, "base": base},
            organizer_id=organizers.get(event_id),
            event_id=event_id,
        )


def _never_idle_for_new(*_args: Any) -> bool:
    """Creating an order never mails through this hook (order creation's own ``send_email``
    mails the placed mail), so the creation fast lane may take every order."""
    return True


hooks.register(hooks.order_paid_hooks, on_paid, idle=_never_idle_for_new)
if on_canceled not in hooks.order_canceled_hooks:
    hooks.order_canceled_hooks.append(on_canceled)


async def _load(session: AsyncSession, order_id: int) -> tuple[Order, Event] | None:
    order = await session.scalar(select(Order).where(Order.id == order_id).options(*ORDER_LOAD))
    if order is None:
        return None
    row = (
        await session.execute(
            select(Event, Organizer)
            .join(Organizer, Organizer.id == Event.organizer_id)
            .where(Event.id == order.event_id)
        )
    ).first()
    if row is None:
        return None
    event, organizer = row
    event.organizer_name = organizer.name  # type: ignore[attr-defined]
    event.organizer_slug = organizer.slug  # type: ignore[attr-defined]
    return order, event


async def _invoice_file(job: JobContext, session: AsyncSession, invoice: Invoice) -> str:
    """The key of the invoice's PDF: its own rendering's file; while that rendering still
    waits or runs the mail waits (retries) for it, and draws the PDF itself when it is gone,
    failed, or the waiting took too long."""
    if invoice.file_key is not None:
        return invoice.file_key
    render = await session.get(Job, invoice.render_job_id) if invoice.render_job_id else None
    if render is not None and render.status in ("waiting", "running"):
        if job.attempt < WAIT_ATTEMPTS:
            raise RetryLater(f"Invoice {invoice.full_invoice_no} is being drawn.", job.attempt)
    content = await drawing.render_pdf(session, job.store, invoice.id)
    if content is None:
        raise JobFailed("The invoice no longer exists.")
    key = drawing.file_key(invoice)
    async with job.store.writer(key) as handle:
        handle.write(content)
    return key


async def _paid_parts(
    job: JobContext, session: AsyncSession, event: Event, order: Order
) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """The attachments: the invoices first (a run that waits for one ends before the tickets
    are drawn and stored), then the tickets as the job's result file."""
    attachments: list[dict[str, str]] = []
    numbers = []
    if setting(event, "invoice_email_attachment"):
        for invoice in await invoice_service.active_invoices(session, order.id):
            key = await _invoice_file(job, session, invoice)
            name = drawing.filename(invoice)
            attachments.append({"key": key, "filename": name, "content_type": PDF})
            numbers.append(invoice.full_invoice_no)
    tickets = ""
    if orders.tickets_allowed(event, order):
        pdf = await orders.ticket_pdf(session, job.store, event, order, None)
        if pdf is not None:
            tickets = safe_filename(event.organizer_slug, event.slug, order.code)  # type: ignore[attr-defined]
            async with job.result_file(tickets, PDF) as handle:
                handle.write(pdf)
            attachments.insert(
                0, {"key": job.result["key"], "filename": tickets, "content_type": PDF}
            )
    return attachments, {"tickets": tickets, "invoices": numbers}


async def _canceled_parts(session: AsyncSession, order: Order) -> dict[str, Any]:
    numbers = await session.scalars(
        select(Invoice.full_invoice_no)
        .where(Invoice.order_id == order.id, Invoice.is_cancellation.is_(True))
        .order_by(Invoice.id)
    )
    fee = order.total if order.status != "c" else None
    return {"invoices": list(numbers), "fee": f"{fee:.2f}" if fee else None}


@job_kind(KIND, max_attempts=MAX_ATTEMPTS, keep_hours=KEEP_HOURS, time_limit=300)
async def send_buyer_mail(job: JobContext) -> str | None:
    """Input: ``{"order": id, "kind": "paid" | "canceled", "base": base URL}``."""
    order_id, kind, base = job.input.get("order"), job.input.get("kind"), job.input.get("base")
    if not isinstance(order_id, int) or kind not in ("paid", "canceled") or not base:
        raise JobFailed("The job's input names no order, mail or base URL.")
    async with job.db.sessionmaker() as session:
        loaded = await _load(session, order_id)
        if loaded is None:
            return "The order no longer exists."
        order, event = loaded
        if not order.email:
            return "The order has no e-mail address."
        if kind == "paid" and order.status != "p":
            return "The order is no longer paid; no paid mail."
        attachments: list[dict[str, str]] = []
        if kind == "paid":
            attachments, extra = await _paid_parts(job, session, event, order)
        else:
            extra = await _canceled_parts(session, order)
        view = await orders.view(session, event, order)
        context = {
            "code": order.code,
            "event": localized(event.name, order.locale),
            "lang": (order.locale or "en").split("-")[0],
            "organizer": event.organizer_name,  # type: ignore[attr-defined]
            "contact": value(event, "contact_mail"),
            "total": f"{order.total:.2f}",
            "currency": event.currency,
            "positions": orders.mail_lines(view, event.currency),
            "link": order_url(base, event.organizer_slug, event.slug, order),  # type: ignore[attr-defined]
            **extra,
        }
        subject, text, html = mails.render(context, kind)
        mail = await queue_mail(
            session,
            to=[order.email],
            subject=subject,
            body=text,
            html=html,
            attachments=attachments,
            organizer_id=event.organizer_id,
            event_id=event.id,
            order_id=order.id,
        )
        mail_id = mail.id
        await commit_and_notify(session)
    return f"The {kind} mail of order {order.code} is in the outbox (mail {mail_id})."
