"""Seats as the API shows them, with what holds them, optionally expanded (``?expand=``).

A page of seats costs a fixed number of queries: one for the holders of all its seats, and one
or two per expanded kind. An expanded order position is the order position resource with an
added ``order`` object (``code``, ``event``) and without its ``seat`` (the seat is the parent).

Order and cart positions belong to sales, which the catalog does not import: the orders and
carts packages say how to show them here (:func:`register_holder_renderer`) when imported, as
the vouchers package does through :mod:`admit.seating.holders`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.kit.http.context import EventContext
from admit.kit.http.errors import FieldErrors, forbidden
from admit.models import Seat
from admit.seating.holders import Holds, holds, voucher_renderer

# ``render(session, ids, event slug)``: the holders of one kind as the API shows them, by id.
HolderRender = Callable[[AsyncSession, Sequence[int], str], Awaitable[dict[int, dict[str, Any]]]]
_renderers: dict[str, HolderRender] = {}


def register_holder_renderer(kind: str, render: HolderRender) -> None:
    """Called once by the package that owns ``kind`` (``orderposition``, ``cartposition``); a
    later call replaces the earlier."""
    _renderers[kind] = render


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
        return await self._registered("orderposition", ids)

    async def _cart_positions(self, ids: list[int]) -> dict[int, Any]:
        return await self._registered("cartposition", ids)

    async def _registered(self, kind: str, ids: list[int]) -> dict[int, Any]:
        render = _renderers.get(kind)
        if render is None:
            raise RuntimeError(f"nothing shows seat holders of kind {kind!r}: not registered")
        return await render(self.ctx.session, ids, self.ctx.event.slug)

    async def _vouchers(self, ids: list[int]) -> dict[int, Any]:
        render = voucher_renderer()
        return await render(self.ctx.session, ids) if render is not None else {}
