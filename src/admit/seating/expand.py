"""Seats as the API shows them, with what holds them, optionally expanded (``?expand=``).

A page of seats costs a fixed number of queries: one for the holders of all its seats, and one
or two per expanded kind. An expanded order position is the order position resource with an
added ``order`` object (``code``, ``event``) and without its ``seat`` (the seat is the parent).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from admit.carts.render import render_many
from admit.db import utcnow
from admit.kit.http.context import EventContext
from admit.kit.http.errors import FieldErrors, forbidden
from admit.models import CartPosition, Order, OrderPosition, Seat
from admit.orders.serialize import POSITION_LOAD, position_dict, question_identifiers
from admit.seating.holders import Holds, holds, voucher_renderer

# What may be expanded, and the permission reading it needs.
EXPANDABLE = {
    "orderposition": "event.orders:read",
    "cartposition": "event.orders:read",
    "voucher": "event.vouchers:read",
}


def seat_dict(seat: Seat, held: Holds | None) -> dict[str, Any]:
    held = held or Holds()
    return {
        "id": seat.id,
        "subevent": seat.subevent_id,
        "zone_name": seat.zone_name,
        "row_name": seat.row_name,
        "row_label": seat.row_label,
        "seat_number": seat.seat_number,
        "seat_label": seat.seat_label,
        "seat_guid": seat.seat_guid,
        "product": seat.product_id,
        "blocked": seat.blocked,
        "orderposition": held.orderposition,
        "cartposition": held.cartposition,
        "voucher": held.voucher,
    }


def expansion(ctx: EventContext) -> Expansion:
    """The ``expand`` parameters of the request: 400 for unknown ones, 403 without the
    permission to read what they name."""
    wanted = ctx.request.query_params.getlist("expand")
    invalid = [w for w in wanted if w not in EXPANDABLE]
    if invalid:
        raise FieldErrors({"expand": [f'"{w}" is not a valid choice.' for w in invalid]})
    for kind in wanted:
        if not ctx.has_event_permission(ctx.event.id, EXPANDABLE[kind]):
            raise forbidden()
    return Expansion(ctx, frozenset(wanted))


@dataclass
class Expansion:
    ctx: EventContext
    kinds: frozenset[str]

    async def render(self, seats: Sequence[Seat]) -> list[dict[str, Any]]:
        out = [seat_dict(s, None) for s in seats]
        await self.complete(out)
        return out

    async def complete(self, out: list[dict[str, Any]]) -> None:
        """Fills in, in place, what holds each rendered seat (ids, or objects where
        ``expand`` asks for them)."""
        held = await holds(self.ctx.session, [d["id"] for d in out], utcnow())
        for d in out:
            found = held.get(d["id"]) or Holds()
            d["orderposition"] = found.orderposition
            d["cartposition"] = found.cartposition
            d["voucher"] = found.voucher
        for kind, load in (
            ("orderposition", self._order_positions),
            ("cartposition", self._cart_positions),
            ("voucher", self._vouchers),
        ):
            ids = [d[kind] for d in out if d[kind] is not None]
            if kind not in self.kinds or not ids:
                continue
            objects = await load(ids)
            for d in out:
                if d[kind] is not None:
                    d[kind] = objects.get(d[kind], d[kind])

    async def _order_positions(self, ids: list[int]) -> dict[int, Any]:
        session = self.ctx.session
        rows = (
            await session.execute(
                select(OrderPosition, Order.code)
                .join(Order, Order.id == OrderPosition.order_id)
                .where(OrderPosition.id.in_(ids))
                .options(*POSITION_LOAD)
            )
        ).all()
        idents = await question_identifiers(session, [p for p, _ in rows])
        found = {}
        for position, code in rows:
            data = position_dict(position, code, idents)
            data["order"] = {"code": code, "event": self.ctx.event.slug}
            data.pop("seat", None)
            found[position.id] = data
        return found

    async def _cart_positions(self, ids: list[int]) -> dict[int, Any]:
        rows = list(
            await self.ctx.session.scalars(
                select(CartPosition).where(CartPosition.id.in_(ids)).order_by(CartPosition.id)
            )
        )
        rendered = await render_many(self.ctx.session, rows)
        return {p.id: data for p, data in zip(rows, rendered, strict=True)}

    async def _vouchers(self, ids: list[int]) -> dict[int, Any]:
        render = voucher_renderer()
        return await render(self.ctx.session, ids) if render is not None else {}
