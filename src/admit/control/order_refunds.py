"""Refunds from the order's page: refund (all or part of) a confirmed payment, the way it was
paid or onto a new gift card, then mark a refund done or cancel it, through the API's own code
(``orders.money_routes``: ``refund_payment``, ``refund_to_new_gift_card``, ``refund_done``,
``cancel_refund``), so the amount is checked against what is refundable, a gift card payment
goes straight back to its card, the order is canceled when asked, and the notifications are
the API's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.api_call import run, with_body
from admit.control.nav import ORDERS_WRITE
from admit.control.order_page import ORDER, detail_page
from admit.kit.http.context import EventAccess, EventContext
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.crud import validate_input
from admit.orders import money_routes
from admit.orders.money_schemas import PaymentRefundIn
from admit.web.forms import Pairs, first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)


async def _done(page: Page, ctx: EventContext, code: str, pairs: Pairs, failed: str,
                work: Callable[[], Awaitable[Any]], message: str) -> Response:  # fmt: skip
    _, errors = await run(page, ctx, work)
    if errors:
        return await detail_page(page, ctx, code, status=400, failed=failed, errors=errors,
                                 typed=pairs)  # fmt: skip
    page.web.flash(message)
    return page.redirect(f"/control/event/{ctx.organizer_slug}/{ctx.event.slug}/orders/{code}/")


@router.post(ORDER + "/refund")
@control_page(EventAccess(ORDERS_WRITE), form=True)
async def order_refund(page: Page, ctx: EventContext, pairs: Pairs, code: str) -> Response:
    """Refunds the chosen payment: the amount typed, or all that is refundable."""
    payment = first(pairs, "payment").strip()
    amount = first(pairs, "amount").strip()
    body = {"amount": amount or None, "mark_canceled": bool(first(pairs, "mark_canceled"))}

    to_card = first(pairs, "to") == "giftcard"

    async def work() -> Any:
        if not payment:
            raise FieldErrors.single("payment", "Choose the payment to refund.")
        if to_card:  # the API's body model checks the amount as the API would
            data = validate_input(PaymentRefundIn, body)
            return await money_routes.refund_to_new_gift_card(ctx, code, payment, data)
        return await money_routes.refund_payment(code, payment, with_body(ctx, body))

    message = "A new gift card holds the refund." if to_card else "The refund was created."
    return await _done(page, ctx, code, pairs, "refund", work, message)


@router.post(ORDER + "/refunds/{local_id}/done")
@control_page(EventAccess(ORDERS_WRITE), form=True)
async def order_refund_done(
    page: Page, ctx: EventContext, pairs: Pairs, code: str, local_id: str
) -> Response:
    async def work() -> Any:
        return await money_routes.refund_done(code, local_id, with_body(ctx, {}))

    return await _done(page, ctx, code, pairs, f"refund-{local_id}", work,
                       "The refund is marked as done.")  # fmt: skip


@router.post(ORDER + "/refunds/{local_id}/cancel")
@control_page(EventAccess(ORDERS_WRITE), form=True)
async def order_refund_cancel(
    page: Page, ctx: EventContext, pairs: Pairs, code: str, local_id: str
) -> Response:
    async def work() -> Any:
        return await money_routes.cancel_refund(code, local_id, with_body(ctx, {}))

    return await _done(page, ctx, code, pairs, f"refund-{local_id}", work,
                       "The refund was canceled.")  # fmt: skip
