"""``…/orders/``: the event's orders, searched and filtered with the API's own order filters
(``orders.filters``: code, e-mail, attendee or invoice name; status, product or variation,
payment method, days placed: ``order_filters``), 50 a page, read as plain columns
in three statements (the page, its count, its tickets) whatever the number of orders."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter
from sqlalchemy import func, select
from starlette.responses import Response

from admit.control import order_filters
from admit.control.access import control_page
from admit.control.nav import ORDERS_READ, event_nav
from admit.control.render import render
from admit.kit.http.context import EventAccess, EventContext
from admit.kit.http.errors import FieldErrors
from admit.models import Order, OrderPosition
from admit.orders.filters import ORDER_FILTERS
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
EVENT = "/control/event/{organizer}/{event}"
PAGE_SIZE = 50
# Filters that look at other tables (positions, payments): their exact count would read every
# matching order, so it is counted up to this many ("more than 1,000"); the page itself is
# read newest first through the orders' date index and stops after its rows.
JOINED = ("search", "item", "variation", "payment_provider")
COUNT_CAP = 1000


async def order_rows(
    ctx: EventContext, filters: dict[str, str], number: int
) -> tuple[int, bool, list[dict[str, Any]]]:
    """The orders the API's filters ``filters`` match, newest first: their count (at most
    ``COUNT_CAP + 1`` with a ``JOINED`` filter), whether a page follows, and the rows of page
    ``number``."""
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
    query = ORDER_FILTERS.apply(query, filters)
    counted = query.limit(COUNT_CAP + 1) if any(k in filters for k in JOINED) else query
    count = await ctx.session.scalar(select(func.count()).select_from(counted.subquery()))
    rows = (
        await ctx.session.execute(
            query.order_by(Order.datetime.desc(), Order.id.desc())
            .limit(PAGE_SIZE + 1)
            .offset((number - 1) * PAGE_SIZE)
        )
    ).all()
    more, rows = len(rows) > PAGE_SIZE, rows[:PAGE_SIZE]
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
    return int(count or 0), more, [
        {**row._asdict(), "tickets": tickets.get(row.id, (0, None))[0],
         "attendee": tickets.get(row.id, (0, None))[1]}
        for row in rows
    ]  # fmt: skip


@router.get(EVENT + "/orders/")
@control_page(EventAccess(ORDERS_READ))
async def order_list(page: Page, ctx: EventContext) -> Response:
    asked, filters, errors = order_filters.read(page.request.query_params, ctx.event.timezone)
    products = await order_filters.product_choices(ctx)
    if asked["product"] and asked["product"] not in dict(products):
        errors.setdefault("product", ["Choose one of the listed products."])
    nav = await event_nav(page, ctx, "orders")
    choices = {"products": products, "providers": order_filters.provider_choices(asked["provider"])}
    empty = {
        "rows": [],
        "count": 0,
        "number": 1,
        "pages": 1,
        "links": {},
        "filtered": True,
        "cap": None,
    }
    if errors:
        return render(page, "orders.html", 400, nav=nav, asked=asked, errors=errors, **choices,
                      **empty)  # fmt: skip
    number = order_filters.page_number(asked["page"]) or 1
    try:
        count, more, rows = await order_rows(ctx, filters, number)
    except FieldErrors as exc:  # the API's filter refused a value: shown above the list
        errs = {k: list(v) for k, v in dict(exc.errors).items()}  # type: ignore[call-overload]
        return render(page, "orders.html", 400, nav=nav, asked=asked, errors=errs, **choices,
                      **empty)  # fmt: skip
    capped = count > COUNT_CAP and any(k in filters for k in JOINED)
    pages = 0 if capped else max(1, -(-count // PAGE_SIZE))  # 0: not counted to the end
    keep = order_filters.kept(asked)
    links = {}
    if number > 1:
        links["previous"] = "?" + urlencode({**keep, "page": number - 1})
    if more:
        links["next"] = "?" + urlencode({**keep, "page": number + 1})
    return render(page, "orders.html", nav=nav, asked=asked, errors={}, rows=rows, count=count,
                  cap=COUNT_CAP if capped else None,
                  number=number, pages=pages, links=links, filtered=bool(keep),
                  **choices)  # fmt: skip
