"""Seats in sales: resolving a ``seat_guid``, the rules on it, and taking it atomically.

A sale first resolves and checks its seats against what it loaded (:func:`load` and
:func:`check`: unknown seat, blocked, not for this product, a seat required but missing), all
before any lock is taken. Right before its rows are written it calls :func:`claim`, which locks
the seat rows in id order (PostgreSQL ``SELECT … FOR UPDATE``; SQLite's up-front write lock
already serialises writers) and only then looks at what holds them. A second buyer of the same
seat waits for the first transaction and then sees its position, so a seat is never sold twice,
whatever the number of API processes. Seats are locked after quotas everywhere, so the two
kinds of lock never wait on each other in a cycle.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.errors import APIError, busy_error
from admit.kit.resources.filtering import PK_MAX
from admit.models import Event, Item, OrderPosition, Seat, SubEvent
from admit.seating.holders import holds
from admit.seating.render import seat_name

SEAT_MISSING = "The specified seat does not exist."
LOCK_CHUNK = 5000


def seat_unavailable(seat: Seat) -> str:
    return f'The selected seat "{seat_name(seat)}" is not available.'


def seat_wrong_product(seat: Seat) -> str:
    return f'The seat "{seat_name(seat)}" is not available for this product.'


def seat_repeated(seat: Seat) -> str:
    return f'The seat "{seat_name(seat)}" has been selected more than once.'


def seat_required(item: Item) -> str:
    names = item.name or {}
    name = names.get("en") or next(iter(names.values()), str(item.id))
    return f'The product "{name}" requires a seat. Please specify one.'


def mapped_items(mapping: Mapping[str, Any] | None) -> set[int]:
    """Items a seat category mapping sells seats for."""
    return {v for v in (mapping or {}).values() if isinstance(v, int) and not isinstance(v, bool)}


@dataclass
class SeatingRefs:
    """What a sale needs to check its seats, loaded once per request."""

    # (subevent id or None, seat_guid) -> seat
    seats: dict[tuple[int | None, str], Seat] = field(default_factory=dict)
    # for each date (None: the event itself) that has a plan: the items sold with a seat
    seated_items: dict[int | None, set[int]] = field(default_factory=dict)


async def load(
    session: AsyncSession, event: Event, wanted: Iterable[tuple[int | None, str | None]]
) -> SeatingRefs:
    """Seats named by ``(subevent, seat_guid)`` pairs and the seated items of their dates.

    Costs no query for an event without a plan whose request names no seat.
    """
    wanted = list(wanted)
    refs = SeatingRefs()
    if event.has_subevents:
        subevent_ids = {s for s, _ in wanted if s is not None and 1 <= s <= PK_MAX}
        if subevent_ids:
            rows = await session.execute(
                select(SubEvent.id, SubEvent.seat_category_mapping).where(
                    SubEvent.event_id == event.id,
                    SubEvent.id.in_(subevent_ids),
                    SubEvent.seating_plan.is_not(None),
                )
            )
            refs.seated_items = {sid: mapped_items(mapping) for sid, mapping in rows}
    elif event.seating_plan is not None:
        refs.seated_items[None] = mapped_items(event.seat_category_mapping)
    guids = {g for _, g in wanted if g}
    if guids:
        found = await session.scalars(
            select(Seat).where(Seat.event_id == event.id, Seat.seat_guid.in_(guids))
        )
        refs.seats = {(s.subevent_id, s.seat_guid): s for s in found}
    return refs


def check(
    refs: SeatingRefs, item: Item, subevent_id: int | None, guid: str | None
) -> tuple[Seat | None, str | None]:
    """The seat a position names, or the message why it cannot have it (before locking)."""
    seated = refs.seated_items.get(subevent_id)
    if not guid:
        if seated is not None and item.id in seated:
            return None, seat_required(item)
        return None, None
    seat = refs.seats.get((subevent_id, guid))
    if seat is None:
        return None, SEAT_MISSING
    if seat.product_id != item.id:
        return None, seat_wrong_product(seat)
    if seat.blocked:
        return None, seat_unavailable(seat)
    return seat, None


@dataclass(frozen=True)
class Claim:
    """One position's seat: the product it is sold as and the voucher redeemed for it."""

    seat: Seat
    item_id: int | None = None  # None: the product is not checked again (reactivation)
    voucher_id: int | None = None


