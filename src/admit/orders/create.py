"""Creating an order through the API, the general path: validate every position, price it,
take quota, write.

Every order the fast lane (``orders/lane.py``) does not take comes here: vouchers, seats,
memberships, simulations, orders whose hooks have work to do, and every invalid request. The
checks are the shared ones (``drafts.check_positions``, ``pricing.price_order``), the rows
the shared ones (``rows.build``), so both paths write the same order for the same request.

All checks that can fail run before quota is taken; :func:`admit.quotas.availability.reserve`
locks the quotas of every position at once right before the rows are inserted, so the lock is
held only for the inserts and the commit.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from admit.customers import membership_rules
from admit.db import utcnow
from admit.kit.http.errors import FieldErrors
from admit.kit.http.transaction import before_commit
from admit.models import Event, OrderPosition, TaxRule
from admit.notifications.notify import notify_all
from admit.orders import codes, customer_link, hooks, order_fields, validity
from admit.orders.created import order_snapshot
from admit.orders.drafts import (
    Draft,
    check_positions,
    checked_positions,
    invalid_pk,
    key_of,
    load_refs,
)
from admit.orders.pricing import (
    Line,
    load_discounts,
    load_tax_rules,
    needs_discounts,
    price_order,
)
from admit.orders.quota import quota_errors
from admit.orders.rows import (
    PAYMENT_TERM_DAYS,
    NewOrder,
    Written,
    build,
    default_expires,
    position_values,
    write,
)
from admit.orders.schemas import FeeIn, OrderIn
from admit.quotas import ledger
from admit.quotas.availability import NoQuota, QuotaExceeded, reserve
from admit.seating import claim as seating
from admit.tickets.secrets import generator as secret_generator
from admit.vouchers import redeem
from admit.vouchers import sales as voucher_sales
from admit.vouchers import usage as voucher_usage

__all__ = [
    "PAYMENT_TERM_DAYS",
    "Draft",
    "Placed",
    "_check_positions",
    "_key",
    "build_position",
    "create_order",
    "default_expires",
    "invalid_pk",
]

# Order changes validate new positions as creation does.
_check_positions = checked_positions
_key = key_of


def build_position(draft: Any, price: Any, **fields: Any) -> OrderPosition:
    """A new position from a checked draft and its price (order changes add positions so)."""
    fields.setdefault("web_secret", codes.web_secret())
    fields.setdefault("pseudonymization_id", codes.pseudonymization_id())
    return OrderPosition(**position_values(draft, price, **fields))


@dataclass
class Placed:
    """A created order: its rows and their ids."""

    new: NewOrder
    written: Written

    @property
    def code(self) -> str:
        return self.written.code


@dataclass
class Held:
    """Units the caller's cart rows hold for this order (a shop checkout): ``units`` per
    product, held until ``until`` (the earliest expiry), the rows taken over in this
    transaction (``shop/checkout.py``)."""

    units: dict[tuple[int, int | None, int | None], int]
    until: dt.datetime


# Fees that depend on the priced total (a payment method's fee): the total and the event's tax
# rules in, the fees to add out.
FeesFor = Callable[[Decimal, Mapping[int, TaxRule]], list[FeeIn]]


async def create_order(
    session: AsyncSession,
    event: Event,
    data: OrderIn,
    *,
    held: Held | None = None,
    fees: FeesFor | None = None,
) -> Placed:
    """Validates, prices, reserves quota and writes the order with its notifications
    (flushed, not committed). With ``held`` units that cover the order exactly, no quota is
    locked: see :func:`_takes_over`. ``fees`` adds fees computed from the priced total (the
    shop's payment fee): the order is priced again with them, before anything is written."""
    now = utcnow()
    customer_id = await customer_link.resolve(session, event.organizer_id, data.customer)
    order_fields.check_create(data)
    # Secrets for the positions that name none, checked with the named ones in one query
    # (a signed event signs its secrets once the rows are built, with its key loaded here).
    await secret_generator.prepare(session, event)
    unnamed = (
        0 if secret_generator.is_signed(event) else sum(1 for p in data.positions if not p.secret)
    )
    fresh = codes.ticket_secrets(unnamed)
    refs = await load_refs(session, event, data.positions, fresh)
    drafts = check_positions(event, data.positions, refs)
    fresh = await _untaken(session, event.id, fresh, refs.taken_secrets)
    windows = validity.windows(event, drafts, now)
    testmode = event.testmode if data.testmode is None else data.testmode
    memberships = await membership_rules.check_order(
        session, event, customer_id, testmode, drafts, windows
    )
    # Read before the vouchers are locked: every statement after that holds up their sales.
    rules = await load_tax_rules(session, event.id)
    lines: list[Line] = [d.line for d in drafts]  # type: ignore[misc]
    discounts = await load_discounts(session, event.id) if needs_discounts(lines) else []
    uses = await voucher_sales.for_order(session, event, drafts, now)  # locks the vouchers
    priced = price_order(event, data, lines, rules, discounts, now)
    if fees is not None and (more := fees(priced.total, rules)):
        data = data.model_copy(update={"fees": [*data.fees, *more]})
        priced = price_order(event, data, lines, rules, discounts, now)
    new = build(
        event,
        data,
        drafts,
        priced,
        windows=windows,
        memberships=memberships,
        uses=uses,
        customer_id=customer_id,
        testmode=testmode,
        now=now,
        secrets=fresh,
    )

    keys = [p.key for p in new.positions]
    # The quota lock is held from reserve() to the commit, and every sale of the product waits
    # for it: an order without vouchers or seats writes everything first and takes the lock
    # last (its own rows are not in the sales ledger before then, so the count is the same).
    # Vouchers and seats move units between holders as they are written, so those orders
    # check first.
    plain = not any(uses) and not any(d.seat for d in drafts)
    if not plain:
        await _take_quota_and_seats(session, event, data, drafts, uses, keys, lines, now)
    written = await write(session, new)
    voucher_usage.record(uses)
    order = order_snapshot(new, written)
    placed = list(order.positions)
    await hooks.run(hooks.order_placed_hooks, session, order, placed)
    if new.paid:
        await hooks.run(hooks.order_paid_hooks, session, order, placed)
    await notify_all(
        session,
        new.actions,
        organizer_id=event.organizer_id,
        event_id=event.id,
        code=written.code,
    )
    if (
        plain
        and held is not None
        and _takes_over(held, keys, data, now)
        and await _check_quota_unlocked(session, event, keys, lines, now)
    ):
        ledger.defer(session, new.ledger_deltas())
        before_commit(session, "held-units", _still_held(held.until))
        return Placed(new, written)
    if plain:
        await _take_quota_and_seats(session, event, data, drafts, uses, keys, lines, now)
    # After the quota check (which would count the order twice otherwise), and last: from
    # here to the commit every sale of these products waits for this one.
    await ledger.apply(session, new.ledger_deltas())
    return Placed(new, written)


# A cart's units are taken over without the quota lock only when they stay held this much
# longer: far beyond what a request waits for a lock (``db.LOCK_TIMEOUT``) before its commit.
HELD_MARGIN = dt.timedelta(minutes=2)
COMMIT_MARGIN = dt.timedelta(seconds=30)
TOO_SLOW = "Your reservation ran out while the order was being placed. Please try again."


def _takes_over(held: Held, keys: list[Any], data: OrderIn, now: dt.datetime) -> bool:
    """Whether the order only turns units its cart holds into positions, one for one.

    Such an order changes no quota's count: its cart rows (locked, taken over in this
    transaction) count as taken for every other transaction until this one commits, and
    its positions count from then on. No quota lock is needed while the rows are still held
    at the commit (checked right before it, :func:`_still_held`); a cart about to expire
    takes the general path, which locks and counts."""
    if data.force or held.until - now < HELD_MARGIN:
        return False
    wanted: dict[Any, int] = {}
    for key in keys:
        wanted[key] = wanted.get(key, 0) + 1
    return wanted == dict(held.units)


async def _check_quota_unlocked(
    session: AsyncSession, event: Event, keys: list[Any], lines: list[Any], now: dt.datetime
) -> bool:
    """The quota check without the lock: not for the count (the held units settle that),
    for what an organizer changed since the cart was filled (a quota closed or made
    smaller than what is sold): such an order is refused as the general path refuses it.
    False for a quota that closes when sold out: the general path closes it."""
    demand: dict[Any, int] = {}
    for key in keys:
        demand[key] = demand.get(key, 0) + 1
    try:
        found = await reserve(session, event.id, demand, now=now, locked=False)
    except (NoQuota, QuotaExceeded) as exc:
        raise FieldErrors(
            {"positions": await quota_errors(session, event.id, keys, lines, exc)}
        ) from None
    return not any(q.close_when_sold_out for quotas in found.values() for q in quotas)


def _still_held(until: dt.datetime) -> Any:
    async def check(_session: AsyncSession) -> None:
        if utcnow() + COMMIT_MARGIN >= until:
            raise FieldErrors.general(TOO_SLOW)

    return check


async def _untaken(
    session: AsyncSession, event_id: int, fresh: list[str], taken: set[str]
) -> list[str]:
    """``fresh`` with the (rarely) taken ones replaced."""
    if not taken.intersection(fresh):
        return fresh
    kept = [s for s in fresh if s not in taken]
    more = await codes.new_ticket_secrets(session, event_id, len(fresh) - len(kept), kept)
    return kept + more


async def _take_quota_and_seats(
    session: AsyncSession,
    event: Event,
    data: OrderIn,
    drafts: list[Any],
    uses: list[Any],
    keys: list[tuple[int, int | None, int | None]],
    lines: list[Any],
    now: dt.datetime,
) -> None:
    """Locks and checks the quotas (then the seats: the lock order); 400 when short."""
    try:
        await redeem.lock_for_exempt(session, event.id, keys, uses)
        demand = redeem.demand(keys, uses)  # quota-exempt voucher positions take none
        await reserve(session, event.id, demand, now=now, ignore_quota=data.force)
    except (NoQuota, QuotaExceeded) as exc:
        raise FieldErrors(
            {"positions": await quota_errors(session, event.id, keys, lines, exc)}
        ) from None
    claims = [
        seating.Claim(d.seat, d.data.item, u.voucher.id if u else None) if d.seat else None
        for d, u in zip(drafts, uses, strict=True)
    ]
    try:
        await seating.claim(session, claims, now)  # after the quotas: the lock order
    except seating.SeatsUnavailable as exc:
        per_position = [
            {"seat": [exc.problems[i]]} if i in exc.problems else {} for i in range(len(drafts))
        ]
        raise FieldErrors({"positions": per_position}) from None
