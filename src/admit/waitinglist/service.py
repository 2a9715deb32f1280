"""Waiting list rules: who may join the list for what, and sending a voucher to an entry.

Sending a voucher (by hand or by the periodic assignment in ``auto.py``) locks the entry row
first (PostgreSQL ``FOR UPDATE``; SQLite serialises writers), so two concurrent sends on one
entry assign exactly one voucher; the voucher it creates blocks one unit of quota, taken under
the quota lock through :func:`admit.vouchers.blocking.ensure_capacity`.
"""

from __future__ import annotations

import datetime as dt
import functools
from decimal import Decimal
from typing import Any

from sqlalchemy import Integer, bindparam, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.resources.filtering import PK_MAX
from admit.models import (
    Event,
    Item,
    ItemVariation,
    Quota,
    SubEvent,
    Voucher,
    WaitingListEntry,
    WaitingListSettings,
    quota_items,
    quota_variations,
)
from admit.models.waitinglist import DEFAULT_VOUCHER_HOURS
from admit.notifications.notify import notify
from admit.quotas import availability
from admit.vouchers import blocking, codes
from admit.waitinglist.mail import queue_voucher_mail
from admit.waitinglist.schemas import WaitingListEntryIn

VOUCHER_TAG = "waiting-list"
ADDED = "service.event.orders.waitinglist.added"
CHANGED = "service.event.orders.waitinglist.changed"
DELETED = "service.event.orders.waitinglist.deleted"
NOTIFICATION = "service.event.orders.waitinglist.voucher_assigned"

NOT_ALLOWED = "Waiting list entries cannot be created for this product at this time."
AVAILABLE = "This product is currently available."
ALREADY_WAITING = (
    "You are already on this waiting list! We will notify you as soon as we have a ticket "
    "available for you."
)
ALREADY_SENT = "A voucher has already been sent to this person."
UNAVAILABLE = "This product is currently not available."
FROZEN_CHANGE = "You cannot change an entry that has already been transformed into a voucher."
FROZEN_DELETE = "You cannot delete an entry that has already been transformed into a voucher."


def invalid_pk(pk: object) -> str:
    return f'Invalid pk "{pk}" - object does not exist.'


def display_name(parts: dict[str, str]) -> str | None:
    values = [v for k, v in parts.items() if k != "_scheme" and v]
    return " ".join(values) or None


# -- validation ----------------------------------------------------------------------------


async def _references(
    session: AsyncSession, event: Event, data: WaitingListEntryIn
) -> tuple[Item, ItemVariation | None]:
    errors: dict[str, list[str]] = {}
    item = None
    if 1 <= data.item <= PK_MAX:
        item = await session.scalar(
            select(Item).where(Item.id == data.item, Item.event_id == event.id)
        )
    if item is None:
        errors["item"] = [invalid_pk(data.item)]
    variation = None
    if item is not None:
        variations = list(
            await session.scalars(select(ItemVariation).where(ItemVariation.item_id == item.id))
        )
        if data.variation is None and variations:
            errors["variation"] = ["You need to select a variation for the product."]
        elif data.variation is not None:
            variation = next((v for v in variations if v.id == data.variation), None)
            if variation is None:
                errors["variation"] = [
                    "The selected variation does not belong to the selected item."
                ]
    if event.has_subevents:
        if data.subevent is None:
            errors["subevent"] = ["You need to set a subevent."]
        elif not 1 <= data.subevent <= PK_MAX or not await session.scalar(
            select(SubEvent.id).where(SubEvent.id == data.subevent, SubEvent.event_id == event.id)
        ):
            errors["subevent"] = [invalid_pk(data.subevent)]
    elif data.subevent is not None:
        errors["subevent"] = ["You cannot set a subevent for this event."]
    if errors:
        raise FieldErrors(errors)
    assert item is not None
    return item, variation


async def currently_available(
    session: AsyncSession,
    event_id: int,
    key: availability.ProductKey,
    *,
    count_waiting: bool,
    now: dt.datetime | None = None,
) -> bool:
    """Whether the product can be bought right now (every quota has room; with
    ``count_waiting`` the people already waiting take the room first)."""
    quotas = await availability.quotas_for(session, event_id, key)
    if not quotas:
        return False
    numbers = await availability.count(session, quotas, now)
    for quota in quotas:
        state = numbers[quota.id]
        if not state.available:
            return False
        if state.available_number is not None and count_waiting:
            if state.available_number - state.waiting_list <= 0:
                return False
    return True


