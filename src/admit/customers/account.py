"""What a customer sees of their own account (the shop's account page and the headless
``customer/``): their memberships with how often each was used, in one grouped query."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.models import Customer, Membership, MembershipType, Order, OrderPosition
from admit.orders.serialize import attendee_name


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


async def memberships_of(session: AsyncSession, customer: Customer) -> list[dict[str, Any]]:
    """The customer's memberships, newest first: type (name, usage limit), validity, whether
    it is valid now, its uses by tickets of orders that are not canceled."""
    used = (
        select(OrderPosition.used_membership_id.label("mid"), func.count().label("n"))
        .join(Order, Order.id == OrderPosition.order_id)
        .where(OrderPosition.canceled.is_(False), Order.status != "c")
        .where(OrderPosition.used_membership_id.is_not(None))
        .group_by(OrderPosition.used_membership_id)
        .subquery()
    )
    rows = await session.execute(
        select(Membership, MembershipType, func.coalesce(used.c.n, 0))
        .join(MembershipType, MembershipType.id == Membership.membership_type_id)
        .outerjoin(used, used.c.mid == Membership.id)
        .where(Membership.customer_id == customer.id)
        .order_by(Membership.date_end.desc(), Membership.id.desc())
    )
    now = utcnow()
    return [
        {
            "id": m.id,
            "membership_type": {
                "id": t.id,
                "name": dict(t.name or {}),
                "max_usages": t.max_usages,
                "allow_parallel_usage": t.allow_parallel_usage,
            },
            "date_start": _aware(m.date_start),
            "date_end": _aware(m.date_end),
            "attendee_name": attendee_name(m.attendee_name_parts) or None,
            "canceled": m.canceled,
            "testmode": m.testmode,
            "usages": int(usages),
            "valid_now": not m.canceled
            and _aware(m.date_start) <= now <= _aware(m.date_end)
            and (t.max_usages is None or usages < t.max_usages),
        }
        for m, t, usages in rows
    ]
