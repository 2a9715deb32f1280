"""The user's settings: profile, password, second factor, authorized applications."""

from __future__ import annotations

import datetime as dt

from fastapi import APIRouter
from starlette.responses import Response

from admit.models import OAuthApplication, User
from admit.oauth import apps
from admit.oauth.scopes import DESCRIPTIONS
from admit.users import accounts, logins, throttle, totp
from admit.web.forms import Pairs, first
from admit.web.login import too_many
from admit.web.page import Page, safe_next, signed_in

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
@signed_in()
async def settings_page(page: Page) -> Response:
    assert page.user is not None
    authorized = await apps.authorized_by(page.session, page.user.id)
    return page.render(
        "settings.html",
        authorized=authorized,
        sessions=await _sessions(page),
        two_factor=await totp.get(page.session, page.user.id) is not None,
        organizers=await accounts.user_organizers(page.session, page.user.id),
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
@signed_in(form=True)
async def logout_others(page: Page) -> Response:
    """Ends every login session of the user but this browser's (on every process)."""
    assert page.user is not None and page.login is not None
    ended = await logins.end_others(page.session, page.user.id, page.login.id)
    page.web.flash(
        f"{ended} other session{'s were' if ended != 1 else ' was'} logged out."
        if ended
        else "There was no other session."
    )
    return page.redirect("/settings/")


@router.post("/settings/authorized/{app_id}/revoke")
@signed_in(form=True)
async def revoke(page: Page, app_id: int) -> Response:
    assert page.user is not None
    app = await page.session.get(OAuthApplication, app_id)
    if app is None:
        return page.not_found()
    await apps.revoke_authorization(page.session, page.user.id, app_id)
    page.web.flash(f"Access of {app.name} was revoked.")
    return page.redirect("/settings/")


@router.get("/settings/password/")
@signed_in()
async def password_form(page: Page) -> Response:
    return page.render("password.html", errors=[])


@router.post("/settings/password/")
@signed_in(form=True)
async def change_password(page: Page, pairs: Pairs) -> Response:
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
    await logins.end_others(page.session, user.id, page.login.id)
    page.web.flash("Your password was changed.")
    return page.redirect("/settings/")


@router.get("/settings/2fa/")
@signed_in()
async def two_factor_page(page: Page) -> Response:
    assert page.user is not None
    enabled = await totp.get(page.session, page.user.id) is not None
    secret = page.web.get("totp_secret")
    if not enabled and not isinstance(secret, str):
        secret = totp.new_secret()
        page.web.set("totp_secret", secret)
    return page.render(
        "twofactor.html",
        enabled=enabled,
        secret=secret,
        uri=totp.provisioning_uri(secret, page.user.email) if not enabled else "",
        required=await accounts.two_factor_required(page.session, page.user.id),
        next=safe_next(page.request.query_params.get("next")),
        error=None,
    )


@router.post("/settings/2fa/")
@signed_in(form=True)
async def two_factor(page: Page, pairs: Pairs) -> Response:
    user = page.user
    assert user is not None
    required = await accounts.two_factor_required(page.session, user.id)
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
        await totp.disable(page.session, user)
        page.web.flash("Two-factor authentication is off.")
        return page.redirect("/settings/")
    secret = page.web.get("totp_secret")
    if not isinstance(secret, str) or not await totp.enable(
        page.session, user, secret, first(pairs, "code")
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
