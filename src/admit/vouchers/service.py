"""Voucher rules: references into the event, the cross-field rules, codes, quota blocking,
seats, deletion (rendering: ``render.py``).

Validation loads every reference of a request (one voucher or a whole batch) in a fixed number
of queries. Writes that make a voucher hold more quota go through
:func:`admit.vouchers.blocking.ensure_capacity` under the quota lock before the row is written.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import delete, exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.carts.service import delete_position
from admit.db import utcnow
from admit.kit.http.errors import NON_FIELD, APIError, FieldErrors
from admit.kit.resources.filtering import PK_MAX
from admit.models import (
    CartPosition,
    Event,
    Item,
    ItemVariation,
    OrderPosition,
    Quota,
    SubEvent,
    Voucher,
)
from admit.seating import claim as seat_claim
from admit.vouchers import blocking, codes, seats
from admit.vouchers.schemas import MIN_OVER_MAX, PERCENT_OVER_100, VoucherIn

CODE_TAKEN = "A voucher with this code already exists."
CODE_REPEATED = "This code is used by another voucher in this request."
QUOTA_AND_PRODUCT = (
    "A voucher can be restricted to a product or to a quota, not to both at the same time."
)
VARIATION_WITHOUT_ITEM = "You need to select a product if you select a variation."
VARIATION_FOREIGN = "This variation does not belong to this product."
SUBEVENT_NOT_SERIES = "You can not select a subevent if your event is not an event series."
QUOTA_OTHER_DATE = "The quota does not belong to the selected date."
IN_USE = "This voucher can not be deleted as it has already been used."


def invalid_pk(pk: object) -> str:
    return f'Invalid pk "{pk}" - object does not exist.'


def below_redeemed(redeemed: int) -> str:
    return (
        f"This voucher has already been redeemed {redeemed} times. You cannot reduce the "
        "maximum number of usages below this number."
    )


# -- references ----------------------------------------------------------------------------


def _ids(values: Iterable[int | None]) -> set[int]:
    return {v for v in values if v is not None and 1 <= v <= PK_MAX}


@dataclass
class Refs:
    """The event's objects a request refers to, loaded once for all its vouchers."""

    items: dict[int, Item] = field(default_factory=dict)
    variations: dict[int, int] = field(default_factory=dict)  # variation id -> item id
    quotas: dict[int, Quota] = field(default_factory=dict)
    subevents: set[int] = field(default_factory=set)


async def load_refs(session: AsyncSession, event: Event, entries: Sequence[VoucherIn]) -> Refs:
    refs = Refs()
    item_ids = _ids(e.item for e in entries)
    if item_ids:
        found = await session.scalars(
            select(Item).where(Item.event_id == event.id, Item.id.in_(item_ids))
        )
        refs.items = {i.id: i for i in found}
    variation_ids = _ids(e.variation for e in entries)
    if variation_ids:
        rows = await session.execute(
            select(ItemVariation.id, ItemVariation.item_id)
            .join(Item, Item.id == ItemVariation.item_id)
            .where(Item.event_id == event.id, ItemVariation.id.in_(variation_ids))
        )
        refs.variations = dict(rows.all())
    quota_ids = _ids(e.quota for e in entries)
    if quota_ids:
        found = await session.scalars(
            select(Quota).where(Quota.event_id == event.id, Quota.id.in_(quota_ids))
        )
        refs.quotas = {q.id: q for q in found}
    subevent_ids = _ids(e.subevent for e in entries)
    if subevent_ids:
        found_ids = await session.scalars(
            select(SubEvent.id).where(SubEvent.event_id == event.id, SubEvent.id.in_(subevent_ids))
        )
        refs.subevents = set(found_ids)
    return refs


def check_fields(
    event: Event, data: VoucherIn, refs: Refs, voucher: Voucher | None
) -> dict[str, list[str]]:
    """The rules one voucher must follow on its own (no database access)."""
    errors: dict[str, list[str]] = {}
    general: list[str] = []
    if data.item is not None and data.item not in refs.items:
        errors["item"] = [invalid_pk(data.item)]
    if data.variation is not None:
        owner = refs.variations.get(data.variation)
        if owner is None:
            errors["variation"] = [invalid_pk(data.variation)]
        elif data.item is None:
            errors["variation"] = [VARIATION_WITHOUT_ITEM]
        elif owner != data.item:
            errors["variation"] = [VARIATION_FOREIGN]
    quota = refs.quotas.get(data.quota) if data.quota is not None else None
    if data.quota is not None and quota is None:
        errors["quota"] = [invalid_pk(data.quota)]
    if data.quota is not None and (data.item is not None or data.variation is not None):
        general.append(QUOTA_AND_PRODUCT)
    if data.subevent is not None:
        if not event.has_subevents:
            errors["subevent"] = [SUBEVENT_NOT_SERIES]
        elif data.subevent not in refs.subevents:
            errors["subevent"] = [invalid_pk(data.subevent)]
        elif quota is not None and quota.subevent_id != data.subevent:
            errors["quota"] = [QUOTA_OTHER_DATE]
    if data.price_mode == "percent" and data.value > 100:
        errors["value"] = [PERCENT_OVER_100]
    if data.min_usages > data.max_usages:
        general.append(MIN_OVER_MAX)
    if voucher is not None and data.max_usages < voucher.redeemed:
        errors["max_usages"] = [below_redeemed(voucher.redeemed)]
    if general:
        errors[NON_FIELD] = general
    return errors


