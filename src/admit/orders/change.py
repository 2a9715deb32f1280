"""Changing an order after it was placed (``POST E/orders/{code}/change/``): patch, cancel,
add and split positions, patch and cancel fees, recalculate taxes — all or nothing.

Why one service: every part goes through the rules of a sale (order creation's position
checks and pricing, the quota lock and count, the seat claim, voucher usage counts, the sales
ledger), and the request either applies completely or not at all: every check runs before the
first write, and any later refusal (quota, seat) raises inside the request's transaction,
which the route layer then rolls back.

Locks, in the order every sale takes them: the order row (the route), the vouchers of the
positions that go, the quotas (id order), the seats (id order). Two changes of one order
therefore run one after the other, the second on the first one's result.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.questions.answers import to_models
from admit.catalog.taxes.compute import currency_places
from admit.catalog.taxes.rules import Buyer, SaleBlocked, TaxedSale, retax, tax_sale
from admit.db import utcnow
from admit.kit.http.errors import FieldErrors
from admit.models import Answer, Event, Order, OrderFee, OrderPosition, TaxRule
from admit.notifications.notify import (
    ORDER_CHANGED_CANCEL,
    ORDER_CHANGED_SECRET,
    ORDER_CHANGED_VALIDITY,
)
from admit.notifications.types import ORDER_CHANGED_PREFIX
from admit.orders import codes, hooks
from admit.orders.change_checks import Plan, Target, check_change
from admit.orders.change_schemas import ChangeIn
from admit.orders.change_split import settle, split_off
from admit.orders.change_stock import take_quota
from admit.orders.create import _key, build_position
from admit.orders.pricing import TaxBlocked, blocked_message, load_discounts, price_lines
from admit.orders.serialize import attendee_name
from admit.seating import claim as seating
from admit.tickets.secrets import generator as secret_generator
from admit.vouchers import redeem
from admit.vouchers import usage as voucher_usage

ZERO = Decimal("0.00")
MODIFIED = "service.event.order.modified"
# ``service.event.order.changed.*`` members for the kinds of change (the reference's names).
CHANGED_ITEM = ORDER_CHANGED_PREFIX + "item"
CHANGED_SUBEVENT = ORDER_CHANGED_PREFIX + "subevent"
CHANGED_SEAT = ORDER_CHANGED_PREFIX + "seat"
CHANGED_PRICE = ORDER_CHANGED_PREFIX + "price"
CHANGED_TAX_RULE = ORDER_CHANGED_PREFIX + "tax_rule"
CHANGED_ADD = ORDER_CHANGED_PREFIX + "add"
CHANGED_SPLIT = ORDER_CHANGED_PREFIX + "split"
CHANGED_SPLIT_FROM = ORDER_CHANGED_PREFIX + "split_from"
CHANGED_FEE_VALUE = ORDER_CHANGED_PREFIX + "feevalue"
CHANGED_CANCEL_FEE = ORDER_CHANGED_PREFIX + "cancelfee"
CHANGED_TAXES = ORDER_CHANGED_PREFIX + "recalculate_taxes"
CHANGED_BLOCK = ORDER_CHANGED_PREFIX + "block"
CHANGED_UNBLOCK = ORDER_CHANGED_PREFIX + "unblock"
BLOCK_REASON = "admin"
CHANGE_ACTIONS = (
    CHANGED_ITEM,
    CHANGED_SUBEVENT,
    CHANGED_SEAT,
    CHANGED_PRICE,
    CHANGED_TAX_RULE,
    CHANGED_ADD,
    CHANGED_SPLIT,
    CHANGED_SPLIT_FROM,
    CHANGED_FEE_VALUE,
    CHANGED_CANCEL_FEE,
    CHANGED_TAXES,
)
ATTENDEE_FIELDS = ("attendee_email", "company", "street", "zipcode", "city", "country", "state")


@dataclass
class Outcome:
    """The changed order, the order split off (if any) and what each records."""

    order: Order
    split: Order | None = None
    actions: list[str] = field(default_factory=list)
    split_actions: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.actions)


def _blocked(rule: TaxRule | None, exc: SaleBlocked) -> FieldErrors:
    assert rule is not None
    return FieldErrors.general(blocked_message(rule, exc.applied))


def _store(item: OrderPosition | OrderFee, taxed: TaxedSale) -> None:
    if isinstance(item, OrderPosition):
        item.price = taxed.gross
    else:
        item.value = taxed.gross
    item.tax_rate, item.tax_value, item.tax_code = taxed.rate, taxed.tax, taxed.code


def _retax(
    position: OrderPosition | OrderFee, rule: TaxRule | None, buyer: Buyer | None, places: int
) -> None:
    """Tax from the (gross) price and the rule as it applies to the order's invoice address,
    as a price the client sets is taken; 400 when the rule blocks the sale."""
    amount = position.price if isinstance(position, OrderPosition) else position.value
    try:
        _store(position, tax_sale(rule, buyer, amount, gross_given=True, places=places))
    except SaleBlocked as exc:
        raise _blocked(rule, exc) from None


def _recalculate(
    item: OrderPosition | OrderFee,
    rule: TaxRule | None,
    buyer: Buyer | None,
    keep: Literal["keep_net", "keep_gross"],
    places: int,
) -> None:
    """The rate and code the rule applies to the order's invoice address now: ``keep_gross``:
    the price stays and the tax follows; ``keep_net``: the net stays and the gross price is
    rebuilt from it."""
    amount = item.price if isinstance(item, OrderPosition) else item.value
    try:
        _store(item, retax(rule, buyer, amount, item.tax_value, keep=keep, places=places))
    except SaleBlocked as exc:
        raise _blocked(rule, exc) from None


def _stock(plan: Plan) -> tuple[Counter, Counter]:
    """Units the change asks of the quotas and units it gives back."""
    added: Counter = Counter(_key(d.line) for d in plan.new)  # type: ignore[arg-type]
    released: Counter = Counter(
        (p.item_id, p.variation_id, p.subevent_id)
        for pid, p in plan.live.items()
        if pid in plan.cancel
    )
    for t in plan.targets:
        if t.key != t.old_key:
            added[t.key] += 1
            released[t.old_key] += 1
    return added, released


async def _take_seats(session: AsyncSession, plan: Plan, now: dt.datetime) -> None:
    """Frees the seats that positions leave (canceled, or moved to another seat), then claims
    the new ones under the seat locks, so seats can also be swapped within the order."""
    moving = [t for t in plan.targets if t.seat_changes]
    for t in moving:
        t.moved_seat = True
        t.position.seat_id = None
    await session.flush()
    claims = [seating.Claim(t.seat, t.item.id, t.position.voucher_id) for t in moving if t.seat] + [
        seating.Claim(d.seat, d.data.item, None) for d in plan.new if d.seat
    ]
    try:
        await seating.claim(session, claims, now)
    except seating.SeatsUnavailable as exc:
        raise FieldErrors.general(next(iter(exc.problems.values()))) from None
    for t in moving:
        t.position.seat_id = t.seat.id if t.seat else None


async def _patch(
    session: AsyncSession, plan: Plan, t: Target, buyer: Buyer | None, places: int
) -> set[str]:
    """Applies one patch; returns the notification types it amounts to."""
    p, body, supplied = t.position, t.body, t.supplied
    seen: set[str] = set()
    if (t.item.id, t.variation.id if t.variation else None) != (p.item_id, p.variation_id):
        seen.add(CHANGED_ITEM)
        if "tax_rule" not in supplied:  # a new product brings its own tax rule
            p.tax_rule_id = t.item.tax_rule_id
    p.item_id, p.variation_id = t.item.id, t.variation.id if t.variation else None
    if t.subevent_id != p.subevent_id:
        seen.add(CHANGED_SUBEVENT)
        p.subevent_id = t.subevent_id
    if t.moved_seat:
        seen.add(CHANGED_SEAT)
    if "price" in supplied and body.price is not None and body.price != p.price:
        seen.add(CHANGED_PRICE)
        p.price = body.price
    if "tax_rule" in supplied and body.tax_rule != p.tax_rule_id:
        seen.add(CHANGED_TAX_RULE)
        p.tax_rule_id = body.tax_rule
    if seen & {CHANGED_ITEM, CHANGED_PRICE, CHANGED_TAX_RULE}:
        _retax(p, plan.tax_rules.get(p.tax_rule_id) if p.tax_rule_id else None, buyer, places)
    if "secret" in supplied and body.secret and body.secret != p.secret:
        seen.add(ORDER_CHANGED_SECRET)
        p.secret = body.secret
    for name in ("valid_from", "valid_until"):
        if name in supplied and getattr(body, name) != getattr(p, name):
            seen.add(ORDER_CHANGED_VALIDITY)
            setattr(p, name, getattr(body, name))
    if "attendee_name_parts" in supplied or "attendee_name" in supplied:
        parts = (
            dict(body.attendee_name_parts or {})
            if "attendee_name_parts" in supplied
            else ({"_legacy": body.attendee_name} if body.attendee_name else {})
        )
        if parts != (p.attendee_name_parts or {}):
            seen.add(MODIFIED)
            p.attendee_name_parts = parts
            p.attendee_name_cached = attendee_name(parts)
    for name in ATTENDEE_FIELDS:
        if name in supplied and getattr(body, name) != getattr(p, name):
            seen.add(MODIFIED)
            setattr(p, name, getattr(body, name))
    if t.answers is not None:
        seen.add(MODIFIED)
        await session.execute(delete(Answer).where(Answer.orderposition_id == p.id))
        for answer in to_models(t.answers):
            answer.orderposition_id = p.id
            session.add(answer)
    return seen


async def _add(
    session: AsyncSession, event: Event, plan: Plan, buyer: Buyer | None, now: dt.datetime
) -> list[OrderPosition]:
    """Writes the new positions, priced as order creation prices them."""
    if not plan.new:
        return []
    lines = [d.line for d in plan.new]
    discounts = (
        await load_discounts(session, event.id) if any(ln.given is None for ln in lines) else []  # type: ignore[union-attr]
    )
    try:
        priced = price_lines(
            lines,  # type: ignore[arg-type]
            plan.tax_rules,
            discounts,
            currency=event.currency,
            sales_channel=plan.order.sales_channel,
            now=now,
            buyer=buyer,
        )
    except TaxBlocked as exc:
        raise FieldErrors.general(next(iter(exc.messages.values()))) from None
    await secret_generator.prepare(session, event)
    signed = secret_generator.issuer(event)
    unnamed = 0 if signed else sum(1 for d in plan.new if not d.data.secret)
    fresh = iter(await codes.new_ticket_secrets(session, event.id, unnamed))
    next_id = max((p.positionid for p in plan.order.positions), default=0) + 1
    added: list[OrderPosition] = []
    for offset, (draft, price, addon_to) in enumerate(
        zip(plan.new, priced, plan.new_addon_to, strict=True)
    ):
        data = draft.data
        position = build_position(
            draft,
            price,
            order_id=plan.order.id,
            event_id=event.id,
            positionid=next_id + offset,
            secret=data.secret or next(fresh, ""),
            addon_to_id=addon_to,
            valid_from=data.valid_from,
            valid_until=data.valid_until,
        )
        if signed is not None and not data.secret:  # signed for what the ticket is
            position.secret = secret_generator.for_position(signed, position)
        session.add(position)
        added.append(position)
    await session.flush()
    for draft, position in zip(plan.new, added, strict=True):
        for answer in to_models(draft.answers):
            answer.orderposition_id = position.id
            session.add(answer)
    return added


def _fees(plan: Plan, buyer: Buyer | None, places: int) -> list[str]:
    seen: list[str] = []
    for fee in plan.order.fees:
        if fee.id in plan.cancel_fees:
            fee.canceled = True
            seen.append(CHANGED_CANCEL_FEE)
        elif fee.id in plan.fee_values and plan.fee_values[fee.id] != fee.value:
            fee.value = plan.fee_values[fee.id]
            rule = plan.tax_rules.get(fee.tax_rule_id) if fee.tax_rule_id else None
            _retax(fee, rule, buyer, places)
            seen.append(CHANGED_FEE_VALUE)
    return seen


def _blocks(plan: Plan) -> set[str]:
    """``add_block`` / ``remove_block``: the ``admin`` block of the named positions (the
    block list follows in the flush hook of ``tickets/secrets/hooks.py``)."""
    seen: set[str] = set()
    for pid in sorted(plan.block | plan.unblock):
        position = plan.live[pid]
        reasons = set(position.blocked or [])
        if pid in plan.block:
            reasons.add(BLOCK_REASON)
        if pid in plan.unblock:  # both at once: the removal wins, as it comes last
            reasons.discard(BLOCK_REASON)
        if reasons != set(position.blocked or []):
            position.blocked = sorted(reasons) or None
            seen.add(CHANGED_BLOCK if pid not in plan.unblock else CHANGED_UNBLOCK)
    return seen


async def change_order(
    session: AsyncSession, event: Event, order: Order, data: ChangeIn
) -> Outcome:
    """Checks and applies the change to ``order`` (loaded with ``ORDER_LOAD`` and locked);
    raises FieldErrors (400) without having changed anything."""
    now = utcnow()
    places = currency_places(event.currency)
    plan = await check_change(session, event, order, data)
    outcome = Outcome(order)
    going = [plan.live[pid] for pid in sorted(plan.cancel)]
    await redeem.lock_ids(session, {p.voucher_id for p in going if p.voucher_id is not None})
    added, released = _stock(plan)
    await take_quota(session, event.id, added, released, now)
    for position in going:
        position.canceled = True
    await _take_seats(session, plan, now)

    seen: set[str] = {ORDER_CHANGED_CANCEL} if going else set()
    buyer = Buyer.of(order.invoice_address)
    for target in plan.targets:
        seen |= await _patch(session, plan, target, buyer, places)
    new_positions = await _add(session, event, plan, buyer, now)
    if new_positions:
        seen.add(CHANGED_ADD)
    seen.update(_fees(plan, buyer, places))
    seen.update(_blocks(plan))
    if data.recalculate_taxes:
        for position in [*plan.staying, *new_positions]:
            rule = plan.tax_rules.get(position.tax_rule_id) if position.tax_rule_id else None
            _recalculate(position, rule, buyer, data.recalculate_taxes, places)
        for fee in order.fees:
            if not fee.canceled:
                rule = plan.tax_rules.get(fee.tax_rule_id) if fee.tax_rule_id else None
                _recalculate(fee, rule, buyer, data.recalculate_taxes, places)
        seen.add(CHANGED_TAXES)
    if plan.split:
        moving = [plan.live[pid] for pid in sorted(plan.split)]
        outcome.split = await split_off(session, order, moving, now)
        outcome.split_actions = [
            CHANGED_SPLIT_FROM,
            *await settle(session, event, outcome.split, now),
        ]
        seen.add(CHANGED_SPLIT)
    if not seen and not plan.targets:
        return outcome  # nothing asked: the order stays as it was
    kept = [*plan.staying, *new_positions]
    fees = sum((f.value for f in order.fees if not f.canceled), ZERO)
    order.total = sum((p.price for p in kept), ZERO) + fees
    order.last_modified = now
    await voucher_usage.sync(session, [p.voucher_id for p in going])  # locked above
    if new_positions:
        await hooks.run(hooks.order_placed_hooks, session, order, new_positions)
        if order.status == "p":
            await hooks.run(hooks.order_paid_hooks, session, order, new_positions)
    became = await settle(session, event, order, now)
    if became:
        await hooks.run(hooks.order_paid_hooks, session, order, kept)
    hooks.changed(session, order, reissue_invoice=data.reissue_invoice)
    if outcome.split is not None:
        hooks.changed(session, outcome.split, reissue_invoice=data.reissue_invoice)
    outcome.actions = sorted(seen) + became
    return outcome
