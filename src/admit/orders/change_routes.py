"""``POST E/orders/{code}/change/`` (the order change service in change.py) and
``POST E/orders/{code}/resend_link/`` (the order's link mailed again through the outbox)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from sqlalchemy import select
from starlette.responses import Response

from admit.kit.http.body import read_object
from admit.kit.http.context import EventAccess, EventContext
from admit.kit.http.errors import APIError, not_found
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import flush_guard, validate_input
from admit.mail.outbox import queue_mail
from admit.mail.render import render_mail
from admit.models import Order
from admit.orders.change import change_order
from admit.orders.change_schemas import ChangeIn
from admit.orders.routes import WRITE, E, load_order, notify_order, render_one, url_base

router = api_router(tags=["orders"])
NO_EMAIL = "There is no email address associated with this order."


async def mail_order(ctx: EventContext, order: Order, template: str) -> None:
    """Queues one of the order mails (``order_changed``, ``order_link``) to the buyer."""
    link = f"{url_base(ctx, ctx.event.slug)}order/{order.code}/{order.secret}/"
    subject, text, html = render_mail(template, code=order.code, link=link)
    await queue_mail(
        ctx.session,
        to=[order.email or ""],
        subject=subject,
        body=text,
        html=html,
        organizer_id=ctx.organizer_id,
        event_id=ctx.event.id,
        order_id=order.id,
    )


@router.post(f"{E}/orders/{{code}}/change/", openapi_extra=json_body(ChangeIn))
async def change(code: str, ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]) -> Response:
    """Change an order's positions

    Changes prices, products, dates, seats or attendees of positions, adds and cancels
    positions and fees, in one transaction. Answers the changed order as its detail renders it
    (200), or 400 with nothing changed."""
    data: ChangeIn = validate_input(ChangeIn, await read_object(ctx.request))  # type: ignore[assignment]
    order = await load_order(ctx, code, lock=True)
    outcome = await flush_guard(change_order(ctx.session, ctx.event, order, data))
    if outcome.changed:
        await notify_order(ctx, order, *outcome.actions)
        if data.send_email and order.email:
            await mail_order(ctx, order, "order_changed")
    if outcome.split is not None:
        await notify_order(ctx, outcome.split, *outcome.split_actions)
        if data.send_email and outcome.split.email:
            await mail_order(ctx, outcome.split, "order_changed")
    await flush_guard(ctx.session.flush())
    return JSONResponse(await render_one(ctx, await load_order(ctx, code)))


@router.post(f"{E}/orders/{{code}}/resend_link/", status_code=204)
async def resend_link(
    code: str, ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]
) -> Response:
    """204 once the mail is queued (it leaves with the commit); 400 without an address."""
    await resend(ctx, code)
    return no_content()


async def resend(ctx: EventContext, code: str) -> None:
    """Queues the order link mail again (the route above and the back office's button)."""
    order = await ctx.session.scalar(
        select(Order).where(Order.event_id == ctx.event.id, Order.code == code)
    )
    if order is None:
        raise not_found()
    if not order.email:
        raise APIError(400, NO_EMAIL)
    await mail_order(ctx, order, "order_link")