@dataclass
class Planned:
    """A voucher write that passed validation: its data and what it will hold."""

    data: VoucherIn
    voucher: Voucher | None
    code: str
    change: blocking.Change
    seat_id: int | None = None
    seat_guid: str | None = None


def _target(event: Event, data: VoucherIn, redeemed: int) -> blocking.Target:
    return blocking.Target(
        event_id=event.id,
        has_subevents=event.has_subevents,
        block_quota=data.block_quota,
        valid_until=data.valid_until,
        max_usages=data.max_usages,
        redeemed=redeemed,
        item_id=data.item,
        variation_id=data.variation,
        quota_id=data.quota,
        subevent_id=data.subevent,
    )


def _old_target(event: Event, voucher: Voucher) -> blocking.Target:
    return blocking.Target(
        event_id=event.id,
        has_subevents=event.has_subevents,
        block_quota=voucher.block_quota,
        valid_until=voucher.valid_until,
        max_usages=voucher.max_usages,
        redeemed=voucher.redeemed,
        item_id=voucher.item_id,
        variation_id=voucher.variation_id,
        quota_id=voucher.quota_id,
        subevent_id=voucher.subevent_id,
    )


async def _old_block(
    session: AsyncSession, event: Event, voucher: Voucher, now: dt.datetime
) -> blocking.Block:
    try:
        return await blocking.block_of(session, _old_target(event, voucher), now)
    except blocking.BlockError:
        return blocking.Block()  # an old state that could not block holds nothing


async def plan(
    session: AsyncSession,
    event: Event,
    entries: Sequence[VoucherIn],
    vouchers: Sequence[Voucher | None],
    *,
    now: dt.datetime,
) -> tuple[list[Planned], list[dict[str, Any]]]:
    """Validates every entry (``vouchers[i]`` is the row an update changes, else None).

    Returns the planned writes and one error object per entry (``{}`` when it is fine); the
    writes are only usable when every error object is empty.
    """
    refs = await load_refs(session, event, entries)
    errors = [check_fields(event, d, refs, v) for d, v in zip(entries, vouchers, strict=True)]
    await _check_codes(session, event, entries, vouchers, errors)
    generated = iter(
        await codes.new_codes(session, event.id, sum(1 for d in entries if d.code is None), set())
    )
    planned: list[Planned] = []
    for index, (data, voucher) in enumerate(zip(entries, vouchers, strict=True)):
        code = data.code or (voucher.code if voucher is not None else next(generated))
        redeemed = voucher.redeemed if voucher is not None else 0
        new = blocking.Block()
        if not errors[index]:
            try:
                new = await blocking.block_of(session, _target(event, data, redeemed), now)
            except blocking.BlockError as exc:
                errors[index].setdefault(NON_FIELD, []).append(str(exc))
        old = await _old_block(session, event, voucher, now) if voucher else blocking.Block()
        change = blocking.Change(old, new, checked=not data.allow_ignore_quota)
        planned.append(Planned(data, voucher, code, change))
    if not any(errors):
        await _find_seats(session, event, planned, refs, errors, now)
    return planned, errors


async def _check_codes(
    session: AsyncSession,
    event: Event,
    entries: Sequence[VoucherIn],
    vouchers: Sequence[Voucher | None],
    errors: list[dict[str, Any]],
) -> None:
    wanted = {
        d.code.lower(): v
        for d, v in zip(entries, vouchers, strict=True)
        if d.code is not None and not (v is not None and v.code.lower() == d.code.lower())
    }
    taken = await codes.taken_codes(session, event.id, wanted)
    seen: set[str] = set()
    for index, data in enumerate(entries):
        if data.code is None:
            continue
        key = data.code.lower()
        if key in taken:
            errors[index].setdefault("code", []).append(CODE_TAKEN)
        elif key in seen:
            errors[index].setdefault("code", []).append(CODE_REPEATED)
        seen.add(key)


