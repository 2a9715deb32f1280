"""Gift cards and their transactions as the API renders them, in a fixed number of queries
per page: organizer slugs, owner tickets (``expand=owner_ticket``) and orders are loaded in
one batch each, never per row."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.giftcards.schemas import TransactionOut
from admit.kit.http.context import OrgContext
from admit.kit.resources.render import Rows
from admit.models import Event, GiftCardTransaction, Order, OrderPosition, Organizer
from admit.orders.serialize import POSITION_LOAD, position_dict, question_identifiers


def money(value: Decimal) -> str:
    return f"{value:.2f}"


def expands_owner_ticket(ctx: OrgContext) -> bool:
    return "owner_ticket" in ctx.request.query_params.getlist("expand")


async def organizer_slugs(ctx: OrgContext, ids: Iterable[int | None]) -> dict[int, str]:
    """Slugs by id; the caller's own organizer costs no query."""
    slugs = {ctx.organizer_id: ctx.organizer_slug}
    missing = {i for i in ids if i is not None and i not in slugs}
    if missing:
        rows = await ctx.session.execute(
            select(Organizer.id, Organizer.slug).where(Organizer.id.in_(missing))
        )
        slugs.update({k: v for k, v in rows})
    return slugs


async def owner_tickets(session: AsyncSession, ids: set[int]) -> dict[int, dict[str, Any]]:
    """Nested order positions, each with ``order: {code, event}`` for matching."""
    if not ids:
        return {}
    positions = (
        (
            await session.execute(
                select(OrderPosition).where(OrderPosition.id.in_(ids)).options(*POSITION_LOAD)
            )
        )
        .scalars()
        .all()
    )
    order_ids = {p.order_id for p in positions}
    orders = {
        oid: (code, slug)
        for oid, code, slug in await session.execute(
            select(Order.id, Order.code, Event.slug)
            .join(Event, Event.id == Order.event_id)
            .where(Order.id.in_(order_ids))
        )
    }
    idents = await question_identifiers(session, positions)
    nested = {}
    for pos in positions:
        code, event_slug = orders[pos.order_id]
        data = position_dict(pos, code, idents)
        data["order"] = {"code": code, "event": event_slug}
        nested[pos.id] = data
    return nested


def card_dict(card: Any, issuer: str, owner: int | dict[str, Any] | None) -> dict[str, Any]:
    return {
        "id": card.id,
        "secret": card.secret,
        "issuance": card.issuance,
        "value": money(card.value),
        "currency": card.currency,
        "testmode": card.testmode,
        "expires": card.expires,
        "conditions": card.conditions,
        "owner_ticket": owner,
        "issuer": issuer,
    }


async def render_cards(ctx: OrgContext, cards: Sequence[Any]) -> list[dict[str, Any]]:
    slugs = await organizer_slugs(ctx, (c.issuer_id for c in cards))
    nested: dict[int, dict[str, Any]] = {}
    expand = expands_owner_ticket(ctx)
    if expand:
        ids = {c.owner_ticket_id for c in cards if c.owner_ticket_id is not None}
        nested = await owner_tickets(ctx.session, ids)
    result = []
    for card in cards:
        owner: int | dict[str, Any] | None = card.owner_ticket_id
        if expand and owner is not None:
            owner = nested.get(owner)
        result.append(card_dict(card, slugs[card.issuer_id], owner))
    return result


async def render_card(ctx: OrgContext, card: Any) -> dict[str, Any]:
    return (await render_cards(ctx, [card]))[0]


def _of_order(column: Any) -> Any:
    return (
        select(column)
        .select_from(Order)
        .join(Event, Event.id == Order.event_id)
        .where(Order.id == GiftCardTransaction.order_id)
        .correlate(GiftCardTransaction)
        .scalar_subquery()
    )


# The transactions list renders from rows (``kit/resources/render.py``): the order's code and event
# and the accepting organizer's slug are selected with each transaction.
TRANSACTION_ROWS = Rows(
    TransactionOut,
    GiftCardTransaction,
    columns={
        "event": _of_order(Event.slug),
        "order": _of_order(Order.code),
        "acceptor": select(Organizer.slug)
        .where(Organizer.id == GiftCardTransaction.acceptor_id)
        .correlate(GiftCardTransaction)
        .scalar_subquery(),
    },
)
