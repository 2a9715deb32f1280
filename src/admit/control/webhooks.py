"""The organizer's webhooks: the list, a new one (its signing secret shown once, on the page
answering the creation), editing one, and its delivery log with a redeliver button per call.
Every write is the API's own handler (the webhook resource's ``handle_create`` /
``handle_update``, ``redeliver_call``), so the target URL check, the private-address rule and
the action types' validation are the API's, and so is the permission (organizer settings)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.api_call import Errors, answer, run, with_body
from admit.control.editing import found, list_page, no_such
from admit.control.export_forms import named_choices
from admit.control.fields import Field, defaults, to_body, to_form, typed
from admit.control.history import audit_history
from admit.control.nav import organizer_nav
from admit.control.render import render
from admit.kit.http.context import OrganizerAccess, OrgContext
from admit.notifications.types import ACTION_TYPES
from admit.web.forms import Pairs
from admit.web.page import Page
from admit.webhooks import routes as webhook_routes

router = APIRouter(include_in_schema=False)
PATH = "/control/organizer/{organizer}/webhooks"
ACCESS = OrganizerAccess(webhook_routes.PERMISSION)
HOOKS = webhook_routes.webhooks


def base(ctx: OrgContext) -> str:
    return f"/control/organizer/{ctx.organizer_slug}/webhooks/"


async def webhook_fields(ctx: OrgContext) -> list[Field]:
    actions = [(a, a.removeprefix("service.")) for a in sorted(ACTION_TYPES)]
    return [
        Field("target_url", "Target URL", required=True, help="Where the calls are sent (https)."),
        Field("enabled", "Enabled", "bool", default=True),
        Field("all_events", "Every event", "bool", default=True),
        Field("limit_events", "Or only these events", "multi",
              choices=await named_choices(ctx, "events") or []),
        Field("action_types", "Send a call when", "multi", required=True, choices=actions),
        Field("comment", "Comment", "textarea"),
    ]  # fmt: skip


@router.get(PATH + "/")
@control_page(ACCESS)
async def webhooks(page: Page, ctx: OrgContext) -> Response:
    return await list_page(page, ctx, HOOKS, "webhooks.html", "webhooks", base(ctx))


async def _form(page: Page, ctx: OrgContext, obj: dict[str, Any] | None,
                values: dict[str, Any], errors: Errors, status: int = 200,
                secret: str = "") -> Response:  # fmt: skip
    calls: dict[str, Any] = {}
    history = None
    if obj is not None:
        history = await audit_history(ctx, "webhook", obj["id"])
        req = with_body(ctx, None, "GET", page.request.url.query)
        calls = answer(await webhook_routes.list_calls(req, str(obj["id"])))
    return render(page, "webhook.html", status, nav=await organizer_nav(page, ctx, "webhooks"),
                  obj=obj, fields=await webhook_fields(ctx), values=values, errors=errors,
                  base=base(ctx), secret=secret, calls=calls.get("results", []),
                  calls_next=calls.get("next"), calls_previous=calls.get("previous"),
                  history=history)  # fmt: skip


@router.get(PATH + "/new")
@control_page(ACCESS)
async def webhook_new(page: Page, ctx: OrgContext) -> Response:
    return await _form(page, ctx, None, defaults(await webhook_fields(ctx)), {})


@router.post(PATH + "/new")
@control_page(ACCESS, form=True)
async def webhook_create(page: Page, ctx: OrgContext, pairs: Pairs) -> Response:
    """Creates it and answers its page at once (200, no redirect): the signing secret is
    shown this once and is kept nowhere the browser could fetch again."""
    fields = await webhook_fields(ctx)

    async def work() -> Any:
        req = with_body(ctx, to_body(fields, pairs))
        await HOOKS.prepare(req, {})
        return await HOOKS.handle_create(req)

    created, errors = await run(page, ctx, work)
    if errors:
        return await _form(page, ctx, None, typed(fields, pairs), errors, 400)
    obj = await found(ctx, HOOKS, str(created["id"]))
    assert obj is not None
    return await _form(page, ctx, obj, to_form(fields, obj), {}, secret=created["secret"])


@router.get(PATH + "/{id}/")
@control_page(ACCESS)
async def webhook_page(page: Page, ctx: OrgContext, id: str) -> Response:
    obj = await found(ctx, HOOKS, id)
    if obj is None:
        return no_such(page, "webhook")
    return await _form(page, ctx, obj, to_form(await webhook_fields(ctx), obj), {})


@router.post(PATH + "/{id}/")
@control_page(ACCESS, form=True)
async def webhook_update(page: Page, ctx: OrgContext, pairs: Pairs, id: str) -> Response:
    fields = await webhook_fields(ctx)
    obj = await found(ctx, HOOKS, id)
    if obj is None:
        return no_such(page, "webhook")

    async def work() -> Any:
        req = with_body(ctx, to_body(fields, pairs, current=obj), "PATCH")
        await HOOKS.prepare(req, {"id": id})
        return await HOOKS.handle_update(req, id, partial=True)

    _, errors = await run(page, ctx, work)
    if errors:
        return await _form(page, ctx, obj, typed(fields, pairs), errors, 400)
    page.web.flash("The webhook was saved.")
    return page.redirect(f"{base(ctx)}{id}/")


@router.post(PATH + "/{id}/calls/{call}/redeliver")
@control_page(ACCESS, form=True)
async def webhook_redeliver(page: Page, ctx: OrgContext, pairs: Pairs, id: str, call: str
                            ) -> Response:  # fmt: skip
    async def work() -> Any:
        return await webhook_routes.redeliver_call(with_body(ctx, {}), id, call)

    _, errors = await run(page, ctx, work)
    if errors:
        page.web.flash("Not sent again: " + " ".join(m for ms in errors.values() for m in ms))
    else:
        page.web.flash("The call will be sent again; the copy is at the top of the log.")
    return page.redirect(f"{base(ctx)}{id}/")