class SeatsUnavailable(Exception):
    """Some claims failed; ``problems`` maps their index in the claim list to a message."""

    def __init__(self, problems: dict[int, str]) -> None:
        super().__init__("; ".join(problems.values()))
        self.problems = problems


@dataclass(frozen=True)
class LockedSeat:
    id: int
    blocked: bool
    product_id: int | None


async def lock_seats(session: AsyncSession, seat_ids: Iterable[int]) -> dict[int, LockedSeat]:
    """Locks seat rows in id order until the transaction ends and returns their current state
    (seats deleted meanwhile are absent). The wait is bounded by the connection's
    ``lock_timeout``; past it (or on a deadlock) 409 with ``Retry-After``.
    """
    ids = sorted(set(seat_ids))
    postgres = session.bind.dialect.name == "postgresql"  # type: ignore[union-attr]
    locked: dict[int, LockedSeat] = {}
    try:
        for start in range(0, len(ids), LOCK_CHUNK):
            query = (
                select(Seat.id, Seat.blocked, Seat.product_id)
                .where(Seat.id.in_(ids[start : start + LOCK_CHUNK]))
                .order_by(Seat.id)
            )
            if postgres:
                query = query.with_for_update()
            for row in await session.execute(query):
                locked[row.id] = LockedSeat(row.id, row.blocked, row.product_id)
    except DBAPIError as exc:
        busy = busy_error(exc)
        if busy is None:
            raise
        raise APIError(
            409, "The seat is busy right now. Please try again.", headers=busy.headers
        ) from None
    return locked


async def claim(session: AsyncSession, claims: Sequence[Claim | None], now: dt.datetime) -> None:
    """Takes the seats of one sale: locks them, then refuses any that is blocked, held by
    someone else, gone, no longer for this product, or named twice. Raises
    :class:`SeatsUnavailable`; call right before writing the positions, after the quotas."""
    indexed = [(i, c) for i, c in enumerate(claims) if c is not None]
    if not indexed:
        return
    problems: dict[int, str] = {}
    first: dict[int, int] = {}
    for index, c in indexed:
        if c.seat.id in first:
            problems[index] = seat_repeated(c.seat)
        first.setdefault(c.seat.id, index)
    locked = await lock_seats(session, first)
    held = await holds(session, first, now)
    for index, c in indexed:
        if index in problems:
            continue
        state = locked.get(c.seat.id)
        if state is None:
            problems[index] = SEAT_MISSING
        elif c.item_id is not None and state.product_id != c.item_id:
            problems[index] = seat_wrong_product(c.seat)
        elif state.blocked or (c.seat.id in held and held[c.seat.id].taken(c.voucher_id)):
            problems[index] = seat_unavailable(c.seat)
    if problems:
        raise SeatsUnavailable(problems)


def errors_at(
    wheres: Sequence[tuple[str, int] | None], problems: Mapping[int, str]
) -> dict[str, Any]:
    """A cart request's error body: ``seat`` on the position itself (``where`` None) or on
    its nested entry (``("addons", 2)`` -> ``{"addons": [{}, {}, {"seat": [...]}]}``)."""
    errors: dict[str, Any] = {}
    for index, message in sorted(problems.items()):
        where = wheres[index]
        if where is None:
            errors.setdefault("seat", []).append(message)
            continue
        name, position = where
        entries = errors.setdefault(name, [])
        entries.extend({} for _ in range(position + 1 - len(entries)))
        entries[position].setdefault("seat", []).append(message)
    return errors


async def reclaim(
    session: AsyncSession, positions: Sequence[OrderPosition], now: dt.datetime
) -> None:
    """An order coming back (reactivated, paid or extended after it lapsed) needs its seats
    again: 400 when one has been sold meanwhile, blocked or removed from the plan."""
    seated = [p for p in positions if p.seat_id is not None and not p.canceled]
    if not seated:
        return
    seats = {
        s.id: s
        for s in await session.scalars(select(Seat).where(Seat.id.in_({p.seat_id for p in seated})))
    }
    claims: list[Claim | None] = []
    for position in seated:
        seat = seats.get(position.seat_id)  # type: ignore[arg-type]
        if seat is None:
            raise APIError(400, "A seat of this order no longer exists in the seating plan.")
        claims.append(Claim(seat, None, position.voucher_id))
    try:
        await claim(session, claims, now)
    except SeatsUnavailable as exc:
        raise APIError(400, next(iter(exc.problems.values()))) from None
