"""Test data for the customer accounts: the organizer setting, customers with passwords,
membership types and memberships, products that require one."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

from sqlalchemy import insert, select, update

from admit.auth.credentials import hash_password
from admit.models import (
    Customer,
    Item,
    Membership,
    MembershipType,
    Organizer,
    OutgoingMail,
    item_required_membership_types,
)
from tests.factories import Factory

PASSWORD = "correct horse battery"
LINK = re.compile(r"(https?://[^\s\"<]+/account/password/[^\s\"<]+/)")


async def accounts_on(factory: Factory, organizer: Organizer, **more: Any) -> None:
    settings = {"customer_accounts": True, **more}
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Organizer).where(Organizer.id == organizer.id).values(settings=settings)
        )
        await session.commit()


async def customer(
    factory: Factory,
    organizer: Organizer,
    email: str,
    *,
    password: str | None = PASSWORD,
    **kw: Any,
) -> Customer:
    kw.setdefault("is_verified", True)
    return await factory._add(  # type: ignore[return-value]
        Customer(
            organizer_id=organizer.id,
            identifier=email.split("@")[0].upper()[:7],
            email=email,
            name_parts={"_scheme": "full", "full_name": "Ada Lovelace"},
            name_cached="Ada Lovelace",
            password_hash=hash_password(password) if password else None,
            **kw,
        )
    )


async def membership_item(
    factory: Factory, event: Any, name: str = "Members' ticket"
) -> tuple[Item, MembershipType]:
    """A 10.00 product (in a quota of 10) that requires the "Season pass" membership type."""
    mtype = await factory._add(
        MembershipType(organizer_id=event.organizer_id, name={"en": "Season pass"}, max_usages=3)
    )
    item = await factory._add(
        Item(
            event_id=event.id,
            name={"en": name},
            default_price=Decimal("10.00"),
            admission=True,
            require_membership=True,
        )
    )
    async with factory.sessionmaker() as session:
        await session.execute(
            insert(item_required_membership_types).values(
                item_id=item.id, membership_type_id=mtype.id
            )
        )
        await session.commit()
    await factory.quota(event, 10, items=[item], name="Members")
    return item, mtype  # type: ignore[return-value]


async def membership(
    factory: Factory, customer: Customer, mtype: MembershipType, **kw: Any
) -> Membership:
    now = dt.datetime.now(dt.UTC)
    kw.setdefault("date_start", now - dt.timedelta(days=30))
    kw.setdefault("date_end", now + dt.timedelta(days=3650))
    return await factory._add(  # type: ignore[return-value]
        Membership(
            organizer_id=customer.organizer_id,
            customer_id=customer.id,
            membership_type_id=mtype.id,
            **kw,
        )
    )


async def mails(factory: Factory) -> list[OutgoingMail]:
    async with factory.sessionmaker() as session:
        return list(await session.scalars(select(OutgoingMail).order_by(OutgoingMail.id)))


def link_in(text: str) -> str:
    match = LINK.search(text)
    assert match, text
    return match.group(1)
