"""What the customer account's pages (``account_pages.py``, ``account_home.py``) and the
checkout share: the organizer the URL names (the pages are 404 unless its customer accounts
are on), the customer's login kept in the web session, and rendering in the shop's look.

The login is the token of ``customers/sign_in.py``, the one the headless checkout takes as
``Authorization: Customer <token>``: one login for both. It is kept in the signed session
cookie under the organizer's id, so a login at one organizer is none at another; it ends
when the password changes or the account is deactivated (the token carries the password's
fingerprint), and logging in or out gives the session a new CSRF token.
"""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import quote

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.customers import sign_in
from admit.models import Customer, Organizer
from admit.organizers.settings import accounts_open, value
from admit.shop import i18n
from admit.shop.render import language as page_language
from admit.shop.render import page as render_page
from admit.web.page import Page

ACCOUNT = "/{organizer}/account"
LANGUAGES = ["en", "de"]  # the account's pages and mails are written in both


def account_url(slug: str) -> str:
    return f"/{slug}/account/"


def login_link(slug: str, next_url: str) -> str:
    """The login page that returns to ``next_url`` (the checkout's "log in" link)."""
    return f"{account_url(slug)}login/?next={quote(next_url, safe='')}"


def _key(organizer_id: int) -> str:
    return f"customer:{organizer_id}"


async def load_organizer(session: AsyncSession, slug: str) -> Organizer | None:
    """The organizer whose buyers have accounts, or None (the pages answer 404)."""
    organizer = await session.scalar(select(Organizer).where(Organizer.slug == slug))
    return organizer if organizer is not None and accounts_open(organizer) else None


async def current(web: Page, organizer_id: int) -> Customer | None:
    """The customer logged in at this organizer in this browser, or None (a login that is
    no longer valid is forgotten)."""
    token = web.web.get(_key(organizer_id))
    if not isinstance(token, str):
        return None
    secret = web.request.app.state.secret_key
    customer = await sign_in.customer_for_token(web.session, secret, organizer_id, token)
    if customer is None:
        web.web.set(_key(organizer_id), None)
    return customer


def _new_csrf(web: Page) -> None:
    web.web.set("csrf", secrets.token_urlsafe(32))


def log_in(web: Page, customer: Customer) -> None:
    """Keeps the login (the cart and the language stay: a buyer logs in during checkout); a
    browser that has not chosen a language takes the customer's."""
    secret = web.request.app.state.secret_key
    web.web.set(_key(customer.organizer_id), sign_in.token_for(secret, customer))
    own = (customer.locale or "en").split("-")[0]
    if web.web.get("lang") is None and own in LANGUAGES:
        web.web.set("lang", own)
    _new_csrf(web)


def log_out(web: Page, organizer_id: int) -> None:
    web.web.set(_key(organizer_id), None)
    _new_csrf(web)


def language(web: Page) -> str:
    """The account pages' language: asked (``?lang=``) or remembered, else English."""
    return page_language(web, None, LANGUAGES)


def translator(web: Page) -> Any:
    return i18n.translator(language(web))


def render(
    web: Page,
    organizer: Organizer,
    template: str,
    status: int = 200,
    **context: Any,
) -> Response:
    """An account page in the shop's layout, in English or German."""
    context.setdefault("errors", [])
    context.setdefault("kept", {})
    return render_page(
        web,
        template,
        status,
        offered=LANGUAGES,
        event=None,
        event_name="",
        organizer_name=organizer.name,
        organizer_slug=organizer.slug,
        shop_url=account_url(organizer.slug),
        account_url=account_url(organizer.slug),
        contact=value(organizer, "contact_mail"),
        imprint=value(organizer, "imprint_url"),
        **context,
    )
