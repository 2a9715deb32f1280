"""The organizer's teams: the list, a team's settings and permissions, its members (removed
one by one), its invites (sent, withdrawn) and its API tokens (created, the token shown on
the answering page only, deactivated). Every write is the teams API's own resource handler
(``teams``, ``team-members``, ``team-invites``, ``team-tokens``), under its permission."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
from admit.control.access import control_page
from admit.control.api_call import Errors, run, with_body
from admit.control.editing import found, list_page, listed, no_such, resource
from admit.control.export_forms import named_choices
from admit.control.fields import Field, defaults, to_body, to_form, typed
from admit.control.history import audit_history
from admit.control.nav import organizer_nav
from admit.control.render import render
from admit.kit.http.context import OrganizerAccess, OrgContext
from admit.kit.resources.crud import Resource
from admit.teams.routes import PERMISSION
from admit.web.forms import Pairs, first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
PATH = "/control/organizer/{organizer}/teams"
TEAM = PATH + "/{id}"
ACCESS = OrganizerAccess(PERMISSION)


TEAMS, MEMBERS, INVITES, TOKENS = (
    resource(n) for n in ("teams", "team-members", "team-invites", "team-tokens")
)


def base(ctx: OrgContext) -> str:
    return f"/control/organizer/{ctx.organizer_slug}/teams/"


async def team_fields(ctx: OrgContext) -> list[Field]:
    return [
        Field("name", "Name", required=True),
        Field("all_events", "Every event (also those created later)", "bool"),
        Field("limit_events", "Or only these events", "multi",
              choices=await named_choices(ctx, "events") or []),
        Field("all_event_permissions", "Every permission in its events", "bool"),
        Field("limit_event_permissions", "Or these permissions in its events", "multi",
              choices=[(p, p.removeprefix("event.")) for p in EVENT_PERMISSIONS]),
        Field("all_organizer_permissions", "Every permission of the organizer", "bool"),
        Field("limit_organizer_permissions", "Or these permissions of the organizer", "multi",
              choices=[(p, p.removeprefix("organizer.")) for p in ORGANIZER_PERMISSIONS]),
        Field("require_2fa", "Members must use two-factor authentication", "bool"),
    ]  # fmt: skip


@router.get(PATH + "/")
@control_page(ACCESS)
async def teams(page: Page, ctx: OrgContext) -> Response:
    return await list_page(page, ctx, TEAMS, "teams.html", "teams", base(ctx))


async def _page(page: Page, ctx: OrgContext, obj: dict[str, Any] | None, values: dict[str, Any],
                errors: Errors, status: int = 200, failed: str = "", token: str = "",
                typed_text: str = "") -> Response:  # fmt: skip
    more: dict[str, Any] = {}
    if obj is not None:
        params = {"team": str(obj["id"])}
        for key, res in (("members", MEMBERS), ("invites", INVITES), ("tokens", TOKENS)):
            more[key] = (await listed(ctx, res, "", params))["results"]
        more["history"] = await audit_history(ctx, "team", obj["id"])
    return render(page, "team.html", status, nav=await organizer_nav(page, ctx, "teams"),
                  obj=obj, fields=await team_fields(ctx), values=values, errors=errors,
                  base=base(ctx), failed=failed, token=token, typed_text=typed_text,
                  **more)  # fmt: skip


async def _team(ctx: OrgContext, id: str) -> dict[str, Any] | None:
    return await found(ctx, TEAMS, id)


def _missing(page: Page) -> Response:
    return no_such(page, "team")


@router.get(PATH + "/new")
@control_page(ACCESS)
async def team_new(page: Page, ctx: OrgContext) -> Response:
    return await _page(page, ctx, None, defaults(await team_fields(ctx)), {})


@router.post(PATH + "/new")
@control_page(ACCESS, form=True)
async def team_create(page: Page, ctx: OrgContext, pairs: Pairs) -> Response:
    fields = await team_fields(ctx)

    async def work() -> Any:
        req = with_body(ctx, to_body(fields, pairs))
        await TEAMS.prepare(req, {})
        return await TEAMS.handle_create(req)

    created, errors = await run(page, ctx, work)
    if errors:
        return await _page(page, ctx, None, typed(fields, pairs), errors, 400)
    page.web.flash("The team was created. Invite its members below.")
    return page.redirect(f"{base(ctx)}{created['id']}/")


@router.get(TEAM + "/")
@control_page(ACCESS)
async def team_page(page: Page, ctx: OrgContext, id: str) -> Response:
    obj = await _team(ctx, id)
    if obj is None:
        return _missing(page)
    return await _page(page, ctx, obj, to_form(await team_fields(ctx), obj), {})


@router.post(TEAM + "/")
@control_page(ACCESS, form=True)
async def team_update(page: Page, ctx: OrgContext, pairs: Pairs, id: str) -> Response:
    fields = await team_fields(ctx)
    obj = await _team(ctx, id)
    if obj is None:
        return _missing(page)

    async def work() -> Any:
        req = with_body(ctx, to_body(fields, pairs), "PATCH")
        await TEAMS.prepare(req, {"id": id})
        return await TEAMS.handle_update(req, id, partial=True)

    _, errors = await run(page, ctx, work)
    if errors:
        return await _page(page, ctx, obj, typed(fields, pairs), errors, 400, failed="team")
    page.web.flash("The team was saved.")
    return page.redirect(f"{base(ctx)}{id}/")


async def _child(page: Page, ctx: OrgContext, id: str, res: Resource[Any], method: str,
                 body: Any, pk: str, failed: str, done: str) -> Response:  # fmt: skip
    """Runs a member / invite / token handler of the team; its refusal shown by the form."""
    obj = await _team(ctx, id)
    if obj is None:
        return _missing(page)

    async def work() -> Any:
        req = with_body(ctx, body, method)
        await res.prepare(req, {"team": id, "id": pk})
        if method == "DELETE":
            return await res.handle_delete(req, pk)
        return await res.handle_create(req)

    result, errors = await run(page, ctx, work)
    fields = await team_fields(ctx)
    if errors:
        return await _page(page, ctx, obj, to_form(fields, obj), errors, 400, failed=failed,
                           typed_text=" ".join((body or {}).values()))  # fmt: skip
    if res is TOKENS and method == "POST":
        # The token is shown on this answer only: no redirect, nothing kept to show again.
        return await _page(page, ctx, obj, to_form(fields, obj), {}, token=result["token"])
    page.web.flash(done)
    return page.redirect(f"{base(ctx)}{id}/")


@router.post(TEAM + "/members/{member}/remove")
@control_page(ACCESS, form=True)
async def team_member_remove(page: Page, ctx: OrgContext, pairs: Pairs, id: str, member: str
                             ) -> Response:  # fmt: skip
    return await _child(page, ctx, id, MEMBERS, "DELETE", None, member, "members",
                        "The member was removed from the team.")  # fmt: skip


@router.post(TEAM + "/invites/new")
@control_page(ACCESS, form=True)
async def team_invite(page: Page, ctx: OrgContext, pairs: Pairs, id: str) -> Response:
    body = {"email": first(pairs, "email").strip()}
    return await _child(page, ctx, id, INVITES, "POST", body, "", "invites",
                        f"{body['email']} was invited (or added, having an account).")  # fmt: skip


@router.post(TEAM + "/invites/{invite}/delete")
@control_page(ACCESS, form=True)
async def team_invite_delete(page: Page, ctx: OrgContext, pairs: Pairs, id: str, invite: str
                             ) -> Response:  # fmt: skip
    return await _child(page, ctx, id, INVITES, "DELETE", None, invite, "invites",
                        "The invite was withdrawn.")  # fmt: skip


@router.post(TEAM + "/tokens/new")
@control_page(ACCESS, form=True)
async def team_token_create(page: Page, ctx: OrgContext, pairs: Pairs, id: str) -> Response:
    body = {"name": first(pairs, "name").strip()}
    return await _child(page, ctx, id, TOKENS, "POST", body, "", "tokens", "")


@router.post(TEAM + "/tokens/{token}/deactivate")
@control_page(ACCESS, form=True)
async def team_token_deactivate(page: Page, ctx: OrgContext, pairs: Pairs, id: str, token: str
                                ) -> Response:  # fmt: skip
    return await _child(page, ctx, id, TOKENS, "DELETE", None, token, "tokens",
                        "The token was deactivated; it can never be used again.")  # fmt: skip
