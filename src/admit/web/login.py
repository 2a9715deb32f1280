"""Login (password, then the TOTP code when the user has one), logout, password reset."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from starlette.responses import Response

from admit.kit.http.context import Session, public_base_url
from admit.models import User
from admit.users import accounts, logins, reset, throttle, totp
from admit.web.forms import first
from admit.web.page import TWO_FACTOR_SETUP, Page, safe_next

router = APIRouter(include_in_schema=False)


def too_many(wait: int) -> str:
    return f"Too many failed attempts. Try again in {max(1, round(wait / 60))} minute(s)."


def throttled(page: Page, template: str, wait: int, **context: object) -> Response:
    response = page.render(template, 429, error=too_many(wait), **context)
    response.headers["Retry-After"] = str(wait)
    return response


async def finish_login(page: Page, user: User, next_url: str) -> Response:
    """A full session, or one that must first set up the second factor a team requires."""
    needs_setup = not await totp.get(page.session, user.id) and (
        await accounts.two_factor_required(page.session, user.id)
    )
    await page.log_in(user, needs_2fa_setup=needs_setup)
    await throttle.clear(page.session, user.email)
    if needs_setup:
        page.web.flash("A team you belong to requires two-factor authentication: set it up now.")
        return page.redirect(f"{TWO_FACTOR_SETUP}?next={quote(next_url, safe='')}")
    return page.redirect(next_url)


@router.get("/")
async def home(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    return page.redirect("/settings/" if page.user else "/login")


@router.get("/login")
async def login_form(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    next_url = safe_next(request.query_params.get("next"))
    if page.user is not None and not page.web.get("setup2fa"):
        return page.redirect(next_url)
    return page.render("login.html", next=next_url, email="", error=None)


@router.post("/login")
async def login(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    pairs, refused = await page.post()
    if refused:
        return refused
    email = first(pairs, "email").strip()[:190]
    password = first(pairs, "password")
    next_url = safe_next(first(pairs, "next"))
    context = {"next": next_url, "email": email}
    wait = await throttle.retry_after(session, page.settings, email, page.ip)
    if wait:
        return throttled(page, "login.html", wait, **context)
    user = await accounts.find_user(session, email)
    if not accounts.check_password(user, password):
        await throttle.record_failure(session, page.settings, email, page.ip)
        return page.render("login.html", 400, error="Wrong e-mail address or password.", **context)
    assert user is not None
    if await totp.get(session, user.id):
        await page.log_out()
        page.web.set("mfa", user.id)
        return page.redirect(f"/login/2fa?next={quote(next_url, safe='')}")
    return await finish_login(page, user, next_url)


@router.get("/login/2fa")
async def second_factor_form(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    if not isinstance(page.web.get("mfa"), int):
        return page.redirect("/login")
    next_url = safe_next(request.query_params.get("next"))
    return page.render("login_2fa.html", next=next_url, error=None)


@router.post("/login/2fa")
async def second_factor(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    pairs, refused = await page.post()
    if refused:
        return refused
    user_id = page.web.get("mfa")
    user = await session.get(User, user_id) if isinstance(user_id, int) else None
    if user is None or not user.is_active:
        return page.redirect("/login")
    next_url = safe_next(first(pairs, "next"))
    wait = await throttle.retry_after(session, page.settings, user.email, page.ip)
    if wait:
        return throttled(page, "login_2fa.html", wait, next=next_url)
    factor = await totp.get(session, user.id)
    if factor is None or not totp.verify(factor, first(pairs, "code")):
        await throttle.record_failure(session, page.settings, user.email, page.ip)
        return page.render("login_2fa.html", 400, next=next_url, error="That code is not valid.")
    return await finish_login(page, user, next_url)


@router.get("/logout")
async def logout_form(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    if page.user is None:
        return page.redirect("/login")
    return page.render("logout.html")


@router.post("/logout")
async def logout(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    _, refused = await page.post()
    if refused:
        return refused
    await page.log_out()
    page.web.flash("You are logged out.")
    return page.redirect("/login")


@router.get("/password-reset")
async def reset_form(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    return page.render("reset_request.html", sent=False)


@router.post("/password-reset")
async def reset_request(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    pairs, refused = await page.post()
    if refused:
        return refused
    email = first(pairs, "email").strip()
    # Throttled like logins (per address), so the form cannot be used to flood a mailbox.
    key = f"reset:{email}"  # counted apart from the account's failed logins
    wait = await throttle.retry_after(session, page.settings, key, page.ip)
    if wait:
        return throttled(page, "reset_request.html", wait, sent=False)
    await throttle.record_failure(session, page.settings, key, page.ip)
    user = await accounts.find_user(session, email)
    if user is not None and user.is_active:
        secret_key = request.app.state.secret_key
        await reset.send_reset_mail(session, secret_key, user, public_base_url(request))
    # The same answer either way: the form does not tell which addresses have accounts.
    return page.render("reset_request.html", sent=True)


@router.get("/password-reset/{token}/")
async def reset_confirm_form(request: Request, session: Session, token: str) -> Response:
    page = await Page.load(request, session)
    if await reset.user_for_token(session, request.app.state.secret_key, token) is None:
        return page.message("Link expired", "This link is not valid (any more).", 404)
    return page.render("reset_confirm.html", errors=[])


@router.post("/password-reset/{token}/")
async def reset_confirm(request: Request, session: Session, token: str) -> Response:
    page = await Page.load(request, session)
    pairs, refused = await page.post()
    if refused:
        return refused
    user = await reset.user_for_token(session, request.app.state.secret_key, token)
    if user is None:
        return page.message("Link expired", "This link is not valid (any more).", 404)
    errors = accounts.password_problems(first(pairs, "password"), first(pairs, "password2"))
    if errors:
        return page.render("reset_confirm.html", 400, errors=errors)
    accounts.set_password(user, first(pairs, "password"))
    await throttle.clear(session, user.email)
    await page.log_out()
    await logins.end_others(session, user.id, None)  # the password changed: every login ends
    page.web.flash("Your password was changed. Log in with the new one.")
    return page.redirect("/login")
