"""``/control/event/{organizer}/{event}/``: the event's dashboard, for whoever may read its
orders (the API's ``event.orders:read``). Its numbers refresh in place every 30 seconds
(``?refresh=N`` for another period) through ``static/live.js``, the one script of the back
office; without JavaScript the page is complete, only not refreshed."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.chart import bar_chart
from admit.control.fields import whole_number
from admit.control.nav import ORDERS_READ, event_nav
from admit.control.render import render
from admit.control.stats import dashboard
from admit.kit.http.context import EventAccess, EventContext
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
EVENT = "/control/event/{organizer}/{event}"


@router.get(EVENT + "/")
@control_page(EventAccess(ORDERS_READ))
async def event_dashboard(page: Page, ctx: EventContext) -> Response:
    board = await dashboard(ctx)
    asked = page.request.query_params.get("refresh", "")
    number = whole_number(asked, 99_999)
    refresh = 30 if number is None else min(max(number, 2), 3600)
    charts = {
        "sales": bar_chart("chart-sales", "Orders placed per day (UTC)", board.sales, "orders"),
        "checkins": bar_chart(
            "chart-checkins", "Entries per hour (UTC)", board.checkins, "entries"
        ),
    }
    return render(
        page,
        "dashboard.html",
        scripts=True,
        nav=await event_nav(page, ctx, "dashboard"),
        board=board,
        charts=charts,
        refresh=refresh,
    )
