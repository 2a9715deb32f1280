"""The user's settings: profile, password, second factor, authorized applications."""

from __future__ import annotations

import datetime as dt

from fastapi import APIRouter, Request
from starlette.responses import Response

from admit.kit.http.context import Session
from admit.models import OAuthApplication, User
from admit.oauth import apps
from admit.oauth.scopes import DESCRIPTIONS
from admit.users import accounts, logins, throttle, totp
from admit.web.forms import first
from admit.web.login import too_many
from admit.web.page import Page, safe_next

router = APIRouter(include_in_schema=False)


async def current_password(page: Page, user: User, password: str) -> bool | int:
    """Checks the current password a form asks for, throttled as logins are (the same
    per-account and per-address counters): True when right; False when wrong (counted as a
    failed login); else the seconds to wait, the password not even looked at. Without it a
    stolen session could guess the password at full speed here."""
    wait = await throttle.retry_after(page.session, page.settings, user.email, page.ip)
    if wait:
        return wait
    if accounts.check_password(user, password):
        return True
    await throttle.record_failure(page.session, page.settings, user.email, page.ip)
    return False


@router.get("/settings/")
async def settings_page(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    assert page.user is not None
    authorized = await apps.authorized_by(session, page.user.id)
    return page.render(
        "settings.html",
        authorized=authorized,
        sessions=await _sessions(page),
        two_factor=await totp.get(session, page.user.id) is not None,
        organizers=await accounts.user_organizers(session, page.user.id),
        descriptions=DESCRIPTIONS,
    )


def _when(moment: dt.datetime) -> dict[str, str]:
    moment = moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    moment = moment.astimezone(dt.UTC)
    return {"iso": moment.isoformat(timespec="seconds"), "text": f"{moment:%Y-%m-%d %H:%M} UTC"}


async def _sessions(page: Page) -> list[dict[str, object]]:
    """The user's live login sessions as the settings page lists them, this one first."""
    assert page.user is not None and page.login is not None
    rows = await logins.of_user(page.session, page.user.id, page.settings.session_hours)
    listed = [
        {
            "current": row.id == page.login.id,
            "agent": logins.describe_agent(row.user_agent),
            "user_agent": row.user_agent,
            "ip": row.ip,
            "created": _when(row.created),
            "last_seen": _when(row.last_seen),
        }
        for row in rows
    ]
    return sorted(listed, key=lambda s: not s["current"])


@router.post("/settings/sessions/logout-others")
async def logout_others(request: Request, session: Session) -> Response:
    """Ends every login session of the user but this browser's (on every process)."""
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    _, refused = await page.post()
    if refused:
        return refused
    assert page.user is not None and page.login is not None
    ended = await logins.end_others(session, page.user.id, page.login.id)
    page.web.flash(
        f"{ended} other session{'s were' if ended != 1 else ' was'} logged out."
        if ended
        else "There was no other session."
    )
    return page.redirect("/settings/")


@router.post("/settings/authorized/{app_id}/revoke")
async def revoke(request: Request, session: Session, app_id: int) -> Response:
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    _, refused = await page.post()
    if refused:
        return refused
    assert page.user is not None
    app = await session.get(OAuthApplication, app_id)
    if app is None:
        return page.not_found()
    await apps.revoke_authorization(session, page.user.id, app_id)
    page.web.flash(f"Access of {app.name} was revoked.")
    return page.redirect("/settings/")


@router.get("/settings/password/")
async def password_form(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    return page.render("password.html", errors=[])


@router.post("/settings/password/")
async def change_password(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    pairs, refused = await page.post()
    if refused:
        return refused
    user = page.user
    assert user is not None
    errors = []
    checked = await current_password(page, user, first(pairs, "current"))
    if not isinstance(checked, bool):
        response = page.render("password.html", 429, errors=[too_many(checked)])
        response.headers["Retry-After"] = str(checked)
        return response
    if not checked:
        errors.append("The current password is wrong.")
    errors += accounts.password_problems(first(pairs, "password"), first(pairs, "password2"))
    if errors:
        return page.render("password.html", 400, errors=errors)
    accounts.set_password(user, first(pairs, "password"))
    await page.log_in(user)  # this browser goes on; every other login ends
    assert page.login is not None
    await logins.end_others(session, user.id, page.login.id)
    page.web.flash("Your password was changed.")
    return page.redirect("/settings/")


@router.get("/settings/2fa/")
async def two_factor_page(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    assert page.user is not None
    enabled = await totp.get(session, page.user.id) is not None
    secret = page.web.get("totp_secret")
    if not enabled and not isinstance(secret, str):
        secret = totp.new_secret()
        page.web.set("totp_secret", secret)
    return page.render(
        "twofactor.html",
        enabled=enabled,
        secret=secret,
        uri=totp.provisioning_uri(secret, page.user.email) if not enabled else "",
        required=await accounts.two_factor_required(session, page.user.id),
        next=safe_next(request.query_params.get("next")),
        error=None,
    )


@router.post("/settings/2fa/")
async def two_factor(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    pairs, refused = await page.post()
    if refused:
        return refused
    user = page.user
    assert user is not None
    required = await accounts.two_factor_required(session, user.id)
    next_url = safe_next(first(pairs, "next"))
    if first(pairs, "action") == "disable":
        if required:
            return page.message(
                "Not possible", "A team you belong to requires two-factor authentication.", 400
            )
        checked = await current_password(page, user, first(pairs, "password"))
        if not isinstance(checked, bool):
            response = page.message("Too many failed attempts", too_many(checked), 429)
            response.headers["Retry-After"] = str(checked)
            return response
        if not checked:
            page.web.flash("The password was wrong; two-factor authentication stays on.")
            return page.redirect("/settings/2fa/")
        await totp.disable(session, user)
        page.web.flash("Two-factor authentication is off.")
        return page.redirect("/settings/")
    secret = page.web.get("totp_secret")
    if not isinstance(secret, str) or not await totp.enable(
        session, user, secret, first(pairs, "code")
    ):
        return page.render(
            "twofactor.html",
            400,
            enabled=False,
            secret=secret or "",
            uri=totp.provisioning_uri(secret, user.email) if isinstance(secret, str) else "",
            required=required,
            next=next_url,
            error="That code is not valid. Check the time on your phone and try again.",
        )
    page.web.set("totp_secret", None)
    page.web.set("setup2fa", None)
    page.web.flash("Two-factor authentication is on.")
    return page.redirect(next_url)
