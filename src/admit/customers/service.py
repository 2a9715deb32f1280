"""Customer rules: generated identifiers, unique e-mail per organizer, anonymization; and the
guard that keeps a membership type from being deleted while memberships use it.

Writes that must see a consistent set of an organizer's customers (a new identifier, an e-mail
address not yet taken) lock the organizer row first on PostgreSQL; SQLite serialises writers.
"""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.auth.credentials import hash_password
from admit.customers import membership_rules
from admit.customers.schemas import CustomerIn, MembershipIn
from admit.kit.http.errors import APIError, FieldErrors
from admit.mail.outbox import queue_mail
from admit.mail.render import render_mail
from admit.models import Customer, Membership, MembershipType, Organizer
from admit.orders.serialize import attendee_name

# Read out over the phone and typed: no 0/O, 1/I/L.
IDENTIFIER_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
IDENTIFIER_LENGTH = 7


async def lock_organizer(session: AsyncSession, organizer_id: int) -> None:
    await session.execute(
        # FOR NO KEY UPDATE: serialises these writers without blocking inserts elsewhere
        # that merely reference the organizer (foreign keys take FOR KEY SHARE).
        select(Organizer.id).where(Organizer.id == organizer_id).with_for_update(key_share=True)
    )


def customer_to_read(customer: Customer) -> dict[str, Any]:
    return {
        "identifier": customer.identifier,
        "external_identifier": customer.external_identifier,
        "email": customer.email,
        "phone": customer.phone,
        "name": customer.name_cached or None,
        "name_parts": dict(customer.name_parts or {}),
        "is_active": customer.is_active,
        "is_verified": customer.is_verified,
        "last_login": customer.last_login,
        "date_joined": customer.date_joined,
        "locale": customer.locale,
        "last_modified": customer.last_modified,
        "notes": customer.notes,
    }


async def new_identifier(session: AsyncSession, organizer_id: int) -> str:
    while True:
        candidate = "".join(secrets.choice(IDENTIFIER_ALPHABET) for _ in range(IDENTIFIER_LENGTH))
        taken = await session.scalar(
            select(Customer.id).where(
                Customer.organizer_id == organizer_id, Customer.identifier == candidate
            )
        )
        if taken is None:
            return candidate


async def _check_email_free(
    session: AsyncSession, organizer_id: int, email: str | None, exclude_id: int | None
) -> None:
    if email is None:
        return
    query = select(Customer.id).where(
        Customer.organizer_id == organizer_id, func.lower(Customer.email) == email.lower()
    )
    if exclude_id is not None:
        query = query.where(Customer.id != exclude_id)
    if await session.scalar(query.limit(1)) is not None:
        raise FieldErrors.single("email", "There already is a customer with this email address.")


def _apply(customer: Customer, data: CustomerIn) -> None:
    customer.external_identifier = data.external_identifier
    customer.email = data.email
    customer.phone = data.phone
    customer.name_parts = dict(data.name_parts)
    customer.name_cached = attendee_name(data.name_parts)
    customer.is_active = data.is_active
    customer.is_verified = data.is_verified
    customer.locale = data.locale
    customer.notes = data.notes


async def create_customer(session: AsyncSession, organizer_id: int, data: CustomerIn) -> Customer:
    await lock_organizer(session, organizer_id)
    await _check_email_free(session, organizer_id, data.email, None)
    customer = Customer(
        organizer_id=organizer_id, identifier=await new_identifier(session, organizer_id)
    )
    _apply(customer, data)
    if data.password is not None:
        customer.password_hash = hash_password(data.password)
    session.add(customer)
    await session.flush()
    if data.send_email and customer.email:
        organizer = await session.get(Organizer, organizer_id)
        assert organizer is not None
        subject, text, html = render_mail(
            "customer_created", organizer=organizer.name, identifier=customer.identifier
        )
        await queue_mail(
            session,
            to=[customer.email],
            subject=subject,
            body=text,
            html=html,
            organizer_id=organizer_id,
        )
    return customer


async def update_customer(
    session: AsyncSession, organizer_id: int, customer: Customer, data: CustomerIn
) -> None:
    if data.email is not None and (customer.email or "").lower() != data.email.lower():
        await lock_organizer(session, organizer_id)
        await _check_email_free(session, organizer_id, data.email, customer.id)
    _apply(customer, data)
    await session.flush()


async def anonymize(session: AsyncSession, customer: Customer) -> None:
    """Removes the person from the record; the identifier stays so references still resolve."""
    customer.email = None
    customer.phone = None
    customer.name_parts = {}
    customer.name_cached = None
    customer.external_identifier = None
    customer.notes = None
    customer.password_hash = None
    customer.is_active = False
    customer.is_verified = False
    await session.execute(
        update(Membership)
        .where(Membership.customer_id == customer.id)
        .values(attendee_name_parts={})
        .execution_options(synchronize_session=False)
    )
    await session.flush()


# -- membership types and memberships ---------------------------------------------------------


async def delete_membership_type(session: AsyncSession, membership_type: MembershipType) -> None:
    """403 while memberships use the type. The row lock orders this against a concurrent
    membership creation (which holds a share lock on the type)."""
    await session.execute(
        select(MembershipType.id).where(MembershipType.id == membership_type.id).with_for_update()
    )
    used = await session.scalar(
        select(Membership.id).where(Membership.membership_type_id == membership_type.id).limit(1)
    )
    used = used or await membership_rules.type_used_by_items(session, membership_type.id)
    if used:
        raise APIError(403, "This membership type can not be deleted as it is currently in use.")
    await session.delete(membership_type)
    await session.flush()


async def membership_references(
    session: AsyncSession, organizer_id: int, data: MembershipIn, creating: bool
) -> tuple[int | None, int]:
    """The customer (on creation) and membership type ids, checked to be the organizer's."""
    errors: dict[str, list[str]] = {}
    customer_id = None
    if creating:
        if data.customer is None:
            errors["customer"] = ["This field is required."]
        else:
            customer_id = await session.scalar(
                select(Customer.id).where(
                    Customer.organizer_id == organizer_id, Customer.identifier == data.customer
                )
            )
            if customer_id is None:
                errors["customer"] = [f'Object with identifier="{data.customer}" does not exist.']
    type_id = await session.scalar(
        select(MembershipType.id)
        .where(
            MembershipType.id == data.membership_type,
            MembershipType.organizer_id == organizer_id,
        )
        .with_for_update(read=True)
    )
    if type_id is None:
        errors["membership_type"] = [
            f'Invalid pk "{data.membership_type}" - object does not exist.'
        ]
    if data.date_end < data.date_start:
        errors["date_end"] = ["The end of validity must not be before its start."]
    if errors:
        raise FieldErrors(errors)
    assert type_id is not None
    return customer_id, type_id