async def validate_entry(
    session: AsyncSession,
    event: Event,
    data: WaitingListEntryIn,
    entry: WaitingListEntry | None,
) -> None:
    """The spec's rules: 403 when the product takes no entries, 400 when it is available now
    or the address already waits for it."""
    item, variation = await _references(session, event, data)
    key = (item.id, data.variation, data.subevent)
    # A new entry, or one moved to another product or date: may it wait for that one?
    if entry is None or key != (entry.item_id, entry.variation_id, entry.subevent_id):
        if not item.active or not item.allow_waitinglist or (variation and not variation.active):
            raise APIError(403, NOT_ALLOWED)
        if await currently_available(session, event.id, key, count_waiting=True):
            raise FieldErrors.general(AVAILABLE)
    duplicate = select(WaitingListEntry.id).where(
        WaitingListEntry.event_id == event.id,
        WaitingListEntry.item_id == item.id,
        _same(WaitingListEntry.variation_id, data.variation),
        _same(WaitingListEntry.subevent_id, data.subevent),
        func.lower(WaitingListEntry.email) == data.email.lower(),
        WaitingListEntry.voucher_id.is_(None),
    )
    if entry is not None:
        duplicate = duplicate.where(WaitingListEntry.id != entry.id)
    if await session.scalar(duplicate.limit(1)) is not None:
        raise FieldErrors.general(ALREADY_WAITING)


def _same(column: Any, value: int | None) -> Any:
    return column.is_(None) if value is None else column == value


def apply(entry: WaitingListEntry, data: WaitingListEntryIn) -> None:
    parts = data.parts()
    entry.name_parts = parts
    entry.name_cached = display_name(parts)
    entry.email = data.email
    entry.phone = data.phone
    entry.item_id = data.item
    entry.variation_id = data.variation
    entry.locale = data.locale
    entry.subevent_id = data.subevent
    entry.priority = data.priority


def to_read(entry: WaitingListEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "created": entry.created,
        "name": entry.name_cached,
        "name_parts": entry.name_parts or {},
        "email": entry.email,
        "phone": entry.phone,
        "voucher": entry.voucher_id,
        "item": entry.item_id,
        "variation": entry.variation_id,
        "locale": entry.locale,
        "subevent": entry.subevent_id,
        "priority": entry.priority,
    }


# -- settings ------------------------------------------------------------------------------


async def settings_of(session: AsyncSession, event_id: int) -> WaitingListSettings:
    """The event's settings (defaults when none were stored: not added to the session)."""
    found = await session.get(WaitingListSettings, event_id)
    if found is not None:
        return found
    return WaitingListSettings(
        event_id=event_id, auto_assign=False, voucher_hours=DEFAULT_VOUCHER_HOURS
    )


# -- sending vouchers ----------------------------------------------------------------------


class NotAvailable(Exception):
    """The entry's product has no free unit to block right now."""


async def lock_entry(session: AsyncSession, entry_id: int, event_id: int) -> WaitingListEntry:
    """The entry, locked until commit (409 past the lock timeout, see ``kit.http.errors``)."""
    query = (
        select(WaitingListEntry)
        .where(WaitingListEntry.id == entry_id, WaitingListEntry.event_id == event_id)
        .execution_options(populate_existing=True)
    )
    found = (await session.scalars(query.with_for_update())).first()
    if found is None:
        raise APIError(404, "Not found.")
    return found


