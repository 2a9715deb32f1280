"""The page a team invitation mail links to (``/invite/<token>/``): the invitee logs in or
creates an account, and joins the team. The invitation is spent by joining."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from starlette.responses import Response

from admit.kit.http.context import Session
from admit.models import User
from admit.users import accounts, invites
from admit.web.forms import first
from admit.web.login import finish_login
from admit.web.page import Page

router = APIRouter(include_in_schema=False)


async def _invitation(page: Page, token: str) -> tuple[invites.Invitation | None, Response | None]:
    invitation = await invites.find(page.session, token, page.settings.invite_days)
    if invitation is None:
        return None, page.message(
            "Invitation not found", "This invitation is not valid (any more).", 404
        )
    if invitation.expired:
        return None, page.message(
            "Invitation expired", "This invitation has expired: ask for a new one.", 410
        )
    return invitation, None


@router.get("/invite/{token}/")
async def invite_page(request: Request, session: Session, token: str) -> Response:
    page = await Page.load(request, session)
    invitation, refused = await _invitation(page, token)
    if refused:
        return refused
    login_url = f"/login?next={quote(request.url.path, safe='')}"
    return page.render(
        "invite.html", invitation=invitation, login_url=login_url, errors=[], fullname=""
    )


@router.post("/invite/{token}/")
async def accept_invite(request: Request, session: Session, token: str) -> Response:
    page = await Page.load(request, session)
    pairs, refused = await page.post()
    if refused:
        return refused
    invitation, refused = await _invitation(page, token)
    if refused:
        return refused
    assert invitation is not None
    if first(pairs, "action") == "join":
        if gate := page.gate():
            return gate
        assert page.user is not None
        await invites.accept(session, invitation, page.user)
        page.web.flash(f"You joined the team {invitation.team_name}.")
        return page.redirect("/settings/")
    # A new account for the invited address.
    fullname = first(pairs, "fullname").strip()[:255]
    password = first(pairs, "password")
    errors = accounts.password_problems(password, first(pairs, "password2"))
    if not fullname.isprintable():
        errors.append("The name may only contain printable characters.")
    if await accounts.find_user(session, invitation.email) is not None:
        errors.append("An account with this e-mail address exists already: log in to join.")
    if errors:
        login_url = f"/login?next={quote(request.url.path, safe='')}"
        return page.render(
            "invite.html",
            400,
            invitation=invitation,
            login_url=login_url,
            errors=errors,
            fullname=fullname,
        )
    user = User(email=invitation.email, fullname=fullname or None)
    accounts.set_password(user, password)
    session.add(user)
    await session.flush()
    await invites.accept(session, invitation, user)
    page.web.flash(f"Welcome! You joined the team {invitation.team_name}.")
    return await finish_login(page, user, "/settings/")
