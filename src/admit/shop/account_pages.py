"""The customer account's doors under ``/{organizer}/account/``: sign up, set the password from
the mail's link, log in, log out, forgotten password. The account page itself and its forms
are ``account_home.py``.

Every page is 404 unless the organizer has customer accounts on (``organizers/settings.py``).
Logins are throttled like the back office's (``users/throttle.py``: failed attempts per
account and per client address, counted apart from staff logins), and the forms that send
mail are throttled per address so they cannot flood a mailbox. Sign-up and forgotten password
answer the same whether or not the address has an account.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from admit.customers import password_links, self_service, sign_in
from admit.db import utcnow
from admit.kit.http.context import Session, public_base_url
from admit.kit.http.errors import APIError
from admit.models import Customer, Organizer
from admit.shop import account_mails
from admit.shop import account_web as aw
from admit.shop.limits import per_address
from admit.shop.pages import Refused
from admit.users import throttle
from admit.users.accounts import password_problems
from admit.web.forms import first
from admit.web.page import Page, safe_next

router = APIRouter(include_in_schema=False)
A = aw.ACCOUNT
WRONG_LOGIN = (
    "Wrong e-mail address or password. If you have just signed up, set your password with "
    "the link in our mail first."
)
NEXT = "account_next"  # the web session's key of where signing up leads on
INVALID_LINK = "This link is not valid (any more). Ask for a new one below."


def login_key(organizer: Organizer, email: str) -> str:
    """The throttle's key of a customer's failed logins (apart from staff logins)."""
    return f"customer:{organizer.id}:{email.strip().lower()}"


def mail_key(organizer: Organizer, email: str) -> str:
    """The throttle's key of the mails the sign-up and reset forms send to one address."""
    return f"customer-mail:{organizer.id}:{email.strip().lower()}"


TOO_MANY = "Too many attempts. Please try again in %s minute(s)."


def too_many(web: Page, wait: int) -> str:
    return aw.translator(web)(TOO_MANY) % max(1, round(wait / 60))


def _next(web: Page, organizer: Organizer, raw: str | None) -> str:
    """Where a form leads on: a path on this site, else the account page."""
    return safe_next(raw, aw.account_url(organizer.slug))


async def opened(
    request: Request, session: Session, organizer: str, *, form: bool = False
) -> tuple[Page, Organizer, list[tuple[str, str]]]:
    """An account page's start: the web page, the organizer and, for a form, its fields.
    Raises :class:`Refused` with the page to answer instead: 404 unless the organizer's
    accounts are on, 403 when a form's CSRF check fails, 429 past the shop's budget per
    client address (which every form counts against)."""
    web = await Page.load(request, session)
    found = await aw.load_organizer(session, organizer)
    if found is None:
        raise Refused(web.not_found())
    if not form:
        return web, found, []
    pairs, refused = await web.post()
    if refused:
        raise Refused(refused)
    try:
        await per_address(request)
    except APIError as exc:
        wait = int(exc.headers.get("Retry-After", "60"))
        raise Refused(limited(web, found, exc.detail, wait)) from None
    return web, found, pairs


async def _mail_link(
    web: Page, organizer: Organizer, customer: Customer, kind: str, lang: str
) -> None:
    """Mails the customer a link to set their password (``kind``: setup or reset)."""
    request = web.request
    secret = request.app.state.secret_key
    base = public_base_url(request)
    await account_mails.send_password_link(
        web.session, secret, base, organizer, customer, kind, lang
    )


def limited(web: Page, organizer: Organizer, sentence: str, wait: int) -> Response:
    response = aw.render(
        web, organizer, "account_message.html", 429, title="Please wait", errors=[sentence]
    )
    response.headers["Retry-After"] = str(wait)
    return response


# -- sign up -----------------------------------------------------------------------------------


@router.get(f"{A}/signup/")
async def signup_form(organizer: str, request: Request, session: Session) -> Response:
    web, found, _ = await opened(request, session, organizer)
    next_url = _next(web, found, request.query_params.get("next"))
    return aw.render(web, found, "account_signup.html", next=next_url)


@router.post(f"{A}/signup/")
async def signup(organizer: str, request: Request, session: Session) -> Response:
    web, found, pairs = await opened(request, session, organizer, form=True)
    kept = {"name": first(pairs, "name")[:300], "email": first(pairs, "email")[:300]}
    next_url = _next(web, found, first(pairs, "next"))
    name, name_problem = self_service.clean_name(kept["name"])
    email, email_problem = self_service.clean_email(kept["email"])
    errors = [p for p in (name_problem, email_problem) if p]
    if errors:
        return aw.render(
            web, found, "account_signup.html", 400, errors=errors, kept=kept, next=next_url
        )
    assert name is not None and email is not None
    if (wait := await _mail_budget(web, found, email)) is not None:
        return limited(web, found, too_many(web, wait), wait)
    lang = aw.language(web)
    customer, created = await self_service.sign_up(session, found.id, name, email, lang)
    if created or customer.is_active:
        kind = "setup" if created or not customer.is_verified else "reset"
        await _mail_link(web, found, customer, kind, lang if created else customer.locale or lang)
    # Where the password link leads on in this browser (the checkout the buyer came from).
    web.web.set(NEXT, next_url if next_url != aw.account_url(found.slug) else None)
    # The same page either way: the form does not tell which addresses have accounts.
    return _sent(web, found, email)


