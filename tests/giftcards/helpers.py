"""Gift card test data: cards written straight to the database (with their opening
transaction, as the API writes them), tickets bought through the API."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import func, select

from admit.db import utcnow
from admit.models import GiftCard, GiftCardAcceptance, GiftCardTransaction, Organizer
from tests.factories import Factory, World, auth
from tests.orders import helpers as orders

_secrets = itertools.count(1)


def cards_url(org: Organizer | str, rest: str = "") -> str:
    slug = org if isinstance(org, str) else org.slug
    return f"/api/v1/organizers/{slug}/giftcards/{rest}"


def acceptances_url(org: Organizer | str, rest: str = "") -> str:
    slug = org if isinstance(org, str) else org.slug
    return f"/api/v1/organizers/{slug}/giftcardacceptances/{rest}"


async def card(factory: Factory, issuer: Organizer, value: str = "50.00", **kw: Any) -> GiftCard:
    kw.setdefault("secret", f"CARD{next(_secrets):06d}")
    kw.setdefault("currency", "EUR")
    async with factory.sessionmaker() as session:
        obj = GiftCard(issuer_id=issuer.id, value=Decimal(value), **kw)
        session.add(obj)
        await session.flush()
        session.add(
            GiftCardTransaction(
                card_id=obj.id, value=Decimal(value), acceptor_id=issuer.id, datetime=utcnow()
            )
        )
        await session.commit()
        return obj


async def accept(
    factory: Factory, issuer: Organizer, acceptor: Organizer, active: bool = True
) -> GiftCardAcceptance:
    """An acceptance both sides agreed to (``active``: whether the issuer's offer stands)."""
    return await factory._add(  # type: ignore[return-value]
        GiftCardAcceptance(
            issuer_id=issuer.id,
            acceptor_id=acceptor.id,
            acceptor_slug=acceptor.slug,
            active=active,
            accepted=True,
        )
    )


async def ledger(factory: Factory, card_id: int) -> tuple[Decimal, Decimal, int]:
    """(stored value, sum of transactions, number of transactions) of a card."""
    async with factory.sessionmaker() as session:
        value = await session.scalar(select(GiftCard.value).where(GiftCard.id == card_id))
        total, count = (
            await session.execute(
                select(
                    func.coalesce(func.sum(GiftCardTransaction.value), 0),
                    func.count(GiftCardTransaction.id),
                ).where(GiftCardTransaction.card_id == card_id)
            )
        ).one()
    return Decimal(value), Decimal(total).quantize(Decimal("0.01")), count


async def ticket(client: httpx.AsyncClient, world: World, factory: Factory) -> dict[str, Any]:
    """A paid order through the API; returns the order (its first position is the ticket)."""
    item = await orders.item(factory, world.event)
    body = {
        "email": "fan@example.org",
        "status": "p",
        "payment_provider": "manual",
        "positions": [{"item": item.id}],
    }
    response = await client.post(orders.url(world), json=body, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    return response.json()


def in_days(days: int) -> dt.datetime:
    return utcnow() + dt.timedelta(days=days)
