"""``…/orders/``: the event's orders, searched and filtered with the API's own order filters
(``orders.filters``: code, e-mail, attendee name and more), 50 a page, read as plain columns
in three statements (the page, its count, its tickets) whatever the number of orders."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter
from sqlalchemy import func, select
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.fields import whole_number
from admit.control.nav import ORDERS_READ, event_nav
from admit.control.render import STATUS_LABELS, render
from admit.kit.http.context import EventAccess, EventContext
from admit.kit.http.errors import FieldErrors
from admit.models import Order, OrderPosition
from admit.orders.filters import ORDER_FILTERS
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
EVENT = "/control/event/{organizer}/{event}"
PAGE_SIZE = 50
MAX_SEARCH = 200


def _page_number(raw: str | None) -> int | None:
    if raw in (None, ""):
        return 1
    return whole_number(raw, 100_000) or None


def _asked(page: Page) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The list's parameters as typed, and what is wrong with them (shown by the fields)."""
    params = page.request.query_params
    asked = {
        "search": params.get("search", "").strip(),
        "status": params.get("status", ""),
        "page": params.get("page", ""),
    }
    errors: dict[str, list[str]] = {}
    if len(asked["search"]) > MAX_SEARCH:
        errors["search"] = [f"Search for at most {MAX_SEARCH} characters."]
    if asked["status"] not in ("", *STATUS_LABELS):
        errors["status"] = ["Choose one of the listed states."]
    if _page_number(asked["page"]) is None:
        errors["page"] = ["There is no such page."]
    return asked, errors


async def order_rows(
    ctx: EventContext, search: str, status: str, number: int
) -> tuple[int, list[dict[str, Any]]]:
    """The orders matching, newest first: their count and the rows of page ``number``."""
    query = select(
        Order.id,
        Order.code,
        Order.status,
        Order.email,
        Order.datetime,
        Order.total,
        Order.testmode,
        Order.require_approval,
    ).where(Order.event_id == ctx.event.id)
    filters = {k: v for k, v in (("search", search), ("status", status)) if v}
    query = ORDER_FILTERS.apply(query, filters)
    count = await ctx.session.scalar(select(func.count()).select_from(query.subquery()))
    rows = (
        await ctx.session.execute(
            query.order_by(Order.datetime.desc(), Order.id.desc())
            .limit(PAGE_SIZE)
            .offset((number - 1) * PAGE_SIZE)
        )
    ).all()
    ids = [row.id for row in rows]
    tickets: dict[int, tuple[int, str | None]] = {}
    if ids:
        for order_id, n, name in await ctx.session.execute(
            select(
                OrderPosition.order_id,
                func.count(),
                func.min(OrderPosition.attendee_name_cached),
            )
            .where(OrderPosition.order_id.in_(ids), OrderPosition.canceled.is_(False))
            .group_by(OrderPosition.order_id)
        ):
            tickets[order_id] = (n, name)
    return int(count or 0), [
        {**row._asdict(), "tickets": tickets.get(row.id, (0, None))[0],
         "attendee": tickets.get(row.id, (0, None))[1]}
        for row in rows
    ]  # fmt: skip


@router.get(EVENT + "/orders/")
@control_page(EventAccess(ORDERS_READ))
async def order_list(page: Page, ctx: EventContext) -> Response:
    asked, errors = _asked(page)
    nav = await event_nav(page, ctx, "orders")
    if errors:
        return render(page, "orders.html", 400, nav=nav, asked=asked, errors=errors, rows=[],
                      count=0, number=1, pages=1, links={})  # fmt: skip
    number = _page_number(asked["page"]) or 1
    try:
        count, rows = await order_rows(ctx, asked["search"], asked["status"], number)
    except FieldErrors as exc:  # the API's filter refused a value: shown by its field
        errs = {k: list(v) for k, v in dict(exc.errors).items()}  # type: ignore[call-overload]
        return render(page, "orders.html", 400, nav=nav, asked=asked, errors=errs, rows=[],
                      count=0, number=1, pages=1, links={})  # fmt: skip
    pages = max(1, -(-count // PAGE_SIZE))
    keep = {k: v for k, v in (("search", asked["search"]), ("status", asked["status"])) if v}
    links = {}
    if number > 1:
        links["previous"] = "?" + urlencode({**keep, "page": number - 1})
    if number < pages:
        links["next"] = "?" + urlencode({**keep, "page": number + 1})
    return render(page, "orders.html", nav=nav, asked=asked, errors={}, rows=rows, count=count,
                  number=number, pages=pages, links=links)  # fmt: skip
