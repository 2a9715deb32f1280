"""``…/products/`` and ``…/quotas/``: the event's catalog as the API lists it to anyone who
may see the event (no permission beyond access to the event), with live availability."""

from __future__ import annotations

from collections import defaultdict

from fastapi import APIRouter
from sqlalchemy import func, select
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.nav import ITEMS_WRITE, event_nav
from admit.control.render import render, text_of
from admit.control.stats import Dashboard, quota_rows
from admit.kit.http.context import EventAccess, EventContext
from admit.models import Item, ItemCategory, ItemVariation, Quota, quota_items
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
EVENT = "/control/event/{organizer}/{event}"


@router.get(EVENT + "/products/")
@control_page(EventAccess())
async def products(page: Page, ctx: EventContext) -> Response:
    eid = ctx.event.id
    category_rows = await ctx.session.execute(
        select(ItemCategory.id, ItemCategory.name).where(ItemCategory.event_id == eid)
    )
    categories = dict(category_rows.all())
    variations = dict(
        (
            await ctx.session.execute(
                select(ItemVariation.item_id, func.count())
                .join(Item, Item.id == ItemVariation.item_id)
                .where(Item.event_id == eid)
                .group_by(ItemVariation.item_id)
            )
        ).all()
    )
    rows = await ctx.session.execute(
        select(Item.id, Item.name, Item.default_price, Item.active, Item.category_id)
        .where(Item.event_id == eid)
        .order_by(Item.position, Item.id)
    )
    items = [
        {"id": item_id, "name": text_of(name), "price": price, "active": active,
         "category": text_of(categories.get(category)) if category else "",
         "variations": variations.get(item_id, 0)}
        for item_id, name, price, active, category in rows
    ]  # fmt: skip
    nav = await event_nav(page, ctx, "products")
    may_write = ctx.has_event_permission(eid, ITEMS_WRITE)
    return render(page, "products.html", nav=nav, items=items, may_write=may_write)


@router.get(EVENT + "/quotas/")
@control_page(EventAccess())
async def quotas(page: Page, ctx: EventContext) -> Response:
    board = Dashboard()
    await quota_rows(ctx, board)
    names: dict[int, list[str]] = defaultdict(list)
    for quota_id, name in await ctx.session.execute(
        select(quota_items.c.quota_id, Item.name)
        .join(Item, Item.id == quota_items.c.item_id)
        .join(Quota, Quota.id == quota_items.c.quota_id)
        .where(Quota.event_id == ctx.event.id)
        .order_by(Item.position, Item.id)
    ):
        names[quota_id].append(text_of(name))
    for row in board.quotas:
        row["products"] = names.get(row["id"], [])
    nav = await event_nav(page, ctx, "quotas")
    may_write = ctx.has_event_permission(ctx.event.id, ITEMS_WRITE)
    return render(page, "quotas.html", nav=nav, quotas=board.quotas, may_write=may_write)
