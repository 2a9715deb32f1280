"""One ticket (order position) of an order from its page: change its product or variation,
date (of a series), price, attendee name or e-mail, or cancel it (after a confirmation page);
and a new ticket added to the order. All run the API's own order change
(``orders.change_routes.change``: ``patch_positions`` / ``cancel_positions`` /
``create_positions``)
through :mod:`~admit.control.api_call`, so quotas, prices, the refusal to empty an order,
the order's history and the buyer's mail are the API's. Only what was really changed is
sent; the API's messages are shown by the field they are about, with what was typed."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from fastapi import APIRouter
from sqlalchemy import select
from starlette.responses import Response

from admit.control.access import control_page, discard
from admit.control.api_call import Errors, flat_errors, with_body
from admit.control.fields import as_id
from admit.control.nav import ORDERS_WRITE, event_nav
from admit.control.order_filters import product_choices
from admit.control.order_page import ORDER
from admit.control.render import render, text_of
from admit.kit.http.context import EventAccess, EventContext
from admit.kit.http.errors import NON_FIELD, APIError, FieldErrors
from admit.models import Order, OrderPosition, SubEvent
from admit.orders import change_routes
from admit.orders.routes import load_order
from admit.web.forms import Pairs, first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
POSITION = ORDER + "/positions/{position}"
FIELDS = ("product", "subevent", "price", "attendee_name", "attendee_email")
# The API's field names (last part of the error's path) -> the form's field.
FORM_FIELD = {"item": "product", "variation": "product", "subevent": "subevent",
              "price": "price", "attendee_name": "attendee_name",
              "attendee_email": "attendee_email"}  # fmt: skip
DATES_SHOWN = 1000
NOTHING = "Nothing was changed: change at least one field."


async def _load(ctx: EventContext, code: str, raw: str) -> tuple[Order, OrderPosition]:
    """The order and its live position named in the URL (404 page otherwise)."""
    order = await load_order(ctx, code)
    pk = as_id(raw)
    position = next((p for p in order.positions if p.id == pk and not p.canceled), None)
    if position is None:
        raise APIError(404, "This order has no such ticket (or it is canceled).")
    return order, position


def _current(position: OrderPosition) -> dict[str, str]:
    product = str(position.item_id)
    if position.variation_id:
        product += f"-{position.variation_id}"
    return {"product": product, "subevent": str(position.subevent_id or ""),
            "price": f"{position.price:.2f}",
            "attendee_name": position.attendee_name_cached or "",
            "attendee_email": position.attendee_email or ""}  # fmt: skip


def _changes(position: OrderPosition, pairs: Pairs) -> tuple[dict[str, Any], dict[str, str]]:
    """The ``patch_positions`` body of what differs from the ticket, and the form as typed."""
    typed = {name: first(pairs, name).strip() for name in FIELDS}
    now = _current(position)
    body: dict[str, Any] = {}
    if typed["product"] != now["product"]:
        item, _, variation = typed["product"].partition("-")
        body["item"] = as_id(item)
        body["variation"] = as_id(variation) if variation else None
    if typed["subevent"] and typed["subevent"] != now["subevent"]:
        body["subevent"] = as_id(typed["subevent"])
    if typed["price"] != now["price"]:
        try:
            same = Decimal(typed["price"]) == position.price
        except (InvalidOperation, ValueError):
            same = False
        if not same:
            body["price"] = typed["price"]  # as typed: the API says what is wrong with it
    for name in ("attendee_name", "attendee_email"):
        if typed[name] != now[name]:
            body[name] = typed[name] or None
    return body, typed


async def _dates(ctx: EventContext) -> list[tuple[str, str]]:
    """The dates of a series a ticket can be for (none for a single event)."""
    if not ctx.event.has_subevents:
        return []
    rows = await ctx.session.execute(
        select(SubEvent.id, SubEvent.name, SubEvent.date_from)
        .where(SubEvent.event_id == ctx.event.id)
        .order_by(SubEvent.date_from, SubEvent.id)
        .limit(DATES_SHOWN)
    )
    return [(str(pk), f"{text_of(name)} – {start:%Y-%m-%d %H:%M}") for pk, name, start in rows]


def by_form_field(errors: Any) -> Errors:
    """The API's nested errors (``patch_positions.0.body.item``) by the form's fields."""
    out: dict[str, list[str]] = {}
    for path, messages in flat_errors(errors).items():
        name = FORM_FIELD.get(path.rsplit(".", 1)[-1], NON_FIELD)
        out.setdefault(name, []).extend(messages)
    return out


async def _form(page: Page, ctx: EventContext, code: str, raw: str, *, status: int = 200,
                typed: dict[str, str] | None = None,
                errors: dict[str, list[str]] | None = None) -> Response:  # fmt: skip
    order, position = await _load(ctx, code, raw)
    products = await product_choices(ctx, bare_with_variations=False)
    return render(page, "position.html", status, nav=await event_nav(page, ctx, "orders"),
                  order=order, position=position, products=products, dates=await _dates(ctx),
                  values=typed or _current(position), errors=errors or {},
                  last=sum(not p.canceled for p in order.positions) == 1)  # fmt: skip


@router.get(POSITION + "/")
@control_page(EventAccess(ORDERS_WRITE))
async def position_form(page: Page, ctx: EventContext, code: str, position: str) -> Response:
    return await _form(page, ctx, code, position)


async def _apply(page: Page, ctx: EventContext, code: str, body: dict[str, Any]) -> Errors:
    """Runs the API's order change with ``body``; its refusal by the form's fields (and the
    transaction undone)."""
    try:
        await change_routes.change(code, with_body(ctx, body))
    except FieldErrors as exc:
        await discard(page, ctx)
        return by_form_field(exc.errors) or {NON_FIELD: ["Refused."]}
    except APIError as exc:
        await discard(page, ctx)
        return {NON_FIELD: [exc.detail]}
    return {}


@router.post(POSITION + "/change")
@control_page(EventAccess(ORDERS_WRITE), form=True)
async def position_change(
    page: Page, ctx: EventContext, pairs: Pairs, code: str, position: str
) -> Response:
    """Changes what differs from the ticket, in one order change of the API."""
    _, current = await _load(ctx, code, position)
    patch, typed = _changes(current, pairs)
    if not patch:
        return await _form(page, ctx, code, position, status=400, typed=typed,
                           errors={NON_FIELD: [NOTHING]})  # fmt: skip
    body = {"patch_positions": [{"position": current.id, "body": patch}],
            "send_email": bool(first(pairs, "send_email"))}  # fmt: skip
    errors = await _apply(page, ctx, code, body)
    if errors:
        return await _form(page, ctx, code, position, status=400, typed=typed, errors=errors)
    page.web.flash(f"Ticket {current.positionid} was changed.")
    return page.redirect(f"/control/event/{ctx.organizer_slug}/{ctx.event.slug}/orders/{code}/")


@router.get(POSITION + "/cancel")
@control_page(EventAccess(ORDERS_WRITE))
async def position_cancel_confirm(
    page: Page, ctx: EventContext, code: str, position: str
) -> Response:
    """Asks before canceling; says at once why the order's last ticket cannot be."""
    order, current = await _load(ctx, code, position)
    return await _confirm(page, ctx, order, current)


