"""Order payments ``E/orders/{code}/payments/`` and refunds ``E/orders/{code}/refunds/``: list,
detail, create, and their state actions (payments: ``confirm``, ``cancel``, ``refund``;
refunds: ``done``, ``process``, ``cancel``). Reading needs ``event.orders:read``, writing
``event.orders:write``.

Every write locks the order (``load_order(…, lock=True)``), so changes of one order's money
run one after the other; it bumps the order's ``last_modified``, keeps the sales ledger and
voucher counts in step when the order's state changes, and records the notifications of what
happened (``payment.confirmed``, ``paid``, the refund types, ``canceled``) in the same
transaction.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Depends
from pydantic import BaseModel
from sqlalchemy import select
from starlette.responses import Response

from admit.db import utcnow
from admit.kit.http.body import read_object
from admit.kit.http.context import EventAccess, EventContext, public_base_url
from admit.kit.http.errors import not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import flush_guard, validate_input
from admit.kit.resources.filtering import parse_pk
from admit.kit.resources.pagination import paginate
from admit.models import Order, OrderPayment, OrderRefund
from admit.orders import buyer_mails, payments, refunds
from admit.orders.money_schemas import (
    ConfirmIn,
    PaymentIn,
    PaymentRefundIn,
    ProcessIn,
    RefundIn,
)
from admit.orders.routes import READ, WRITE, E, load_order, notify_order
from admit.orders.rows import PAID, PAYMENT_CONFIRMED
from admit.orders.serialize import payment_dict, refund_dict
from admit.vouchers import usage as voucher_usage

router = api_router(tags=["orders"])

PAYMENTS = f"{E}/orders/{{code}}/payments"
REFUNDS = f"{E}/orders/{{code}}/refunds"
Reader = Annotated[EventContext, Depends(EventAccess(READ))]
Writer = Annotated[EventContext, Depends(EventAccess(WRITE))]
# A change of one order: returns what to answer with and the notification types it caused.
Work = Callable[[Order], Awaitable[tuple[Any, list[str]]]]


def _confirmed(order: Order) -> int:
    return sum(1 for p in order.payments if p.state == "confirmed")


async def _change(ctx: EventContext, code: str, work: Work) -> tuple[Order, Any]:
    """Runs ``work`` on the locked order, then does what every change of its money needs."""
    order = await load_order(ctx, code, lock=True)
    status, confirmed = order.status, _confirmed(order)
    result, notices = await work(order)
    order.last_modified = utcnow()
    await flush_guard(ctx.session.flush())
    if order.status != status:
        await voucher_usage.sync_order(ctx.session, order)  # recount the vouchers it uses
    paid = [PAYMENT_CONFIRMED] if _confirmed(order) > confirmed else []
    if order.status == "p" and status != "p":
        paid.append(PAID)
    await notify_order(ctx, order, *paid, *notices)
    return order, result


async def _body(ctx: EventContext, schema: type[BaseModel]) -> Any:
    return validate_input(schema, await read_object(ctx.request))


def _refund_out(order: Order, refund: OrderRefund) -> dict[str, Any]:
    return refund_dict(refund, {p.id: p.local_id for p in order.payments})


async def _order_id(ctx: EventContext, code: str) -> int:
    found = await ctx.session.scalar(
        select(Order.id).where(Order.event_id == ctx.event.id, Order.code == code)
    )
    if found is None:
        raise not_found()
    return found


async def _payment_ids(ctx: EventContext, order_id: int) -> dict[int, int]:
    rows = await ctx.session.execute(
        select(OrderPayment.id, OrderPayment.local_id).where(OrderPayment.order_id == order_id)
    )
    return {pk: local for pk, local in rows}


# -- payments ---------------------------------------------------------------------------------


@router.get(f"{PAYMENTS}/")
async def list_payments(code: str, ctx: Reader) -> Response:
    """List an order's payments

    Lists the order's payments, by their number in the order.
    """
    order_id = await _order_id(ctx, code)
    query = (
        select(OrderPayment)
        .where(OrderPayment.order_id == order_id)
        .order_by(OrderPayment.local_id)
    )
    body = await paginate(
        ctx.request, ctx.session, query, lambda rows: list(map(payment_dict, rows))
    )
    return JSONResponse(body)


@router.get(f"{PAYMENTS}/{{local_id}}/")
async def retrieve_payment(code: str, local_id: str, ctx: Reader) -> Response:
    """Get a payment

    Answers one payment of the order by its number in the order.
    """
    number = parse_pk(local_id)
    order_id = await _order_id(ctx, code)
    payment = await ctx.session.scalar(
        select(OrderPayment).where(
            OrderPayment.order_id == order_id, OrderPayment.local_id == number
        )
    )
    if payment is None:
        raise not_found()
    return JSONResponse(payment_dict(payment))


@router.post(f"{PAYMENTS}/", status_code=201, openapi_extra=json_body(PaymentIn))
async def create_payment(code: str, ctx: Writer) -> Response:
    """Create a payment

    Adds a payment to the order (created or confirmed at once) and answers it with 201; a
    confirmed payment that covers the total marks the order paid.
    """
    data: PaymentIn = await _body(ctx, PaymentIn)

    async def work(order: Order) -> tuple[OrderPayment, list[str]]:
        if data.send_email:
            buyer_mails.wanted(ctx.session, public_base_url(ctx.request))
        return await payments.create(ctx.session, ctx.event, order, data), []

    _, payment = await _change(ctx, code, work)
    return JSONResponse(payment_dict(payment), status_code=201)


@router.post(f"{PAYMENTS}/{{local_id}}/confirm/", openapi_extra=json_body(ConfirmIn))
async def confirm_payment(code: str, local_id: str, ctx: Writer) -> Response:
    """Confirm a payment

    Marks a created or pending payment as confirmed; when the order is then fully paid it
    becomes paid (quota permitting unless `force`).
    """
    parse_pk(local_id)
    data: ConfirmIn = await _body(ctx, ConfirmIn)

    async def work(order: Order) -> tuple[OrderPayment, list[str]]:
        payment = payments.find(order.payments, local_id)
        if data.send_email:
            buyer_mails.wanted(ctx.session, public_base_url(ctx.request))
        await payments.confirm(ctx.session, ctx.organizer_id, order, payment, data.force)
        return payment, []

    _, payment = await _change(ctx, code, work)
    return JSONResponse(payment_dict(payment))


@router.post(f"{PAYMENTS}/{{local_id}}/cancel/")
async def cancel_payment(code: str, local_id: str, ctx: Writer) -> Response:
    """Cancel a payment

    Cancels a payment that is not confirmed yet. Takes no body.
    """
    parse_pk(local_id)

    async def work(order: Order) -> tuple[OrderPayment, list[str]]:
        payment = payments.find(order.payments, local_id)
        payments.cancel(payment)
        return payment, []

    _, payment = await _change(ctx, code, work)
    return JSONResponse(payment_dict(payment))


@router.post(f"{PAYMENTS}/{{local_id}}/refund/", openapi_extra=json_body(PaymentRefundIn))
async def refund_payment(code: str, local_id: str, ctx: Writer) -> Response:
    """Returns the refund it created (not the payment), as the reference does."""
    parse_pk(local_id)
    data: PaymentRefundIn = await _body(ctx, PaymentRefundIn)

    async def work(order: Order) -> tuple[OrderRefund, list[str]]:
        payment = payments.find(order.payments, local_id)
        return await refunds.refund_payment(ctx.session, ctx.organizer_id, order, payment, data)

    order, refund = await _change(ctx, code, work)
    return JSONResponse(_refund_out(order, refund))


async def refund_to_new_gift_card(
    ctx: EventContext, code: str, local_id: str, data: PaymentRefundIn
) -> OrderRefund:
    """Not a route (the reference's API has no such refund): the back office's refund of a
    payment onto a new gift card (:func:`admit.orders.refunds.refund_to_new_card`), with the
    order locked and its notifications as every refund here."""
    parse_pk(local_id)

    async def work(order: Order) -> tuple[OrderRefund, list[str]]:
        payment = payments.find(order.payments, local_id)
        return await refunds.refund_to_new_card(ctx.session, ctx.event, order, payment, data)

    _, refund = await _change(ctx, code, work)
    return refund


# -- refunds ----------------------------------------------------------------------------------


@router.get(f"{REFUNDS}/")
async def list_refunds(code: str, ctx: Reader) -> Response:
    """List an order's refunds

    Lists the order's refunds, by their number in the order.
    """
    order_id = await _order_id(ctx, code)
    local_ids = await _payment_ids(ctx, order_id)
    query = (
        select(OrderRefund).where(OrderRefund.order_id == order_id).order_by(OrderRefund.local_id)
    )
    body = await paginate(
        ctx.request, ctx.session, query, lambda rows: [refund_dict(r, local_ids) for r in rows]
    )
    return JSONResponse(body)


@router.get(f"{REFUNDS}/{{local_id}}/")
async def retrieve_refund(code: str, local_id: str, ctx: Reader) -> Response:
    """Get a refund

    Answers one refund of the order by its number in the order.
    """
    number = parse_pk(local_id)
    order_id = await _order_id(ctx, code)
    refund = await ctx.session.scalar(
        select(OrderRefund).where(OrderRefund.order_id == order_id, OrderRefund.local_id == number)
    )
    if refund is None:
        raise not_found()
    return JSONResponse(refund_dict(refund, await _payment_ids(ctx, order_id)))


@router.post(f"{REFUNDS}/", status_code=201, openapi_extra=json_body(RefundIn))
async def create_refund(code: str, ctx: Writer) -> Response:
    """Create a refund

    Records a refund of the order (amount, source, provider, state) and answers it with 201; an
    amount beyond what was paid is refused.
    """
    data: RefundIn = await _body(ctx, RefundIn)

    async def work(order: Order) -> tuple[OrderRefund, list[str]]:
        return await refunds.create(ctx.session, ctx.organizer_id, order, data)

    order, refund = await _change(ctx, code, work)
    return JSONResponse(_refund_out(order, refund), status_code=201)


@router.post(f"{REFUNDS}/{{local_id}}/done/")
async def refund_done(code: str, local_id: str, ctx: Writer) -> Response:
    """Mark a refund done

    Marks a created or transit refund as done (the money went back). Takes no body.
    """
    parse_pk(local_id)

    async def work(order: Order) -> tuple[OrderRefund, list[str]]:
        refund = payments.find(order.refunds, local_id)
        return refund, await refunds.done(ctx.session, ctx.organizer_id, order, refund)

    order, refund = await _change(ctx, code, work)
    return JSONResponse(_refund_out(order, refund))


@router.post(f"{REFUNDS}/{{local_id}}/process/", openapi_extra=json_body(ProcessIn))
async def process_refund(code: str, local_id: str, ctx: Writer) -> Response:
    """Process an external refund

    Acknowledges a refund that arrived from outside (a chargeback); `mark_canceled` in the body
    also cancels the order.
    """
    parse_pk(local_id)
    data: ProcessIn = await _body(ctx, ProcessIn)

    async def work(order: Order) -> tuple[OrderRefund, list[str]]:
        refund = payments.find(order.refunds, local_id)
        return refund, refunds.process(ctx.session, order, refund, data.mark_canceled)

    order, refund = await _change(ctx, code, work)
    return JSONResponse(_refund_out(order, refund))


@router.post(f"{REFUNDS}/{{local_id}}/cancel/")
async def cancel_refund(code: str, local_id: str, ctx: Writer) -> Response:
    """Cancel a refund

    Cancels a refund that is not done yet. Takes no body.
    """
    parse_pk(local_id)

    async def work(order: Order) -> tuple[OrderRefund, list[str]]:
        refund = payments.find(order.refunds, local_id)
        return refund, refunds.cancel(refund)

    order, refund = await _change(ctx, code, work)
    return JSONResponse(_refund_out(order, refund))
