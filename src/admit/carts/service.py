"""Cart positions created through the API: quota placeholders with add-ons and answers.

The API trusts the given price and does not check sale windows, vouchers-only products or add-on
constraints (the spec says so). It does check every reference and the answers
(:mod:`admit.carts.planning`) and, above all, the quota: a request (parent, add-ons and bundled
positions together) takes its capacity through ``availability.reserve`` once, before anything
is written, so it is all-or-nothing and never oversells. ``bulk_create`` handles each entry on
its own in a SAVEPOINT.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy import delete, insert
from sqlalchemy.ext.asyncio import AsyncSession

from admit.carts.planning import Planned, load_refs, plan
from admit.carts.render import checked_answer_dicts, render
from admit.carts.schemas import CartPositionIn
from admit.catalog.questions.answers import CheckedAnswer
from admit.kit.http.errors import NON_FIELD, APIError, FieldErrors, validation_error
from admit.models import Answer, CartPosition, Event, Item, answer_options
from admit.quotas import availability, ledger
from admit.quotas.availability import NoQuota, ProductKey, QuotaExceeded
from admit.seating import claim as seating
from admit.seating.render import position_seat
from admit.vouchers import sales as voucher_sales

RESERVATION_TIME = dt.timedelta(minutes=30)


def new_cart_id() -> str:
    """48 URL-safe characters (288 random bits) and the ``@api`` suffix; one call to the
    CSPRNG instead of one per character."""
    return secrets.token_urlsafe(36) + "@api"


def _error_at(where: tuple[str, int] | None, message: str) -> dict[str, Any]:
    if where is None:
        return {NON_FIELD: [message]}
    name, index = where
    return {name: [{} for _ in range(index)] + [{NON_FIELD: [message]}]}


def _product_name(item: Item) -> str:
    names = item.name or {}
    return names.get("en") or next(iter(names.values()), str(item.id))


async def reserve(
    session: AsyncSession, event: Event, planned: Sequence[Planned], now: dt.datetime
) -> None:
    """Takes the quota for all positions at once; 400 when a product lacks quota."""
    await voucher_sales.for_cart(session, event, planned, now)  # vouchers before quotas
    wanted: Counter[ProductKey] = Counter(p.key for p in planned if not p.quota_exempt)
    try:
        await availability.reserve(session, event.id, wanted, now=now)
    except NoQuota as exc:
        key = exc.args[0]
        culprit = next(p for p in planned if p.key == key)
        message = f'The product "{_product_name(culprit.item)}" is not assigned to a quota.'
        raise FieldErrors(_error_at(culprit.where, message)) from None
    except QuotaExceeded as exc:
        raise FieldErrors.general(exc.message) from None
    claims = [seating.Claim(p.seat, p.item.id, p.voucher_id) if p.seat else None for p in planned]
    try:
        await seating.claim(session, claims, now)  # after the quotas: the lock order
    except seating.SeatsUnavailable as exc:
        raise FieldErrors(seating.errors_at([p.where for p in planned], exc.problems)) from None


def _new_position(
    event: Event, p: Planned, cart_id: str, expires: dt.datetime, channel: str, now: dt.datetime
) -> CartPosition:
    return CartPosition(
        event_id=event.id,
        cart_id=cart_id,
        datetime=now,
        expires=expires,
        item_id=p.item.id,
        variation_id=p.data.variation,
        subevent_id=p.subevent_id,
        price=p.data.price,
        attendee_name_parts=p.name_parts,
        attendee_email=p.data.attendee_email,
        voucher_id=p.voucher_id,
        addon_to_id=None,
        is_bundled=p.is_bundled,
        seat_id=p.seat.id if p.seat else None,
        sales_channel=channel,
        includes_tax=p.data.includes_tax is not False,
    )


async def _write_answers(
    session: AsyncSession, written: list[tuple[CartPosition, Planned]]
) -> None:
    stored: list[tuple[Answer, CheckedAnswer]] = []
    for pos, p in written:
        for checked in p.answers:
            row = Answer(
                cartposition_id=pos.id, question_id=checked.question.id, answer=checked.answer
            )
            stored.append((row, checked))
    if not stored:
        return
    session.add_all([row for row, _ in stored])
    await session.flush()
    links = [{"answer_id": row.id, "option_id": o.id} for row, c in stored for o in c.options]
    if links:
        await session.execute(insert(answer_options), links)


async def write(
    session: AsyncSession,
    event: Event,
    data: CartPositionIn,
    planned: list[Planned],
    now: dt.datetime,
) -> dict[str, Any]:
    """Inserts the checked positions (quota already reserved) and renders the result."""
    cart_id = data.cart_id or new_cart_id()
    expires = data.expires or now + RESERVATION_TIME
    parent_plan, children_plans = planned[0], planned[1:]
    parent = _new_position(event, parent_plan, cart_id, expires, data.sales_channel, now)
    session.add(parent)
    await session.flush()
    children = []
    for p in children_plans:
        child = _new_position(event, p, cart_id, expires, data.sales_channel, now)
        child.addon_to_id = parent.id
        children.append(child)
    if children:
        session.add_all(children)
        await session.flush()
    written = list(zip([parent, *children], planned, strict=True))
    await ledger.carts_added(session, [_ledger_key(pos) for pos, _ in written])
    await _write_answers(session, written)
    child_answers = {c.id: checked_answer_dicts(p.answers) for c, p in written[1:]}
    seats = {p.seat.id: position_seat(p.seat) for p in planned if p.seat}
    return render(parent, checked_answer_dicts(parent_plan.answers), children, child_answers, seats)


async def create(
    session: AsyncSession, event: Event, data: CartPositionIn, *, now: dt.datetime | None = None
) -> dict[str, Any]:
    """One create request: check, reserve quota, write. Raises FieldErrors (400)."""
    now = now or dt.datetime.now(dt.UTC)
    refs = await load_refs(session, event, [data])
    planned = plan(event, data, refs, now)
    await reserve(session, event, planned, now)
    return await write(session, event, data, planned, now)


def _parse_entry(raw: Any) -> CartPositionIn:
    if not isinstance(raw, dict):
        kind = "list" if isinstance(raw, list) else type(raw).__name__
        raise FieldErrors.general(f"Invalid data. Expected a dictionary, but got {kind}.")
    try:
        return CartPositionIn.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc) from None


async def _prelock(session: AsyncSession, event: Event, plans: Iterable[list[Planned]]) -> None:
    """Locks every quota the batch may touch in one id-ordered step: entries locking their
    quotas one after another could deadlock against a concurrent batch."""
    keys = {p.key for planned in plans for p in planned}
    quota_ids = set()
    for key in keys:
        quota_ids |= {q.id for q in await availability.quotas_for(session, event.id, key)}
    await availability.lock(session, quota_ids)
    await seating.lock_seats(session, {p.seat.id for planned in plans for p in planned if p.seat})


async def bulk_create(
    session: AsyncSession, event: Event, entries: Sequence[Any], *, now: dt.datetime | None = None
) -> list[dict[str, Any]]:
    """Each entry on its own: one failing entry leaves the others (and their quota) in place."""
    now = now or dt.datetime.now(dt.UTC)
    parsed: list[CartPositionIn | FieldErrors] = []
    for raw in entries:
        try:
            parsed.append(_parse_entry(raw))
        except FieldErrors as exc:
            parsed.append(exc)
    refs = await load_refs(session, event, [e for e in parsed if isinstance(e, CartPositionIn)])
    plans: list[list[Planned] | FieldErrors] = []
    for entry in parsed:
        if isinstance(entry, FieldErrors):
            plans.append(entry)
            continue
        try:
            plans.append(plan(event, entry, refs, now))
        except FieldErrors as exc:
            plans.append(exc)
    await voucher_sales.lock_cart_batch(session, event, parsed)  # vouchers before quotas
    await _prelock(session, event, [p for p in plans if isinstance(p, list)])
    results: list[dict[str, Any]] = []
    for entry, planned in zip(parsed, plans, strict=True):
        if isinstance(planned, FieldErrors):
            results.append({"success": False, "errors": planned.errors, "data": None})
            continue
        assert isinstance(entry, CartPositionIn)
        try:
            async with session.begin_nested():
                await reserve(session, event, planned, now)
                body = await write(session, event, entry, planned, now)
        except FieldErrors as exc:
            results.append({"success": False, "errors": exc.errors, "data": None})
        except APIError as exc:
            results.append({"success": False, "errors": {NON_FIELD: [exc.detail]}, "data": None})
        else:
            results.append({"success": True, "errors": None, "data": body})
    return results


def _ledger_key(pos: CartPosition) -> ledger.Key:
    return ledger.key_of(pos.item_id, pos.variation_id, pos.subevent_id)


_DELETED_KEYS = (CartPosition.item_id, CartPosition.variation_id, CartPosition.subevent_id)


async def _delete_counted(session: AsyncSession, *where: Any) -> int:
    """Deletes cart rows and takes them out of the sales ledger; returns how many."""
    rows = (
        await session.execute(
            delete(CartPosition)
            .where(*where)
            .returning(*_DELETED_KEYS)
            .execution_options(synchronize_session=False)
        )
    ).all()
    await ledger.carts_removed(session, [ledger.key_of(*row) for row in rows])
    return len(rows)


async def delete_position(session: AsyncSession, position: CartPosition) -> bool:
    """Removes a position with its add-ons and bundled positions (answers go with them);
    False when the position was gone already (another transaction deleted it first: the
    DELETE waited for that one's row lock, then found nothing)."""
    await _delete_counted(session, CartPosition.addon_to_id == position.id)
    return bool(await _delete_counted(session, CartPosition.id == position.id))


async def delete_taken_over(session: AsyncSession, ids: list[int]) -> None:
    """Deletes cart rows an order took over (locked by its transaction); their units leave
    the sales ledger right before the commit, with the order's own (``ledger.defer``)."""
    removed: Counter[ledger.Key] = Counter()
    # Add-ons first: rows removed by the foreign key cascade would not be counted.
    for is_addon in (CartPosition.addon_to_id.is_not(None), CartPosition.addon_to_id.is_(None)):
        rows = (
            await session.execute(
                delete(CartPosition)
                .where(CartPosition.id.in_(ids), is_addon)
                .returning(*_DELETED_KEYS)
                .execution_options(synchronize_session=False)
            )
        ).all()
        removed.update(ledger.key_of(*row) for row in rows)
    ledger.defer(session, {k: (0, 0, -n) for k, n in removed.items()})


async def purge_expired(session: AsyncSession, now: dt.datetime) -> int:
    """Deletes expired cart positions (every cart, not only API ones); returns how many.

    Expired positions already stopped counting against quota the moment they expired
    (``availability.count`` only counts unexpired ones); this only reclaims the rows. Meant
    to run periodically from a scheduler.
    """
    total = 0
    # Add-ons first: rows removed by the foreign key cascade would not be counted.
    for is_addon in (CartPosition.addon_to_id.is_not(None), CartPosition.addon_to_id.is_(None)):
        total += await _delete_counted(session, CartPosition.expires < now, is_addon)
    return total
