"""Orders: create, list (per event and per organizer), detail, PATCH, DELETE (test mode only),
order positions (positions.py); deletion guards for events, dates, tax rules. The state
actions are action_routes.py."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends
from sqlalchemy import delete as sa_delete
from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.catalog.taxes import service as taxes_service
from admit.db import utcnow
from admit.events import service as events_service
from admit.kit.http.body import read_object
from admit.kit.http.context import (
    EventAccess,
    EventContext,
    OrganizerAccess,
    OrgContext,
    public_base_url,
)
from admit.kit.http.errors import APIError, not_found
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import flush_guard, parse_update, validate_input
from admit.mail.outbox import queue_mail
from admit.mail.render import render_mail
from admit.models import Event, Order, OrderFee, OrderPosition, SubEvent, TaxRule
from admit.notifications.notify import notify_all
from admit.orders import customer_link, hooks, listed, positions
from admit.orders import openapi as _documented  # noqa: F401  (registers its answers)
from admit.orders.create import Placed, create_order
from admit.orders.created import created_body
from admit.orders.downloads_field import api_base, decorate_orders
from admit.orders.filters import ORDER_FILTERS, ORDER_ORDERING, request_view
from admit.orders.schemas import OrderIn, OrderPatch
from admit.orders.serialize import ORDER_LOAD, position_checkins, render_orders
from admit.quotas import ledger
from admit.seating.render import position_seats
from admit.subevents import service as subevents_service
from admit.vouchers import usage as voucher_usage

router = api_router(tags=["orders"])

READ = "event.orders:read"
WRITE = "event.orders:write"
E = "/organizers/{organizer}/events/{event}"

FILTERS = ORDER_FILTERS
ORDERING = ORDER_ORDERING


# Creation records ``rows.placed_actions``; the other actions record these.
CONTACT_CHANGED = "service.event.order.contact.changed"
EXPIRYCHANGED = "service.event.order.expirychanged"
MODIFIED = "service.event.order.modified"
DELETED = "service.event.order.deleted"
CONTACT_FIELDS = frozenset({"email", "phone"})


async def notify_order(ctx: EventContext, order: Order, *actions: str) -> None:
    """Records the order's notifications (payload: its ``code``) in the request's transaction."""
    await notify_all(
        ctx.session,
        actions,
        organizer_id=ctx.organizer_id,
        event_id=ctx.event.id,
        code=order.code,
    )


def url_base(ctx: OrgContext, event_slug: str) -> str:
    return f"{public_base_url(ctx.request)}/{ctx.organizer_slug}/{event_slug}/"


async def render_one(ctx: EventContext, order: Order) -> dict[str, Any]:
    slug = ctx.event.slug
    body = (
        await render_orders(
            ctx.session, [order], {order.event_id: slug}, {order.event_id: url_base(ctx, slug)}
        )
    )[0]
    apis = {order.event_id: api_base(ctx.request, ctx.organizer_slug, slug)}
    view = request_view(ctx.request)
    await decorate_orders(ctx.session, [order], [body], view, apis, ctx.event)
    return body


async def load_order(ctx: EventContext, code: str, *, lock: bool = False) -> Order:
    """The order named in the URL; ``lock`` holds its row until commit (PostgreSQL), so two
    state changes of one order run one after the other instead of both acting on the state
    they read first."""
    query = (
        select(Order)
        .where(Order.event_id == ctx.event.id, Order.code == code)
        .options(*ORDER_LOAD)
        .execution_options(populate_existing=True)
    )
    if lock:
        query = query.with_for_update(of=Order)
    order = (await ctx.session.execute(query)).scalars().first()
    if order is None:
        raise not_found()
    if lock:  # about to change: the sales ledger follows whatever happens to it
        await ledger.track_orders(ctx.session, [order.id])
    return order


@router.get(f"{E}/orders/")
async def list_orders(ctx: Annotated[EventContext, Depends(EventAccess(READ))]) -> Response:
    """List orders

    Lists the event's orders with their positions, fees, payments and refunds, 50 a page,
    filtered by the query parameters (status, e-mail, product, code, test mode,
    `modified_since`). The answer's `X-Page-Generated` header is the time to pass as
    `modified_since` to poll for changes.
    """
    return await listed.order_list(ctx, {ctx.event.id: ctx.event.slug}, ctx.event)


@router.get("/organizers/{organizer}/orders/")
async def list_organizer_orders(
    ctx: Annotated[OrgContext, Depends(OrganizerAccess())],
) -> Response:
    """Orders of every event of the organizer whose orders the caller may read."""
    rows = await ctx.session.execute(
        select(Event.id, Event.slug).where(Event.organizer_id == ctx.organizer_id)
    )
    slugs = {eid: slug for eid, slug in rows if ctx.has_event_permission(eid, READ)}
    return await listed.order_list(ctx, slugs)


@router.post(f"{E}/orders/", status_code=201, openapi_extra=json_body(OrderIn))
async def create(ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]) -> Response:
    """Create an order

    Creates an order with its positions (tickets), pending by default or paid; a free order is
    paid at once. Quota, seats and vouchers are checked (400 naming what is lacking) unless
    `force` is set; `simulate` checks and answers without saving; `send_email` mails the buyer.
    """
    data: OrderIn = validate_input(OrderIn, await read_object(ctx.request))  # type: ignore[assignment]
    session = ctx.session
    if data.simulate:
        # Everything runs (quota included) inside a savepoint that is then rolled back.
        savepoint = await session.begin_nested()
        placed = await create_order(session, ctx.event, data)
        body = await _created_body(ctx, placed)
        await savepoint.rollback()
        return JSONResponse(_as_preview(body), status_code=201)
    placed = await flush_guard(create_order(session, ctx.event, data))
    order = placed.new.order
    if data.send_email and order["email"]:
        await _queue_placed_mail(session, ctx, placed, order["secret"], order["email"])
    return JSONResponse(await _created_body(ctx, placed), status_code=201)


async def _created_body(ctx: EventContext, placed: Placed) -> dict[str, Any]:
    """The new order as its detail shows it, from the rows just written (the check-ins an
    auto check-in rule made and the seats are read)."""
    new, written = placed.new, placed.written
    session, event = ctx.session, ctx.event
    items = [p.item for p in new.positions]
    checkins = (
        {}
        if hooks.all_idle(event, items, new.order)
        else await position_checkins(session, written.position_ids)
    )
    seats = await position_seats(session, [p.row["seat_id"] for p in new.positions])
    return await created_body(
        session,
        new,
        written,
        event_slug=event.slug,
        url_base=url_base(ctx, event.slug),
        api_base=api_base(ctx.request, ctx.organizer_slug, event.slug),
        view=request_view(ctx.request),
        seats=seats,
        checkins=checkins,
        event=event,
    )


def _as_preview(body: dict[str, Any]) -> dict[str, Any]:
    """A simulated order was never stored: it has no code and its positions no ids."""
    ids = {p["id"]: 0 for p in body["positions"]}
    body["code"] = "PREVIEW"
    for position in body["positions"]:
        position["id"] = 0
        position["order"] = "PREVIEW"
        if position["addon_to"] is not None:
            position["addon_to"] = ids[position["addon_to"]]
    for fee in body["fees"]:
        fee["id"] = 0
    body["downloads"] = []  # nothing to download from an order that does not exist
    for position in body["positions"]:
        position["downloads"] = []
    return body


async def _queue_placed_mail(
    session: AsyncSession, ctx: EventContext, placed: Placed, secret: str, email: str
) -> None:
    code = placed.code
    link = f"{url_base(ctx, ctx.event.slug)}order/{code}/{secret}/"
    subject, text, html = render_mail("order_placed", code=code, link=link)
    await queue_mail(
        session,
        to=[email],
        subject=subject,
        body=text,
        html=html,
        organizer_id=ctx.organizer_id,
        event_id=ctx.event.id,
        order_id=placed.written.order_id,
    )


@router.get(f"{E}/orders/{{code}}/")
async def retrieve(code: str, ctx: Annotated[EventContext, Depends(EventAccess(READ))]) -> Response:
    """Get an order

    Answers one order by its code, with positions, fees, payments and refunds.
    """
    return await listed.order_detail(ctx, code)


PATCH_FIELDS = tuple(OrderPatch.model_fields)


@router.patch(f"{E}/orders/{{code}}/", openapi_extra=json_body(OrderPatch))
async def patch(code: str, ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]) -> Response:
    """Update an order

    Changes the order's contact and check-in details given in the body (e-mail, phone, locale,
    comment, check-in attention and text, invoice address, validity while pending, expiry);
    other fields are read-only here.
    """
    order = await load_order(ctx, code, lock=True)
    current = {f: getattr(order, f) for f in PATCH_FIELDS if f != "customer"}
    current["customer"] = order.customer_identifier  # type: ignore[attr-defined]
    data, supplied = parse_update(OrderPatch, current, await read_object(ctx.request), True)
    changed = {f for f in supplied if getattr(data, f) != current[f]}
    if "customer" in supplied:
        order.customer_id = await customer_link.resolve(
            ctx.session, ctx.event.organizer_id, data.customer
        )
    for field in supplied - {"customer"}:
        setattr(order, field, getattr(data, field))
    if supplied:
        order.last_modified = utcnow()
    await flush_guard(ctx.session.flush())
    await notify_order(ctx, order, *_patch_actions(changed))
    return JSONResponse(await render_one(ctx, await load_order(ctx, code)))


def _patch_actions(changed: set[str]) -> list[str]:
    """What a PATCH changed, as notification types (only values that really changed)."""
    actions = []
    if changed & CONTACT_FIELDS:
        actions.append(CONTACT_CHANGED)
    if "expires" in changed:
        actions.append(EXPIRYCHANGED)
    if changed - CONTACT_FIELDS - {"expires"}:
        actions.append(MODIFIED)
    return actions


@router.delete(f"{E}/orders/{{code}}/", status_code=204)
async def delete(code: str, ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]) -> Response:
    """Delete a test mode order

    Deletes the order; only orders placed in test mode can be deleted (403 otherwise). Cancel a
    real order instead.
    """
    order = await load_order(ctx, code, lock=True)
    if not order.testmode:
        raise APIError(403, "Only test mode orders can be deleted.")
    # The database cascades to positions, answers, fees and payments.
    await ctx.session.execute(sa_delete(Order).where(Order.id == order.id))
    await voucher_usage.sync_order(ctx.session, order)  # its voucher uses are gone
    await notify_order(ctx, order, DELETED)
    return no_content()


positions.mount(router)


# -- deletion guards ------------------------------------------------------------------------


async def _event_has_orders(session: AsyncSession, event: Event) -> str | None:
    if await session.scalar(select(exists().where(Order.event_id == event.id))):
        return (
            "The event can not be deleted as it already contains orders. Please set it to "
            "not live to take the shop offline instead."
        )
    return None


async def _subevent_in_orders(session: AsyncSession, sub: SubEvent) -> str | None:
    if await session.scalar(select(exists().where(OrderPosition.subevent_id == sub.id))):
        return "The sub-event can not be deleted as it has already been used in orders."
    return None


async def _tax_rule_in_orders(session: AsyncSession, rule: TaxRule) -> bool:
    used = select(exists().where(OrderPosition.tax_rule_id == rule.id))
    fees = select(exists().where(OrderFee.tax_rule_id == rule.id))
    return bool(await session.scalar(used)) or bool(await session.scalar(fees))


def _register(guards: list[Any], guard: Any) -> None:
    if guard not in guards:
        guards.append(guard)


_register(events_service.deletion_guards, _event_has_orders)
_register(subevents_service.deletion_guards, _subevent_in_orders)
_register(taxes_service.deletion_guards, _tax_rule_in_orders)