async def _confirm(page: Page, ctx: EventContext, order: Order, current: OrderPosition,
                   status: int = 200, errors: list[str] | None = None) -> Response:  # fmt: skip
    return render(page, "position_cancel.html", status, nav=await event_nav(page, ctx, "orders"),
                  order=order, position=current, errors=errors or [],
                  last=sum(not p.canceled for p in order.positions) == 1)  # fmt: skip


@router.post(POSITION + "/cancel")
@control_page(EventAccess(ORDERS_WRITE), form=True)
async def position_cancel(
    page: Page, ctx: EventContext, pairs: Pairs, code: str, position: str
) -> Response:
    """Cancels the ticket (and its add-ons) through the API's order change."""
    _, current = await _load(ctx, code, position)
    body = {"cancel_positions": [{"position": current.id}],
            "send_email": bool(first(pairs, "send_email"))}  # fmt: skip
    errors = await _apply(page, ctx, code, body)
    if errors:
        order, current = await _load(ctx, code, position)
        messages = [m for msgs in errors.values() for m in msgs]
        return await _confirm(page, ctx, order, current, 400, messages)
    page.web.flash(f"Ticket {current.positionid} was canceled.")
    return page.redirect(f"/control/event/{ctx.organizer_slug}/{ctx.event.slug}/orders/{code}/")


NEW_FIELDS = ("product", "subevent", "price", "attendee_name", "attendee_email")


async def _new_form(page: Page, ctx: EventContext, code: str, *, status: int = 200,
                    typed: dict[str, str] | None = None,
                    errors: dict[str, list[str]] | None = None) -> Response:  # fmt: skip
    order = await load_order(ctx, code)
    products = await product_choices(ctx, bare_with_variations=False)
    return render(page, "position_new.html", status, nav=await event_nav(page, ctx, "orders"),
                  order=order, products=products, dates=await _dates(ctx),
                  values=typed or {}, errors=errors or {})  # fmt: skip


@router.get(ORDER + "/positions/new")
@control_page(EventAccess(ORDERS_WRITE))
async def position_new_form(page: Page, ctx: EventContext, code: str) -> Response:
    return await _new_form(page, ctx, code)


@router.post(ORDER + "/positions/new")
@control_page(EventAccess(ORDERS_WRITE), form=True)
async def position_add(page: Page, ctx: EventContext, pairs: Pairs, code: str) -> Response:
    """Adds a ticket to the order through the API's order change (its quota, price and
    validation; an empty price takes the product's)."""
    typed = {name: first(pairs, name).strip() for name in NEW_FIELDS}
    item, _, variation = typed["product"].partition("-")
    new: dict[str, Any] = {"item": as_id(item)}
    new["variation"] = as_id(variation) if variation else None
    if typed["subevent"]:
        new["subevent"] = as_id(typed["subevent"])
    for name in ("price", "attendee_name", "attendee_email"):
        if typed[name]:
            new[name] = typed[name]
    body = {"create_positions": [new], "send_email": bool(first(pairs, "send_email"))}
    errors = await _apply(page, ctx, code, body)
    if errors:
        return await _new_form(page, ctx, code, status=400, typed=typed, errors=errors)
    page.web.flash("A ticket was added to the order.")
    return page.redirect(f"/control/event/{ctx.organizer_slug}/{ctx.event.slug}/orders/{code}/")
