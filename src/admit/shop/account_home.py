"""The customer's account page ``/{organizer}/account/``: their orders of this organizer (each
linking to its order page), their memberships (type, validity, uses, canceled), and the forms
to change their name and their password. Anyone not logged in is sent to the login page,
which returns here. (The path is the front page of an event whose slug is ``account`` while
the organizer has no customer accounts; with accounts on, the account page shadows it.)

Changing the password spends the login token of every other browser and app (the token
carries the password's fingerprint); this browser gets a new one.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from admit.customers import account, self_service
from admit.db import utcnow
from admit.kit.http.context import Session
from admit.models import Customer, Organizer
from admit.organizers.settings import value
from admit.shop import account_web as aw
from admit.shop import orders as shop_orders
from admit.shop import pages
from admit.shop.account_pages import login_key, opened, too_many
from admit.users import throttle
from admit.web.forms import first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
A = aw.ACCOUNT


async def _show(
    web: Page,
    organizer: Organizer,
    customer: Customer,
    status: int = 200,
    *,
    errors: list[str] | None = None,
    kept: dict[str, str] | None = None,
) -> Response:
    lang = aw.language(web)
    orders = await self_service.orders_of(
        web.session,
        organizer,
        customer,
        by_email=bool(value(organizer, "customer_accounts_link_by_email")),
    )
    return aw.render(
        web,
        organizer,
        "account.html",
        status,
        customer=customer,
        orders=orders,
        statuses=shop_orders.STATUS,
        memberships=await account.memberships_of(web.session, customer),
        now=utcnow(),
        text=lambda names: _localized(names, lang),
        errors=errors or [],
        kept=kept or {"name": customer.name_cached or ""},
    )


def _localized(names: dict[str, str] | None, lang: str) -> str:
    names = names or {}
    return names.get(lang) or names.get("en") or next(iter(names.values()), "")


async def _logged_in(
    request: Request, session: Session, organizer: str, *, form: bool = False
) -> tuple[Page, Organizer, Customer, list[tuple[str, str]]]:
    """As :func:`opened`, and the logged-in customer (else the answer is the login page)."""
    web, found, pairs = await opened(request, session, organizer, form=form)
    customer = await aw.current(web, found.id)
    if customer is None:
        raise pages.Refused(web.redirect(aw.login_link(found.slug, aw.account_url(found.slug))))
    return web, found, customer, pairs


@router.get(f"{A}/")
async def home(organizer: str, request: Request, session: Session) -> Response:
    if await aw.load_organizer(session, organizer) is None:
        # the shop of an event whose slug is "account" while the organizer has no accounts
        return await pages.front(organizer, "account", request, session)
    web, found, customer, _ = await _logged_in(request, session, organizer)
    return await _show(web, found, customer)


@router.post(f"{A}/name/")
async def change_name(organizer: str, request: Request, session: Session) -> Response:
    web, found, customer, pairs = await _logged_in(request, session, organizer, form=True)
    raw = first(pairs, "name")[:300]
    name, problem = self_service.clean_name(raw)
    if problem:
        return await _show(web, found, customer, 400, errors=[problem], kept={"name": raw})
    assert name is not None
    self_service.change_name(customer, name)
    _ = aw.translator(web)
    web.web.flash(_("Your name has been saved."))
    return web.redirect(aw.account_url(found.slug))


@router.post(f"{A}/change-password/")
async def change_password(organizer: str, request: Request, session: Session) -> Response:
    web, found, customer, pairs = await _logged_in(request, session, organizer, form=True)
    key = login_key(found, customer.email or customer.identifier)
    if wait := await throttle.retry_after(session, web.settings, key, web.ip):
        response = await _show(web, found, customer, 429, errors=[too_many(web, wait)])
        response.headers["Retry-After"] = str(wait)
        return response
    errors = self_service.change_password(
        customer,
        first(pairs, "current_password"),
        first(pairs, "new_password"),
        first(pairs, "new_password_repeat"),
    )
    if errors == [self_service.WRONG_PASSWORD]:
        await throttle.record_failure(session, web.settings, key, web.ip)
    if errors:
        kept: dict[str, Any] = {"name": customer.name_cached or ""}
        return await _show(web, found, customer, 400, errors=errors, kept=kept)
    aw.log_in(web, customer)  # a token for the new password; every other login has ended
    _ = aw.translator(web)
    web.web.flash(_("Your password has been changed."))
    return web.redirect(aw.account_url(found.slug))
