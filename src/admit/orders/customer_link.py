"""Orders linked to customer accounts: the API names the customer by its ``identifier`` (as
the reference does), the database links by id. A customer of another organizer is treated as
missing, so an order can never point at another tenant's customer.

``Order.customer_identifier`` is the identifier read with the order in the same statement (a
correlated primary-key lookup, nothing when the order has no customer), so rendering orders
costs no extra query.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import column_property

from admit.kit.http.errors import FieldErrors
from admit.models import Customer, Order

if not hasattr(Order, "customer_identifier"):
    Order.customer_identifier = column_property(  # type: ignore[attr-defined]
        select(Customer.identifier)
        .where(Customer.id == Order.customer_id)
        .correlate_except(Customer)
        .scalar_subquery(),
        # Routes render orders re-read with populate_existing; a flush must not leave the
        # attribute unloaded (an async session cannot load it on access).
        expire_on_flush=False,
    )


def missing(identifier: str) -> FieldErrors:
    return FieldErrors.single("customer", f"Object with identifier={identifier} does not exist.")


async def resolve(session: AsyncSession, organizer_id: int, identifier: str | None) -> int | None:
    """The id of the organizer's customer with this identifier (None for None); 400 when the
    organizer has no such customer."""
    if identifier is None:
        return None
    found = await session.scalar(
        select(Customer.id).where(
            Customer.organizer_id == organizer_id, Customer.identifier == identifier
        )
    )
    if found is None:
        raise missing(identifier)
    return found


def by_identifier(identifier: str) -> Any:
    """The order-list filter ``customer=<identifier>``."""
    return Order.customer_id.in_(select(Customer.id).where(Customer.identifier == identifier))
