"""``…/orders/{code}/``: one order with its tickets, answers, fees, payments and refunds, its
history and the mails sent about it, and its actions as forms (mark paid, cancel, extend,
resend the link, approve, deny, reactivate, new ticket codes). Every action goes through the
API's own code (``orders.action_routes.perform``, ``orders.change_routes.resend``), so its
rules, locks, notifications and mails are the API's; a refusal is shown next to the field (or
at the action) with what was typed, and nothing of it is kept. Each ticket links to its PDF
(``order_tickets``), its scans (``checkin_history``) and its change form
(``order_positions``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from sqlalchemy import select
from starlette.responses import Response

from admit.control.access import control_page, discard
from admit.control.history import order_history
from admit.control.nav import ORDERS_READ, ORDERS_WRITE, event_nav
from admit.control.render import render, text_of
from admit.kit.http.context import EventAccess, EventContext
from admit.kit.http.errors import APIError, FieldErrors
from admit.models import Item, ItemVariation, OutgoingMail, Question
from admit.orders.action_routes import perform
from admit.orders.change_routes import resend
from admit.orders.routes import load_order
from admit.tickets.downloads import order_refusal
from admit.web.forms import Pairs, first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
ORDER = "/control/event/{organizer}/{event}/orders/{code}"

# page action -> (API action, what the flash says once done)
ACTIONS: dict[str, tuple[str, str]] = {
    "mark_paid": ("mark_paid", "The order was marked as paid."),
    "cancel": ("mark_canceled", "The order was canceled."),
    "extend": ("extend", "The payment deadline was moved."),
    "resend": ("resend_link", "The link to the order was sent to the buyer again."),
    "approve": ("approve", "The order was approved."),
    "deny": ("deny", "The order was denied."),
    "reactivate": ("reactivate", "The order was reactivated."),
    "regenerate_secrets": (
        "regenerate_secrets",
        "The tickets have new codes; the old ones no longer scan.",
    ),
}


async def _names(ctx: EventContext) -> dict[str, dict[int, Any]]:
    """Product, variation and question texts of the event (one statement each), and whether
    a product makes tickets (``None``: all but add-ons do)."""
    eid = ctx.event.id
    items = (
        await ctx.session.execute(
            select(Item.id, Item.name, Item.generate_tickets).where(Item.event_id == eid)
        )
    ).all()
    variations = await ctx.session.execute(
        select(ItemVariation.id, ItemVariation.value)
        .join(Item, Item.id == ItemVariation.item_id)
        .where(Item.event_id == eid)
    )
    questions = await ctx.session.execute(
        select(Question.id, Question.question).where(Question.event_id == eid)
    )
    return {
        "items": {i: text_of(n) for i, n, _ in items},
        "makes_tickets": {i: g for i, _, g in items},
        "variations": {i: text_of(n) for i, n in variations},
        "questions": {i: text_of(n) for i, n in questions},
    }


MAILS_SHOWN = 100
MAIL_CLASSES = {"queued": "status-n", "sent": "status-p", "failed": "status-c"}


async def order_mails(ctx: EventContext, order: Any) -> list[dict[str, Any]]:
    """The mails queued about the order (``outgoing_mails.order_id``), newest first, with
    the ticket a mail was about; older mails of the outbox, queued before it named orders,
    are not found."""
    tickets = {p.id: p.positionid for p in order.positions}
    rows = await ctx.session.execute(
        select(OutgoingMail.created, OutgoingMail.to, OutgoingMail.subject, OutgoingMail.status,
               OutgoingMail.sent, OutgoingMail.error, OutgoingMail.position_id)
        .where(OutgoingMail.order_id == order.id, OutgoingMail.event_id == ctx.event.id)
        .order_by(OutgoingMail.created.desc(), OutgoingMail.id.desc())
        .limit(MAILS_SHOWN)
    )  # fmt: skip
    return [
        {"created": created, "to": to, "subject": subject, "status": status, "sent": sent,
         "error": (error or "")[:200], "ticket": tickets.get(position)}
        for created, to, subject, status, sent, error, position in rows
    ]  # fmt: skip


def downloads(order: Any, makes_tickets: dict[int, Any]) -> list[int]:
    """The positions whose ticket the API's download route gives (none if the order gives
    none): the same rules as ``tickets.downloads``, read from what the page loaded."""
    if order_refusal(order):
        return []
    return [
        p.id
        for p in order.positions
        if not p.canceled
        and (makes_tickets.get(p.item_id) if makes_tickets.get(p.item_id) is not None
             else p.addon_to_id is None)
    ]  # fmt: skip


def _body(name: str, pairs: Pairs) -> dict[str, Any]:
    """The API action's JSON body from the form's fields."""
    if name == "mark_canceled":
        fee = first(pairs, "cancellation_fee").strip()
        return {"cancellation_fee": fee or None, "send_email": bool(first(pairs, "send_email"))}
    if name == "extend":
        return {"expires": first(pairs, "expires").strip(), "force": bool(first(pairs, "force"))}
    return {}


async def detail_page(
    page: Page,
    ctx: EventContext,
    code: str,
    *,
    status: int = 200,
    failed: str = "",
    errors: dict[str, list[str]] | None = None,
    typed: Pairs | None = None,
) -> Response:
    try:
        order = await load_order(ctx, code)
    except APIError:
        return render(page, "forbidden.html", 404, nav=await event_nav(page, ctx, "orders"),
                      detail="There is no order with this code in this event.")  # fmt: skip
    names = await _names(ctx)
    return render(
        page,
        "order.html",
        status,
        nav=await event_nav(page, ctx, "orders"),
        order=order,
        names=names,
        downloads=downloads(order, names["makes_tickets"]),
        history=await order_history(ctx, order.code),
        mails=await order_mails(ctx, order),
        mail_classes=MAIL_CLASSES,
        may_write=ctx.has_event_permission(ctx.event.id, ORDERS_WRITE),
        failed=failed,
        errors=errors or {},
        typed=dict(typed or []),
    )


@router.get(ORDER + "/")
@control_page(EventAccess(ORDERS_READ))
async def order_detail(page: Page, ctx: EventContext, code: str) -> Response:
    return await detail_page(page, ctx, code)


def _action_page(action: str) -> None:
    api_name, done = ACTIONS[action]

    async def run(page: Page, ctx: EventContext, pairs: Pairs, code: str) -> Response:
        async def body() -> dict[str, Any]:
            return _body(api_name, pairs)

        try:
            if api_name == "resend_link":
                await resend(ctx, code)
            else:
                await perform(ctx, code, api_name, body)
        except FieldErrors as exc:
            await discard(page, ctx)
            errors = exc.errors if isinstance(exc.errors, dict) else {"": [str(exc.errors)]}
            flat = {
                k: [str(m) for m in (v if isinstance(v, list) else [v])] for k, v in errors.items()
            }
            return await detail_page(page, ctx, code, status=exc.status, failed=action, errors=flat,
                                 typed=pairs)  # fmt: skip
        except APIError as exc:
            await discard(page, ctx)
            return await detail_page(page, ctx, code, status=exc.status, failed=action,
                                 errors={"": [exc.detail]}, typed=pairs)  # fmt: skip
        page.web.flash(done)
        return page.redirect(f"/control/event/{ctx.organizer_slug}/{ctx.event.slug}/orders/{code}/")

    run.__name__ = f"order_{action}"
    handler = control_page(EventAccess(ORDERS_WRITE), form=True)(run)
    router.add_api_route(f"{ORDER}/{action}", handler, methods=["POST"], name=f"control-{action}")


for _action in ACTIONS:
    _action_page(_action)
