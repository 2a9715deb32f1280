"""``…/{area}/{id}/delete``: deleting a catalog object (a product, a quota, a voucher, …)
after a confirm page. The POST runs the API resource's own ``handle_delete``, so the API's
refusals (a product that has been ordered, a voucher that was redeemed) are the sentence shown
on the confirm page, and nothing of the attempt is kept."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.api_call import Errors, run, with_body
from admit.control.editing import EVENT, Area, found, missing
from admit.control.nav import event_nav
from admit.control.render import render, text_of
from admit.kit.http.context import EventContext
from admit.web.page import Page


def _name(obj: dict[str, Any]) -> str:
    named = obj.get("name") or obj.get("question") or obj.get("code") or obj.get("internal_name")
    return text_of(named) or f"#{obj['id']}"


async def _confirm(page: Page, ctx: EventContext, area: Area, obj: dict[str, Any],
                   errors: Errors, status: int = 200) -> Response:  # fmt: skip
    return render(page, "area_delete.html", status,
                  nav=await event_nav(page, ctx, area.menu or area.key), area=area,
                  base=area.base(ctx), obj=obj, name=_name(obj),
                  refusal=" ".join(m for ms in errors.values() for m in ms))  # fmt: skip


def mount_delete(router: APIRouter, area: Area) -> None:
    """Adds the confirm page and the delete action of ``area`` to ``router``."""
    res = area.resource

    async def confirm(page: Page, ctx: EventContext, id: str) -> Response:
        obj = await found(ctx, res, id)
        if obj is None:
            return await missing(page, ctx, area)
        return await _confirm(page, ctx, area, obj, {})

    async def delete(page: Page, ctx: EventContext, id: str) -> Response:
        obj = await found(ctx, res, id)
        if obj is None:
            return await missing(page, ctx, area)

        async def work() -> Any:
            req = with_body(ctx, None, "DELETE")
            await res.prepare(req, {"id": id})
            return await res.handle_delete(req, id)

        _, errors = await run(page, ctx, work)
        if errors:
            return await _confirm(page, ctx, area, obj, errors, 409)
        page.web.flash(f"The {area.singular} {_name(obj)} was deleted.")
        return page.redirect(area.base(ctx))

    path = f"{EVENT}/{area.key}/{{id}}/delete"
    for handler, method, form in ((confirm, "GET", False), (delete, "POST", True)):
        handler.__name__ = f"{area.key}_delete{'_confirm' if method == 'GET' else ''}"
        router.add_api_route(path, control_page(area.write_access, form=form)(handler),
                             methods=[method])  # fmt: skip
