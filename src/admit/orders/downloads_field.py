"""What an order or position shows beyond its columns: the ticket downloads that really
exist, ``pdf_data`` when asked for, and the canceled positions and fees only when asked for.

``downloads`` lists the PDF of an order (``E/orders/{code}/download/pdf/``) or a position
(``E/orderpositions/{id}/download/pdf/``) exactly when that URL has a ticket to give: the same
rules as the download routes (:mod:`admit.tickets.downloads`), so a listed URL never answers
404 and an unlisted one never serves a ticket. An order lists its PDF when the order allows
downloads and at least one of its positions has a ticket.

Everything is decided for a whole page at once: one query for the products' ``generate_tickets``
(none when no order on the page allows downloads), and for ``pdf_data`` one ticket batch
(:func:`admit.tickets.loading.load_batch`, a fixed dozen statements however many positions).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from fastapi import Request
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.context import public_base_url
from admit.models import Event, Item, OrderPosition
from admit.orders.filters import View
from admit.tickets.downloads import order_refusal, position_refusal
from admit.tickets.loading import Batch, PositionData, load_batch
from admit.tickets.values import ticket_values

OUTPUT = "pdf"


def api_base(request: Request, organizer_slug: str, event_slug: str) -> str:
    """The event's API URL (``…/api/v1/organizers/o/events/e/``) as clients reach it."""
    return event_api_base(public_base_url(request), organizer_slug, event_slug)


def event_api_base(public_base: str, organizer_slug: str, event_slug: str) -> str:
    """:func:`api_base` from the public base URL (``kit.http.context.public_base_url``)."""
    return f"{public_base}/api/v1/organizers/{organizer_slug}/events/{event_slug}/"


def _download(url: str) -> list[dict[str, str]]:
    return [{"output": OUTPUT, "url": url}]


@dataclass(frozen=True)
class _Product:
    generate_tickets: bool | None


@dataclass(frozen=True)
class _Ticket:
    """What :func:`position_refusal` reads of a position: itself, its order, its product."""

    position: Any
    order: Any
    item: _Product


async def _products(session: AsyncSession, item_ids: Iterable[int]) -> dict[int, _Product]:
    ids = sorted(set(item_ids))
    if not ids:
        return {}
    rows = await session.execute(select(Item.id, Item.generate_tickets).where(Item.id.in_(ids)))
    return {item_id: _Product(flag) for item_id, flag in rows}


async def ticketed(
    session: AsyncSession,
    pairs: Sequence[tuple[OrderPosition, Any]],
    batch: Batch | None = None,
    generate_tickets: Mapping[int, bool | None] | None = None,
) -> set[int]:
    """The ids of the positions (each with its order) whose ticket can be downloaded now.
    ``batch``: ticket data already loaded for them, or ``generate_tickets``: the products'
    flags by item id, known to the caller (then no query is needed)."""
    candidates = [(p, o) for p, o in pairs if not p.canceled and order_refusal(o) is None]
    if not candidates:
        return set()
    loaded = batch.positions if batch is not None else {}
    if generate_tickets is not None:
        products = {i: _Product(flag) for i, flag in generate_tickets.items()}
    elif all(p.id in loaded for p, _ in candidates):
        products = {p.item_id: _Product(loaded[p.id].item.generate_tickets) for p, _ in candidates}
    else:
        products = await _products(session, (p.item_id for p, _ in candidates))
    found = set()
    for pos, order in candidates:
        product = products.get(pos.item_id)
        if product is None:
            continue
        if position_refusal(cast(PositionData, _Ticket(pos, order, product))) is None:
            found.add(pos.id)
    return found


async def decorate_orders(
    session: AsyncSession,
    orders: Sequence[Any],
    bodies: list[dict[str, Any]],
    view: View,
    api_bases: Mapping[int, str],
    event: Event | None = None,
    generate_tickets: Mapping[int, bool | None] | None = None,
) -> None:
    """Completes rendered orders in place (``bodies[i]`` renders ``orders[i]``, positions
    loaded): hides canceled positions and fees unless the view asks for them, fills
    ``downloads``, and with ``pdf_data`` (``event`` given: only event-level endpoints offer
    it, as in the reference) adds each shown position's ticket variables.
    ``generate_tickets``: the products' flags when the caller knows them (a new order)."""
    pairs = [(p, o) for o in orders for p in o.positions]
    batch = None
    if view.pdf_data and event is not None:
        shown = [p.id for p, _ in pairs if view.canceled_positions or not p.canceled]
        batch = await load_batch(session, event, shown)
    with_tickets = await ticketed(session, pairs, batch, generate_tickets)
    for order, body in zip(orders, bodies, strict=True):
        base = api_bases[order.event_id]
        if not view.canceled_positions:
            body["positions"] = [p for p in body["positions"] if not p["canceled"]]
        if not view.canceled_fees:
            body["fees"] = [f for f in body["fees"] if not f["canceled"]]
        has_tickets = any(p.id in with_tickets for p in order.positions)
        url = f"{base}orders/{order.code}/download/pdf/"
        body["downloads"] = _download(url) if has_tickets else []
        _complete_positions(body["positions"], with_tickets, base, batch)


async def decorate_positions(
    session: AsyncSession,
    pairs: Sequence[tuple[OrderPosition, Any]],
    bodies: list[dict[str, Any]],
    view: View,
    base: str,
    event: Event,
) -> None:
    """Completes rendered positions in place (``bodies[i]`` renders ``pairs[i]``, a position
    with its order): ``downloads``, and ``pdf_data`` when the view asks for it."""
    batch = None
    if view.pdf_data:
        batch = await load_batch(session, event, [p.id for p, _ in pairs])
    with_tickets = await ticketed(session, pairs, batch)
    _complete_positions(bodies, with_tickets, base, batch)


def _complete_positions(
    bodies: list[dict[str, Any]], with_tickets: set[int], base: str, batch: Batch | None
) -> None:
    for body in bodies:
        pid = body["id"]
        url = f"{base}orderpositions/{pid}/download/pdf/"
        body["downloads"] = _download(url) if pid in with_tickets else []
        if batch is not None:
            found = batch.positions.get(pid)
            body["pdf_data"] = ticket_values(batch, found) if found is not None else {}
