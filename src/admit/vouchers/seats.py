"""Vouchers for one specific seat: resolving the ``seat`` guid through the seating package and
telling the seating package which seats vouchers hold.

A voucher with a seat holds it while it is valid and has usages left; a buyer redeeming that
voucher may take the seat (the seating package's claim skips the holder's own voucher).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Select, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Event, Item, Seat, Voucher
from admit.seating import claim as seat_claim
from admit.seating import holders

SEAT_NEEDS_DATE = "You need to choose a date if you select a seat."
SEAT_NEEDS_PRODUCT = "You need to choose a specific product if you select a seat."
SEAT_SINGLE_USE = "Seat-specific vouchers can only be used once."


def seat_missing(guid: str) -> str:
    return f'The specified seat ID "{guid}" does not exist for this event.'


def seat_taken(guid: str) -> str:
    return (
        f'The seat "{guid}" is currently unavailable (blocked, already sold or held by a '
        "different voucher)."
    )


def seat_for_other_product(item: Item | None) -> str:
    names = (item.name if item is not None else None) or {}
    name = names.get("en") or next(iter(names.values()), "")
    return f'You need to choose the product "{name}" for this seat.'


async def guids(session: AsyncSession, seat_ids: Iterable[int | None]) -> dict[int, str]:
    """``seat_guid`` by seat id, in one query (none when no voucher names a seat)."""
    ids = {i for i in seat_ids if i is not None}
    if not ids:
        return {}
    rows = await session.execute(select(Seat.id, Seat.seat_guid).where(Seat.id.in_(ids)))
    return dict(rows.all())


async def find(
    session: AsyncSession,
    event: Event,
    guid: str,
    *,
    subevent_id: int | None,
    item: Item | None,
    quota_id: int | None,
    max_usages: int,
) -> tuple[Seat | None, str | None]:
    """The seat a voucher names, or why it cannot name it (no lock taken yet)."""
    if event.has_subevents and subevent_id is None:
        return None, SEAT_NEEDS_DATE
    refs = await seat_claim.load(session, event, [(subevent_id, guid)])
    seat = refs.seats.get((subevent_id, guid))
    if seat is None:
        return None, seat_missing(guid)
    if quota_id is not None or item is None:
        return None, SEAT_NEEDS_PRODUCT
    if max_usages > 1:
        return None, SEAT_SINGLE_USE
    if seat.product_id != item.id:
        return None, seat_for_other_product(item)
    return seat, None


async def check_free(
    session: AsyncSession, seat_id: int, guid: str, voucher_id: int | None, now: dt.datetime
) -> str | None:
    """Locks the seat (after any quota lock, as every sale does) and refuses it when it is
    blocked, sold, or held by another voucher; carts do not count (pretix ignores them)."""
    locked = await seat_claim.lock_seats(session, [seat_id])
    state = locked.get(seat_id)
    held = (await holders.holds(session, [seat_id], now)).get(seat_id)
    taken = held is not None and (
        held.orderposition is not None or held.voucher not in (None, voucher_id)
    )
    if state is None or state.blocked or taken:
        return seat_taken(guid)
    return None


def _held(now: dt.datetime) -> Select[Any]:
    return select(Voucher.seat_id, Voucher.id).where(
        Voucher.seat_id.is_not(None),
        Voucher.redeemed < Voucher.max_usages,
        or_(Voucher.valid_until.is_(None), Voucher.valid_until >= now),
    )


def register(render: Any) -> None:
    """Tells the seating package which seats vouchers hold and how to show those vouchers."""

    async def _render(session: AsyncSession, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        return await render(session, ids)

    holders.register_voucher_holds(_held, _render)
