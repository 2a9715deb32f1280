"""``…/checkin/history/``: every scan of the event, newest first, 50 a page: when, on which
list, which ticket and attendee, admitted or refused (and why), and the device that scanned.
Filtered by list and result with the API's own history filters (``checkin.history.FILTERS``:
``list``, ``successful``) and by a ticket: an order code, ``CODE-2`` (the order's second
ticket), the start of a ticket's secret or of the code a scanner read. The event's scans are
read by its index on ``(event_id, datetime)``; a code narrows through the orders' and
positions' own indexes."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter
from sqlalchemy import ColumnElement, and_, func, or_, select
from starlette.responses import Response

from admit.checkin.access import READ
from admit.checkin.history import FILTERS
from admit.control.access import control_page
from admit.control.checkin import REASONS
from admit.control.fields import whole_number
from admit.control.nav import event_nav
from admit.control.order_filters import page_number
from admit.control.render import render
from admit.kit.http.context import AnyEventPermission, EventContext
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.filtering import PK_MAX
from admit.models import Checkin, CheckinList, Device, Order, OrderPosition
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
HISTORY = "/control/event/{organizer}/{event}/checkin/history/"
PAGE_SIZE = 50
MAX_SEARCH = 200
RESULTS = {"ok": ("true", "Admitted"), "failed": ("false", "Refused")}
TICKET = re.compile(r"^([A-Za-z0-9]+)-(\d{1,6})$")


def _ticket(value: str) -> ColumnElement[bool]:
    """Scans of the ticket ``value`` names: ``CODE-N``, an order code, or the start of a
    secret or of what a scanner read."""
    by_order = select(OrderPosition.id).join(Order, Order.id == OrderPosition.order_id)
    found = TICKET.match(value)
    conditions = [
        Checkin.position_id.in_(by_order.where(Order.code == value.upper())),
        Checkin.position_id.in_(
            select(OrderPosition.id).where(OrderPosition.secret.startswith(value, autoescape=True))
        ),
        Checkin.raw_barcode.startswith(value, autoescape=True),
    ]
    if found:
        code, number = found.group(1).upper(), int(found.group(2))
        conditions.append(Checkin.position_id.in_(
            by_order.where(Order.code == code, OrderPosition.positionid == number)))  # fmt: skip
    return or_(*conditions)


def _asked(
    page: Page, lists: dict[int, str]
) -> tuple[dict[str, str], dict[str, str], dict[str, list[str]]]:
    """The form as typed, the API filters it means, and what is wrong with it by field."""
    params = page.request.query_params
    asked = {k: params.get(k, "").strip() for k in ("list", "result", "search", "page")}
    api: dict[str, str] = {}
    errors: dict[str, list[str]] = {}
    if asked["list"]:
        if whole_number(asked["list"], PK_MAX) not in lists:
            errors["list"] = ["Choose one of the event's check-in lists."]
        else:
            api["list"] = asked["list"]
    if asked["result"]:
        if asked["result"] not in RESULTS:
            errors["result"] = ["Choose admitted or refused."]
        else:
            api["successful"] = RESULTS[asked["result"]][0]
    if len(asked["search"]) > MAX_SEARCH:
        errors["search"] = [f"Search for at most {MAX_SEARCH} characters."]
    if page_number(asked["page"]) is None:
        errors["page"] = ["There is no such page."]
    return asked, api, errors


async def _rows(
    ctx: EventContext, api: dict[str, str], search: str, number: int
) -> tuple[int, list[dict[str, Any]]]:
    query = select(Checkin.id).where(Checkin.event_id == ctx.event.id)
    query = FILTERS.apply(query, api)
    if search:
        query = query.where(_ticket(search))
    count = await ctx.session.scalar(select(func.count()).select_from(query.subquery()))
    page = (
        query.order_by(Checkin.datetime.desc(), Checkin.id.desc())
        .limit(PAGE_SIZE)
        .offset((number - 1) * PAGE_SIZE)
    ).subquery()
    rows = await ctx.session.execute(
        select(Checkin.datetime, Checkin.type, Checkin.successful, Checkin.error_reason,
               Checkin.error_explanation, Checkin.raw_barcode, Checkin.auto_checked_in,
               Checkin.forced, CheckinList.name.label("list_name"),
               Device.name.label("device"), OrderPosition.attendee_name_cached,
               OrderPosition.positionid, Order.code)
        .join(page, page.c.id == Checkin.id)
        .join(CheckinList, CheckinList.id == Checkin.list_id)
        .outerjoin(Device, and_(Device.id == Checkin.device_id,
                                Device.organizer_id == ctx.organizer_id))
        .outerjoin(OrderPosition, OrderPosition.id == Checkin.position_id)
        .outerjoin(Order, Order.id == OrderPosition.order_id)
        .order_by(Checkin.datetime.desc(), Checkin.id.desc())
    )  # fmt: skip
    return int(count or 0), [
        {**r._asdict(), "reason": REASONS.get(r.error_reason or "", r.error_explanation
                                              or r.error_reason or "")}
        for r in rows
    ]  # fmt: skip


@router.get(HISTORY)
@control_page(AnyEventPermission(*READ))
async def checkin_history(page: Page, ctx: EventContext) -> Response:
    lists = dict(
        (
            await ctx.session.execute(
                select(CheckinList.id, CheckinList.name)
                .where(CheckinList.event_id == ctx.event.id)
                .order_by(CheckinList.id)
            )
        ).all()
    )
    asked, api, errors = _asked(page, lists)
    context = {"nav": await event_nav(page, ctx, "checkin"), "asked": asked, "lists": lists,
               "results": {k: label for k, (_, label) in RESULTS.items()}}  # fmt: skip
    if errors:
        return render(page, "checkin_history.html", 400, errors=errors, rows=[], count=0,
                      number=1, pages=1, links={}, **context)  # fmt: skip
    number = page_number(asked["page"]) or 1
    try:
        count, rows = await _rows(ctx, api, asked["search"], number)
    except FieldErrors as exc:  # the API's filter refused a value
        errs = {k: list(v) for k, v in dict(exc.errors).items()}  # type: ignore[call-overload]
        return render(page, "checkin_history.html", 400, errors=errs, rows=[], count=0,
                      number=1, pages=1, links={}, **context)  # fmt: skip
    pages = max(1, -(-count // PAGE_SIZE))
    keep = {k: v for k, v in asked.items() if v and k != "page"}
    links = {}
    if number > 1:
        links["previous"] = "?" + urlencode({**keep, "page": number - 1})
    if number < pages:
        links["next"] = "?" + urlencode({**keep, "page": number + 1})
    return render(page, "checkin_history.html", errors={}, rows=rows, count=count, number=number,
                  pages=pages, links=links, **context)  # fmt: skip