async def _mail_budget(web: Page, organizer: Organizer, email: str) -> int | None:
    """Seconds to wait before another mail to ``email`` (None: it may be sent now)."""
    key = mail_key(organizer, email)
    wait = await throttle.retry_after(web.session, web.settings, key, web.ip)
    if wait is None:
        await throttle.record_failure(web.session, web.settings, key, web.ip)
    return wait


def _sent(web: Page, organizer: Organizer, email: str) -> Response:
    return aw.render(web, organizer, "account_sent.html", email=email)


# -- the password link -------------------------------------------------------------------------


async def _link_customer(web: Page, organizer: Organizer, token: str) -> Any:
    return await password_links.customer_for_token(
        web.session, web.request.app.state.secret_key, organizer.id, token
    )


def _invalid_link(web: Page, organizer: Organizer) -> Response:
    return aw.render(
        web, organizer, "account_forgot.html", 404, errors=[INVALID_LINK], kept={}, sent=False
    )


@router.get(f"{A}/password/{{token}}/")
async def password_form(organizer: str, token: str, request: Request, session: Session) -> Response:
    web, found, _ = await opened(request, session, organizer)
    customer = await _link_customer(web, found, token)
    if customer is None:
        return _invalid_link(web, found)
    return aw.render(web, found, "account_set_password.html", customer=customer)


@router.post(f"{A}/password/{{token}}/")
async def password_set(organizer: str, token: str, request: Request, session: Session) -> Response:
    web, found, pairs = await opened(request, session, organizer, form=True)
    customer = await _link_customer(web, found, token)
    if customer is None:
        return _invalid_link(web, found)
    password = first(pairs, "password")
    errors = password_problems(password, first(pairs, "password_repeat"))
    if errors:
        return aw.render(
            web, found, "account_set_password.html", 400, customer=customer, errors=errors
        )
    password_links.set_password(customer, password)
    customer.last_login = utcnow()
    await throttle.clear(session, login_key(found, customer.email or ""))
    aw.log_in(web, customer)
    _ = aw.translator(web)
    web.web.flash(_("Your password has been set. You are logged in."))
    target = _next(web, found, web.web.get(NEXT))
    web.web.set(NEXT, None)
    return web.redirect(target)


# -- log in and out ----------------------------------------------------------------------------


@router.get(f"{A}/login/")
async def login_form(organizer: str, request: Request, session: Session) -> Response:
    web, found, _ = await opened(request, session, organizer)
    next_url = _next(web, found, request.query_params.get("next"))
    if await aw.current(web, found.id) is not None:
        return web.redirect(next_url)
    return aw.render(web, found, "account_login.html", next=next_url)


@router.post(f"{A}/login/")
async def login(organizer: str, request: Request, session: Session) -> Response:
    web, found, pairs = await opened(request, session, organizer, form=True)
    email = first(pairs, "email").strip()[:190]
    next_url = _next(web, found, first(pairs, "next"))
    context = {"next": next_url, "kept": {"email": email}}
    key = login_key(found, email)
    wait = await throttle.retry_after(session, web.settings, key, web.ip)
    if wait:
        response = aw.render(
            web, found, "account_login.html", 429, errors=[too_many(web, wait)], **context
        )
        response.headers["Retry-After"] = str(wait)
        return response
    customer = await sign_in.authenticate(session, found.id, email, first(pairs, "password"))
    if customer is None:
        await throttle.record_failure(session, web.settings, key, web.ip)
        return aw.render(web, found, "account_login.html", 400, errors=[WRONG_LOGIN], **context)
    await throttle.clear(session, key)
    aw.log_in(web, customer)
    return web.redirect(next_url)


@router.get(f"{A}/logout/")
async def logout_form(organizer: str, request: Request, session: Session) -> Response:
    web, found, _ = await opened(request, session, organizer)
    return web.redirect(aw.account_url(found.slug))


@router.post(f"{A}/logout/")
async def logout(organizer: str, request: Request, session: Session) -> Response:
    web, found, _ = await opened(request, session, organizer, form=True)
    aw.log_out(web, found.id)
    _ = aw.translator(web)
    web.web.flash(_("You are logged out."))
    return web.redirect(f"{aw.account_url(found.slug)}login/")


# -- forgotten password ------------------------------------------------------------------------


@router.get(f"{A}/forgot/")
async def forgot_form(organizer: str, request: Request, session: Session) -> Response:
    web, found, _ = await opened(request, session, organizer)
    return aw.render(web, found, "account_forgot.html", sent=False)


@router.post(f"{A}/forgot/")
async def forgot(organizer: str, request: Request, session: Session) -> Response:
    web, found, pairs = await opened(request, session, organizer, form=True)
    raw = first(pairs, "email")[:300]
    email, problem = self_service.clean_email(raw)
    if problem:
        return aw.render(
            web,
            found,
            "account_forgot.html",
            400,
            errors=[problem],
            kept={"email": raw},
            sent=False,
        )
    assert email is not None
    if (wait := await _mail_budget(web, found, email)) is not None:
        return limited(web, found, too_many(web, wait), wait)
    customer = await self_service.find_by_email(session, found.id, email)
    if customer is not None and customer.is_active:
        kind = "reset" if customer.is_verified else "setup"
        await _mail_link(web, found, customer, kind, customer.locale or aw.language(web))
    # The same answer either way: the form does not tell which addresses have accounts.
    return aw.render(web, found, "account_forgot.html", sent=True, kept={"email": email})
