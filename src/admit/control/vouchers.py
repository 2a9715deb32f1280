"""``…/vouchers/batch``: several vouchers alike at once (codes generated), through the API's
``batch_create`` (all or none, in one transaction); the list's tag filter choices."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter
from sqlalchemy import select
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.api_call import Errors, run, with_body
from admit.control.areas import VOUCHERS, voucher_fields
from admit.control.fields import Field, to_body, typed, whole_number
from admit.control.nav import event_nav
from admit.control.render import render
from admit.kit.http.context import EventAccess, EventContext
from admit.models import Voucher
from admit.vouchers import routes as voucher_routes
from admit.web.forms import Pairs, first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
BATCH = "/control/event/{organizer}/{event}/vouchers/batch"
COUNT = Field("count", "How many", "number", required=True, help="Up to 1000, codes generated.")
WRITE = voucher_routes.WRITE


async def tags(ctx: EventContext, _obj: dict[str, Any]) -> dict[str, Any]:
    rows = await ctx.session.scalars(
        select(Voucher.tag).where(Voucher.event_id == ctx.event.id, Voucher.tag != "").distinct()
    )
    return {"tags": sorted(rows)}


VOUCHERS.extra = tags


async def _fields(ctx: EventContext) -> list[Field]:
    return [COUNT, *(f for f in await voucher_fields(ctx) if f.name != "code")]


async def _page(page: Page, ctx: EventContext, values: dict[str, Any], errors: Errors,
                status: int = 200) -> Response:  # fmt: skip
    return render(page, "voucher_batch.html", status, nav=await event_nav(page, ctx, "vouchers"),
                  fields=await _fields(ctx), values=values, errors=errors,
                  base=VOUCHERS.base(ctx))  # fmt: skip


@router.get(BATCH)
@control_page(EventAccess(WRITE))
async def batch_page(page: Page, ctx: EventContext) -> Response:
    return await _page(page, ctx, {"count": "10", "max_usages": "1", "price_mode": "none"}, {})


@router.post(BATCH)
@control_page(EventAccess(WRITE), form=True)
async def batch_create(page: Page, ctx: EventContext, pairs: Pairs) -> Response:
    fields = await _fields(ctx)
    raw = first(pairs, "count").strip()
    count = whole_number(raw, voucher_routes.BATCH_LIMIT) or 0
    if count < 1:
        errors = {"count": [f"Enter a number from 1 to {voucher_routes.BATCH_LIMIT}."]}
        return await _page(page, ctx, typed(fields, pairs), errors, 400)
    entry = to_body(fields[1:], pairs, ctx.event.timezone or "UTC")

    async def work() -> Any:
        return await voucher_routes.batch_create(with_body(ctx, [entry] * count))

    created, errors = await run(page, ctx, work)
    if errors:
        return await _page(page, ctx, typed(fields, pairs), errors, 400)
    page.web.flash(f"{len(created)} vouchers were created.")
    tag = entry.get("tag")
    return page.redirect(VOUCHERS.base(ctx) + (f"?{urlencode({'tag': tag})}" if tag else ""))