async def assign_voucher(
    session: AsyncSession,
    event: Event,
    entry: WaitingListEntry,
    now: dt.datetime | None = None,
    base_url: str | None = None,
) -> Voucher:
    """Creates a single-use voucher blocking one unit of the entry's product, assigns it,
    queues the e-mail (its shop link starts with ``base_url``) and records the notification.
    ``entry`` must be locked.

    Raises :class:`NotAvailable` when no unit is free (the quotas stay locked until the
    transaction ends)."""
    now = now or utcnow()
    settings = await settings_of(session, event.id)
    key = (entry.item_id, entry.variation_id, entry.subevent_id)
    quotas = await availability.quotas_for(session, event.id, key)
    if not quotas:
        raise NotAvailable
    block = blocking.Block(frozenset(q.id for q in quotas), 1)
    problems = await blocking.ensure_capacity(
        session, [blocking.Change(blocking.Block(), block)], now
    )
    if problems:
        raise NotAvailable
    [code] = await codes.new_codes(session, event.id, 1, set())
    voucher = Voucher(
        event_id=event.id,
        created=now,
        code=code,
        max_usages=1,
        min_usages=1,
        redeemed=0,
        valid_until=now + dt.timedelta(hours=settings.voucher_hours),
        block_quota=True,
        allow_ignore_quota=False,
        price_mode="none",
        value=Decimal("0.00"),
        item_id=entry.item_id,
        variation_id=entry.variation_id,
        subevent_id=entry.subevent_id,
        tag=VOUCHER_TAG,
        comment=f"Sent to the waiting list entry of {entry.email}.",
        show_hidden_items=True,
        all_addons_included=False,
        all_bundles_included=False,
        budget_used=Decimal("0.00"),
    )
    session.add(voucher)
    await session.flush()
    entry.voucher_id = voucher.id
    await queue_voucher_mail(session, event, entry, voucher, base_url)
    await notify_entry(session, entry, NOTIFICATION, event.organizer_id, voucher=voucher.id)
    await session.flush()  # the entry's voucher: later queries of this session count it
    return voucher


async def notify_entry(
    session: AsyncSession,
    entry: WaitingListEntry,
    action: str,
    organizer_id: int,
    **extra: Any,
) -> None:
    """Records a waiting list notification (payload: the entry's id, plus ``extra``) in the
    session's transaction."""
    await notify(
        session,
        action,
        organizer_id=organizer_id,
        event_id=entry.event_id,
        waitinglistentry=entry.id,
        **extra,
    )


async def send_voucher(
    session: AsyncSession, event: Event, entry_id: int, base_url: str | None = None
) -> None:
    """The ``send_voucher`` action: 400 with details when already sent or unavailable."""
    entry = await lock_entry(session, entry_id, event.id)
    if entry.voucher_id is not None:
        raise FieldErrors.general(ALREADY_SENT)
    try:
        await assign_voucher(session, event, entry, base_url=base_url)
    except NotAvailable:
        raise FieldErrors.general(UNAVAILABLE) from None


# -- the per-quota waiting count -----------------------------------------------------------


def _waiting_for(n: int, dated: bool) -> Any:
    """How many wait for the products of quota number ``n`` of a statement (parameters
    ``q<n>``, ``e<n>`` and, for a quota of a date, ``s<n>``): a count over a range of the
    covering index."""
    entry = WaitingListEntry
    quota_id = bindparam(f"q{n}", type_=Integer)
    items = select(quota_items.c.item_id).where(quota_items.c.quota_id == quota_id)
    variations = select(quota_variations.c.variation_id).where(
        quota_variations.c.quota_id == quota_id
    )
    date = (
        entry.subevent_id == bindparam(f"s{n}", type_=Integer)
        if dated
        else entry.subevent_id.is_(None)
    )
    return (
        select(func.count())
        .select_from(entry)
        .where(
            entry.event_id == bindparam(f"e{n}", type_=Integer),
            entry.item_id.in_(items),
            or_(entry.variation_id.is_(None), entry.variation_id.in_(variations)),
            date,
            entry.voucher_id.is_(None),
        )
        .scalar_subquery()
    )


@functools.lru_cache(maxsize=64)
def _waiting_query(shape: tuple[bool, ...]) -> Any:
    """One statement for quotas of this shape (which of them belong to a date), built once:
    building a statement costs more than running this one."""
    return select(*(_waiting_for(n, dated) for n, dated in enumerate(shape)))


async def count_waiting(
    session: AsyncSession, quotas: list[Quota], now: dt.datetime
) -> dict[int, int]:
    """People waiting (no voucher yet) for each quota's products, all quotas in one round
    trip; each count reads the covering index only, never the entries themselves."""
    if not quotas:
        return {}
    shape = tuple(q.subevent_id is not None for q in quotas)
    params: dict[str, int | None] = {}
    for n, quota in enumerate(quotas):
        params.update({f"q{n}": quota.id, f"e{n}": quota.event_id})
        if quota.subevent_id is not None:
            params[f"s{n}"] = quota.subevent_id
    row = (await session.execute(_waiting_query(shape), params)).one()
    return {quota.id: int(count or 0) for quota, count in zip(quotas, row, strict=True)}


def register() -> None:
    """Reports the waiting list in quota availability (informational, not subtracted)."""
    availability.informational_counters["waiting_list"] = count_waiting
