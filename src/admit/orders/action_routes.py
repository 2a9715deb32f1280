"""Order state actions, one ``POST E/orders/{code}/<action>/`` route each: mark paid, pending,
expired or canceled, reactivate, extend, approve, deny, regenerate secrets. Each runs on the
locked order, recounts its vouchers and records the notifications the action means; the answer
is the order as it is afterwards. The order routes themselves are :mod:`admit.orders.routes`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Depends
from starlette.responses import Response

from admit.customers import membership_rules
from admit.db import utcnow
from admit.kit.http.body import read_object
from admit.kit.http.context import EventAccess, EventContext, public_base_url
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import empty_body, json_body
from admit.kit.resources.crud import flush_guard, validate_input
from admit.models import Order
from admit.notifications.notify import ORDER_CHANGED_SECRET
from admit.orders import actions, buyer_mails
from admit.orders.routes import EXPIRYCHANGED, WRITE, E, load_order, notify_order, render_one
from admit.orders.rows import PAID, PAYMENT_CONFIRMED
from admit.orders.schemas import CancelIn, ExtendIn, MarkPaidIn
from admit.vouchers import usage as voucher_usage

router = api_router(tags=["orders"])


def _confirmed_payments(order: Order) -> int:
    return sum(1 for p in order.payments if p.state == "confirmed")


Action = Callable[[EventContext, Order, dict[str, Any]], Any]


async def _mark_paid(ctx: EventContext, order: Order, raw: dict[str, Any]) -> None:
    data: MarkPaidIn = validate_input(MarkPaidIn, raw)  # type: ignore[assignment]
    if data.send_email:
        buyer_mails.wanted(ctx.session, public_base_url(ctx.request))
    await actions.mark_paid(ctx.session, order, data.force)


async def _cancel(ctx: EventContext, order: Order, raw: dict[str, Any]) -> None:
    data: CancelIn = validate_input(CancelIn, raw)  # type: ignore[assignment]
    if data.send_email:
        buyer_mails.wanted(ctx.session, public_base_url(ctx.request))
    actions.mark_canceled(ctx.session, order, data)
    await membership_rules.cancel_granted(ctx.session, order)


async def _extend(ctx: EventContext, order: Order, raw: dict[str, Any]) -> None:
    data: ExtendIn = validate_input(ExtendIn, raw)  # type: ignore[assignment]
    await actions.extend(ctx.session, order, ctx.event, data)


ACTIONS: dict[str, Action] = {
    "mark_paid": _mark_paid,
    "mark_pending": lambda ctx, order, raw: actions.mark_pending(order),
    "mark_expired": lambda ctx, order, raw: actions.mark_expired(order),
    "mark_canceled": _cancel,
    "reactivate": lambda ctx, order, raw: actions.reactivate(ctx.session, order),
    "extend": _extend,
    "approve": lambda ctx, order, raw: actions.approve(ctx.session, order),
    "deny": lambda ctx, order, raw: actions.deny(order),
    "regenerate_secrets": lambda ctx, order, raw: actions.regenerate_secrets(ctx.session, order),
}


# The type each action records when it succeeds (``mark_pending`` has none: the reference
# has no core type for an order that became unpaid). A payment the action confirmed adds
# ``payment.confirmed``, an order it made paid ``paid`` (see ``_action_notices``).
ACTION_NOTICES: dict[str, tuple[str, ...]] = {
    "mark_paid": (),
    "mark_pending": (),
    "mark_expired": ("service.event.order.expired",),
    "mark_canceled": ("service.event.order.canceled",),
    "reactivate": ("service.event.order.reactivated",),
    "extend": (EXPIRYCHANGED,),
    "approve": ("service.event.order.approved",),
    "deny": ("service.event.order.denied",),
    "regenerate_secrets": (ORDER_CHANGED_SECRET,),
}


def _action_notices(name: str, order: Order, status: str, confirmed: int) -> list[str]:
    actions = list(ACTION_NOTICES[name])
    if _confirmed_payments(order) > confirmed:
        actions.append(PAYMENT_CONFIRMED)
    # Paid by a payment or by approving a free order; a reactivated order returns to the
    # state it had, which is no new payment.
    if order.status == "p" and status != "p" and name != "reactivate":
        actions.append(PAID)
    return actions


# Summary and description of each action's route (the endpoint below serves them all).
ACTION_DOCS: dict[str, tuple[str, str]] = {
    "mark_paid": ("Mark an order paid", "Confirms a payment for the open amount and makes the "
                  "pending (or expired) order paid. Quota is checked again for an expired order "
                  "unless `force` is set. A paid or canceled order answers 400. `send_email` "
                  "mails the buyer the paid mail with the tickets and the invoice."),
    "mark_pending": ("Mark an order pending", "Makes a paid order unpaid again."),
    "mark_expired": ("Mark an order expired", "Expires a pending order; its tickets no longer "
                     "count against quota."),
    "mark_canceled": ("Cancel an order", "Cancels the order and its tickets; a "
                      "`cancellation_fee` keeps that amount as a fee, the rest can be refunded. "
                      "`send_email` mails the buyer."),
    "reactivate": ("Reactivate a canceled order", "Brings a canceled order back to the state "
                   "it had, if quota and seats are still available."),
    "extend": ("Extend an order's payment deadline", "Sets a new `expires` for a pending or "
               "expired order; an expired order becomes pending again (quota permitting unless "
               "`force`)."),
    "approve": ("Approve an order", "Approves an order that requires approval; a free order "
                "becomes paid, others wait for payment."),
    "deny": ("Deny an order", "Denies an order that requires approval; it is canceled."),
    "regenerate_secrets": ("Regenerate ticket secrets", "Gives every ticket of the order a new "
                           "secret (and the order a new secret link); the old QR codes stop "
                           "scanning."),
}  # fmt: skip


# The body each action reads: an object, empty where the action takes no options.
ACTION_BODIES: dict[str, Any] = {
    "mark_paid": MarkPaidIn,
    "mark_canceled": CancelIn,
    "extend": ExtendIn,
}


def _action_body(name: str) -> dict[str, Any]:
    model = ACTION_BODIES.get(name)
    if model is None:
        return empty_body()
    extra = json_body(model)
    extra["requestBody"]["required"] = name == "extend"  # the others: no body is {}
    return extra


async def perform(
    ctx: EventContext, code: str, name: str, body: Callable[[], Awaitable[dict[str, Any]]]
) -> Order:
    """Runs the action ``name`` on the locked order ``code`` with the options ``body()``
    gives (read once the order is found: an unknown order is 404 before a bad body is 400),
    and records what it changed: the route below and the back office's buttons both go
    through here. Raises the API's errors; the caller's transaction commits."""
    order = await load_order(ctx, code, lock=True)
    raw = await body()
    status, confirmed = order.status, _confirmed_payments(order)
    result = ACTIONS[name](ctx, order, raw)
    if hasattr(result, "__await__"):
        await result
    order.last_modified = utcnow()
    await flush_guard(ctx.session.flush())
    await voucher_usage.sync_order(ctx.session, order)  # recount the vouchers it uses
    await notify_order(ctx, order, *_action_notices(name, order, status, confirmed))
    return order


def _action_route(name: str) -> None:
    async def endpoint(
        code: str, ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]
    ) -> Response:
        await perform(ctx, code, name, lambda: read_object(ctx.request))
        return JSONResponse(await render_one(ctx, await load_order(ctx, code)))

    router.add_api_route(
        f"{E}/orders/{{code}}/{name}/",
        endpoint,
        methods=["POST"],
        name=f"order-{name}",
        tags=["orders"],
        summary=ACTION_DOCS[name][0],
        description=ACTION_DOCS[name][1],
        openapi_extra=_action_body(name),
    )


for _name in ACTIONS:
    _action_route(_name)
