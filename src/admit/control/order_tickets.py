"""The order's tickets from its page: all of them in one PDF, or one position's, served by the
API's own download routes (``tickets.routes.order_tickets`` / ``position_ticket``), so what
exists, the cache and the rendering job are theirs and the permission is theirs too (reading
orders). The first request of a content queues its rendering: the page then says so and
looks again every two seconds (a ``meta`` refresh, no script) until the PDF comes."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import select
from starlette.responses import Response

from admit.control.access import control_page, discard
from admit.control.api_call import answer
from admit.control.fields import whole_number
from admit.control.nav import ORDERS_READ, event_nav
from admit.control.order_page import ORDER
from admit.control.render import render
from admit.kit.http.context import EventAccess, EventContext
from admit.kit.resources.filtering import PK_MAX
from admit.models import Order, OrderPosition
from admit.tickets.routes import order_tickets, position_ticket
from admit.web.page import Page

router = APIRouter(include_in_schema=False)


async def _served(page: Page, ctx: EventContext, response: Response, code: str) -> Response:
    """The PDF as the API answers it, or a page while it is rendered (409) or once it failed
    (410). The API's download read its rows in a transaction it closed: the page reads
    again what it shows."""
    if response.status_code == 200:
        return response
    await discard(page, ctx)
    body = answer(response) or {}
    failed = response.status_code == 410
    return render(page, "tickets_wait.html", 410 if failed else 200,
                  nav=await event_nav(page, ctx, "orders"), code=code, failed=failed,
                  percentage=body.get("percentage"), message=body.get("message"))  # fmt: skip


@router.get(ORDER + "/tickets.pdf")
@control_page(EventAccess(ORDERS_READ))
async def order_tickets_pdf(page: Page, ctx: EventContext, code: str) -> Response:
    """Every ticket of the order in one PDF (404 page when the order has none to give)."""
    return await _served(page, ctx, await order_tickets(code, ctx), code)


@router.get(ORDER + "/tickets/{position}.pdf")
@control_page(EventAccess(ORDERS_READ))
async def position_ticket_pdf(page: Page, ctx: EventContext, code: str, position: str) -> Response:
    """One ticket of the order as a PDF; a position of another order is not found here."""
    pk = whole_number(position, PK_MAX)
    found = pk and await ctx.session.scalar(
        select(OrderPosition.id)
        .join(Order, Order.id == OrderPosition.order_id)
        .where(Order.event_id == ctx.event.id, Order.code == code, OrderPosition.id == pk)
    )
    if not found:
        return render(page, "forbidden.html", 404, nav=await event_nav(page, ctx, "orders"),
                      detail="This order has no such ticket.")  # fmt: skip
    return await _served(page, ctx, await position_ticket(str(pk), ctx), code)
