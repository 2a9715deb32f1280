"""What a customer does to their own account in the shop: sign up, change their name, change
their password, and the orders the account page lists (the memberships: ``account.py``).

Signing up makes an unverified account without a password; the mail's link sets the password
(``password_links``) and so verifies the address. An address that already has an account gets
no second one: the caller mails that account a reset link instead, and the page answers the
same either way, so the form does not tell which addresses have accounts.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import verify_password
from admit.customers import password_links
from admit.customers.service import lock_organizer, new_identifier
from admit.db import utcnow
from admit.kit.resources.schema import email_address
from admit.models import (
    Customer,
    Event,
    Order,
    Organizer,
)
from admit.users.accounts import password_problems

NAME_MAX = 255
EMAIL_MAX = 190  # the width of the customers' email column
NAME_REQUIRED = "Please enter your name."
EMAIL_REQUIRED = "Please enter your e-mail address."
WRONG_PASSWORD = "Your current password is not correct."


def clean_email(raw: str) -> tuple[str | None, str | None]:
    """(the normalised address, None) or (None, why it is refused)."""
    if not raw.strip():
        return None, EMAIL_REQUIRED
    try:
        address = email_address(raw.strip()[:400], max_length=EMAIL_MAX)
    except ValueError as exc:
        return None, str(exc)
    return address, None


def clean_name(raw: str) -> tuple[str | None, str | None]:
    name = " ".join(raw.split())
    if not name:
        return None, NAME_REQUIRED
    if len(name) > NAME_MAX:
        return None, f"The name may have at most {NAME_MAX} characters."
    return name, None


async def find_by_email(session: AsyncSession, organizer_id: int, email: str) -> Customer | None:
    return await session.scalar(
        select(Customer)
        .where(Customer.organizer_id == organizer_id, func.lower(Customer.email) == email.lower())
        .order_by(Customer.id)
        .limit(1)
    )


async def sign_up(
    session: AsyncSession, organizer_id: int, name: str, email: str, locale: str
) -> tuple[Customer, bool]:
    """(the account, whether it is new). The organizer row is locked first (as the API's
    customer creation does), so two sign-ups with one address make one account."""
    await lock_organizer(session, organizer_id)
    existing = await find_by_email(session, organizer_id, email)
    if existing is not None:
        return existing, False
    customer = Customer(
        organizer_id=organizer_id,
        identifier=await new_identifier(session, organizer_id),
        email=email,
        name_parts={"_scheme": "full", "full_name": name},
        name_cached=name,
        password_hash=None,
        is_active=True,
        is_verified=False,
        locale=locale,
    )
    session.add(customer)
    await session.flush()
    return customer, True


def change_name(customer: Customer, name: str) -> None:
    customer.name_parts = {"_scheme": "full", "full_name": name}
    customer.name_cached = name
    customer.last_modified = utcnow()


def change_password(customer: Customer, current: str, new: str, repeat: str) -> list[str]:
    """The refusals as sentences; none: the password is changed (every other login and every
    password link of the account is spent with the old fingerprint)."""
    if not verify_password(customer.password_hash, current):
        return [WRONG_PASSWORD]
    problems = password_problems(new, repeat)
    if not problems:
        password_links.set_password(customer, new)
    return problems


@dataclass(frozen=True)
class OrderLine:
    code: str
    event: dict[str, str]
    event_slug: str
    placed: dt.datetime
    status: str
    total: Decimal
    currency: str
    secret: str


async def orders_of(
    session: AsyncSession,
    organizer: Organizer,
    customer: Customer,
    *,
    by_email: bool = False,
    limit: int = 200,
) -> list[OrderLine]:
    """The customer's orders of this organizer, newest first (one query); with ``by_email``
    (the organizer's ``customer_accounts_link_by_email``) also the orders placed without an
    account with the customer's address, once that address is verified."""
    mine = Order.customer_id == customer.id
    if by_email and customer.is_verified and customer.email:
        guest = and_(Order.customer_id.is_(None), func.lower(Order.email) == customer.email.lower())
        mine = or_(mine, guest)
    rows = await session.execute(
        select(Order, Event)
        .join(Event, Event.id == Order.event_id)
        .where(Event.organizer_id == organizer.id, mine)
        .order_by(Order.datetime.desc(), Order.id.desc())
        .limit(limit)
    )
    return [
        OrderLine(
            order.code,
            dict(event.name or {}),
            event.slug,
            order.datetime,
            order.status,
            order.total,
            event.currency,
            order.secret,
        )
        for order, event in rows
    ]