async def _find_seats(
    session: AsyncSession,
    event: Event,
    planned: list[Planned],
    refs: Refs,
    errors: list[dict[str, Any]],
    now: dt.datetime,
) -> None:
    for index, p in enumerate(planned):
        if p.data.seat is None:
            continue
        seat, problem = await seats.find(
            session,
            event,
            p.data.seat,
            subevent_id=p.data.subevent,
            item=refs.items.get(p.data.item) if p.data.item is not None else None,
            quota_id=p.data.quota,
            max_usages=p.data.max_usages,
        )
        if problem is not None:
            errors[index]["seat"] = [problem]
        else:
            assert seat is not None
            p.seat_id, p.seat_guid = seat.id, seat.seat_guid


async def take_capacity(
    session: AsyncSession,
    planned: Sequence[Planned],
    errors: list[dict[str, Any]],
    now: dt.datetime,
) -> None:
    """Quota for blocking vouchers (quotas locked), then the seats (locked after quotas)."""
    problems = await blocking.ensure_capacity(session, [p.change for p in planned], now)
    for index, message in problems.items():
        errors[index].setdefault(NON_FIELD, []).append(message)
    if problems:
        return
    # All the batch's seats at once, in id order: locking them one by one in batch order
    # could deadlock against a concurrent sale of two of the same seats.
    await seat_claim.lock_seats(session, [p.seat_id for p in planned if p.seat_id is not None])
    seen: dict[int, int] = {}
    for index, p in enumerate(planned):
        if p.seat_id is None:
            continue
        if p.seat_id in seen:
            errors[index]["seat"] = [seats.seat_taken(p.seat_guid or "")]
            continue
        seen[p.seat_id] = index
        own = p.voucher.id if p.voucher is not None else None
        problem = await seats.check_free(session, p.seat_id, p.seat_guid or "", own, now)
        if problem is not None:
            errors[index]["seat"] = [problem]


def apply(voucher: Voucher, p: Planned) -> None:
    data = p.data
    voucher.code = p.code
    voucher.max_usages = data.max_usages
    voucher.min_usages = data.min_usages
    voucher.valid_until = data.valid_until
    voucher.block_quota = data.block_quota
    voucher.allow_ignore_quota = data.allow_ignore_quota
    voucher.price_mode = data.price_mode
    voucher.value = data.value
    voucher.item_id = data.item
    voucher.variation_id = data.variation
    voucher.quota_id = data.quota
    voucher.subevent_id = data.subevent
    voucher.seat_id = p.seat_id
    voucher.tag = data.tag
    voucher.comment = data.comment
    voucher.show_hidden_items = data.show_hidden_items
    voucher.all_addons_included = data.all_addons_included
    voucher.all_bundles_included = data.all_bundles_included
    voucher.budget = data.budget


async def write(
    session: AsyncSession,
    event: Event,
    entries: Sequence[VoucherIn],
    vouchers: Sequence[Voucher | None],
    *,
    many: bool = False,
) -> list[Voucher]:
    """Validates, takes quota and seats, writes: all entries or none (FieldErrors: 400)."""
    now = utcnow()
    planned, errors = await plan(session, event, entries, vouchers, now=now)
    if not any(errors):
        await take_capacity(session, planned, errors, now)
    if any(errors):
        raise FieldErrors(errors if many else errors[0])
    written: list[Voucher] = []
    for p in planned:
        voucher = p.voucher or Voucher(
            event_id=event.id, created=now, redeemed=0, budget_used=Decimal("0.00")
        )
        apply(voucher, p)
        if p.voucher is None:
            session.add(voucher)
        written.append(voucher)
    await session.flush()
    return written


async def delete_voucher(session: AsyncSession, voucher: Voucher) -> None:
    """Refused (403) once redeemed; carts holding the voucher go with it."""
    used = await session.scalar(select(exists().where(OrderPosition.voucher_id == voucher.id)))
    if voucher.redeemed > 0 or used:
        raise APIError(403, IN_USE)
    carts = await session.scalars(
        select(CartPosition).where(
            CartPosition.voucher_id == voucher.id, CartPosition.addon_to_id.is_(None)
        )
    )
    for position in carts.all():
        await delete_position(session, position)
    # Add-ons redeeming the voucher under a parent without it: only the add-on goes.
    nested = await session.scalars(
        select(CartPosition).where(CartPosition.voucher_id == voucher.id)
    )
    for position in nested.all():
        await delete_position(session, position)
    await session.execute(delete(Voucher).where(Voucher.id == voucher.id))
