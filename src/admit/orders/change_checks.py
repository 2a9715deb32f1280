"""Checking an order change before anything is locked or written: which positions and fees
the request names, what each patched position becomes, and the new positions (validated by
order creation's own checks). Every problem is collected and answered at once, nested like the
request (``{"patch_positions": [{}, {"body": {"item": [...]}}]}``), so nothing is half-done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.catalog.questions.answers import CheckedAnswer, check_answers, load_questions, valid_ids
from admit.kit.http.errors import FieldErrors
from admit.models import (
    Event,
    Item,
    ItemVariation,
    Order,
    OrderFee,
    OrderPosition,
    Seat,
    SubEvent,
    TaxRule,
)
from admit.orders import codes
from admit.orders.change_schemas import ChangeIn, NewPosition, PositionChange
from admit.orders.create import Draft, _check_positions, invalid_pk
from admit.orders.schemas import PositionIn
from admit.seating import claim as seating

NOT_LIVE = "Only pending or paid orders can be changed."
EMPTY = "This operation would leave the order empty. Please cancel the order itself instead."
NEEDS_VARIATION = "You need to select a variation of the product."
NO_VARIATIONS = "You cannot specify a variation for this item."
ADDON_BASE = (
    "addon_to must refer to a position of this order that is not an add-on itself and that "
    "is neither canceled nor split off by this change."
)
SPLIT_ADDON = "An add-on can only be split off together with its base position."
SECRET_TAKEN = "You cannot assign a position secret that already exists."


@dataclass
class Target:
    """What one patched position becomes (only ``supplied`` fields change)."""

    position: OrderPosition
    body: PositionChange
    supplied: set[str]
    item: Item
    variation: ItemVariation | None
    subevent_id: int | None
    seat: Seat | None = None
    answers: list[CheckedAnswer] | None = None
    moved_seat: bool = False  # set when the change takes the position to another seat

    @property
    def old_key(self) -> tuple[int, int | None, int | None]:
        p = self.position
        return (p.item_id, p.variation_id, p.subevent_id)

    @property
    def key(self) -> tuple[int, int | None, int | None]:
        return (self.item.id, self.variation.id if self.variation else None, self.subevent_id)

    @property
    def seat_changes(self) -> bool:
        return (self.seat.id if self.seat else None) != self.position.seat_id


@dataclass
class Plan:
    """The checked request: what goes, what moves, what changes, what comes."""

    order: Order
    live: dict[int, OrderPosition]
    cancel: set[int] = field(default_factory=set)
    split: set[int] = field(default_factory=set)
    targets: list[Target] = field(default_factory=list)
    new: list[Draft] = field(default_factory=list)
    new_addon_to: list[int | None] = field(default_factory=list)
    cancel_fees: set[int] = field(default_factory=set)
    fee_values: dict[int, Any] = field(default_factory=dict)
    block: set[int] = field(default_factory=set)
    unblock: set[int] = field(default_factory=set)
    tax_rules: dict[int, TaxRule] = field(default_factory=dict)

    @property
    def staying(self) -> list[OrderPosition]:
        """Live positions that remain in this order."""
        gone = self.cancel | self.split
        return [p for pid, p in self.live.items() if pid not in gone]


def _with_addons(live: dict[int, OrderPosition], ids: set[int]) -> set[int]:
    return ids | {p.id for p in live.values() if p.addon_to_id in ids}


def _refs(entries: list[Any], attr: str, known: dict[int, Any]) -> tuple[set[int], list[dict]]:
    """The ids a list names, and its per-entry errors for ids not among ``known``."""
    found: set[int] = set()
    errors: list[dict[str, Any]] = []
    for entry in entries:
        pk = getattr(entry, attr)
        if pk in known:
            found.add(pk)
            errors.append({})
        else:
            errors.append({attr: [invalid_pk(pk)]})
    return found, errors


async def _by_id(session: AsyncSession, model: Any, event_id: int, ids: set[int], *opts: Any):
    ids = valid_ids(ids)
    if not ids:
        return {}
    query = select(model).where(model.id.in_(ids), model.event_id == event_id).options(*opts)
    return {row.id: row for row in await session.scalars(query)}


async def _seat_guids(session: AsyncSession, seat_ids: set[int]) -> dict[int, str]:
    if not seat_ids:
        return {}
    rows = await session.execute(select(Seat.id, Seat.seat_guid).where(Seat.id.in_(seat_ids)))
    return dict(rows.all())


async def _check_targets(
    session: AsyncSession, event: Event, plan: Plan, data: ChangeIn, errors: dict[str, Any]
) -> None:
    # A patch of a position this change cancels is moot (as in the reference).
    patches = [
        (i, p)
        for i, p in enumerate(data.patch_positions)
        if p.position in plan.live and p.position not in plan.cancel
    ]
    wanted_items = {p.body.item for _, p in patches if p.body.item is not None}
    items = await _by_id(
        session,
        Item,
        event.id,
        wanted_items | {plan.live[p.position].item_id for _, p in patches},
        selectinload(Item.variations),
    )
    subevents = await _by_id(
        session, SubEvent, event.id, {p.body.subevent for _, p in patches if p.body.subevent}
    )
    guids = await _seat_guids(
        session, {s for _, p in patches if (s := plan.live[p.position].seat_id) is not None}
    )
    questions = await load_questions(
        session, event.id, {a.question for _, p in patches for a in p.body.answers or ()}
    )
    secrets = [p.body.secret for _, p in patches if p.body.secret]
    taken = await codes.taken_secrets(session, event.id, secrets)
    wanted_seats: list[tuple[int | None, str | None]] = []
    staged: list[tuple[int, Target, str | None]] = []
    for index, patch in patches:
        position, body = plan.live[patch.position], patch.body
        supplied = set(body.model_fields_set)
        err: dict[str, list[str]] = {}
        item = items.get(body.item if "item" in supplied and body.item else position.item_id)
        if item is None:
            err["item"] = [invalid_pk(body.item)]
        variation_id = body.variation if "variation" in supplied else position.variation_id
        if "item" in supplied and "variation" not in supplied:
            variation_id = None if body.item != position.item_id else position.variation_id
        variation = None
        if item is not None:
            if variation_id is None and item.variations:
                err["variation"] = [NEEDS_VARIATION]
            elif variation_id is not None:
                variation = next((v for v in item.variations if v.id == variation_id), None)
                if not item.variations:
                    err["variation"] = [NO_VARIATIONS]
                elif variation is None:
                    err["variation"] = [invalid_pk(variation_id)]
        subevent_id = position.subevent_id
        if "subevent" in supplied:
            if not event.has_subevents:
                err["subevent"] = ["You cannot set a subevent for this event."]
            elif body.subevent is None or body.subevent not in subevents:
                err["subevent"] = [invalid_pk(body.subevent)]
            else:
                subevent_id = body.subevent
        if "tax_rule" in supplied and body.tax_rule is not None:
            if body.tax_rule not in plan.tax_rules:
                err["tax_rule"] = [invalid_pk(body.tax_rule)]
        if "secret" in supplied and body.secret and body.secret != position.secret:
            if body.secret in taken:
                err["secret"] = [SECRET_TAKEN]
            taken.add(body.secret)
        if item is not None and "answers" in supplied and body.answers is not None:
            checked, answer_errors = check_answers(body.answers, item.id, questions)
            if answer_errors:
                err["answers"] = answer_errors  # type: ignore[assignment]
        else:
            checked = None
        valid_from = body.valid_from if "valid_from" in supplied else position.valid_from
        valid_until = body.valid_until if "valid_until" in supplied else position.valid_until
        if valid_from and valid_until and valid_until < valid_from:
            err["non_field_errors"] = ["valid_until must not be before valid_from."]
        guid = body.seat if "seat" in supplied else guids.get(position.seat_id or 0)
        if err or item is None:
            errors["patch_positions"][index] = {"body": err}
            continue
        target = Target(position, body, supplied, item, variation, subevent_id, answers=checked)
        staged.append((index, target, guid))
        wanted_seats.append((subevent_id, guid))
    refs = await seating.load(session, event, wanted_seats)
    for index, target, guid in staged:
        seat, problem = seating.check(refs, target.item, target.subevent_id, guid)
        # A seat the position keeps may be unavailable to others (blocked later); only a
        # seat it moves to must be free, which the claim checks under the lock.
        if problem and not (seat is None and guid and _keeps_blocked_seat(refs, target, guid)):
            errors["patch_positions"][index] = {"body": {"seat": [problem]}}
            continue
        if seat is None and guid and target.position.seat_id is not None:
            seat = refs.seats.get((target.subevent_id, guid))
        target.seat = seat
        plan.targets.append(target)


def _keeps_blocked_seat(refs: seating.SeatingRefs, target: Target, guid: str) -> bool:
    seat = refs.seats.get((target.subevent_id, guid))
    return (
        seat is not None
        and seat.id == target.position.seat_id
        and seat.blocked
        and seat.product_id == target.item.id
    )


async def _check_new(
    session: AsyncSession, event: Event, plan: Plan, data: ChangeIn, errors: dict[str, Any]
) -> None:
    news: list[NewPosition] = data.create_positions
    if not news:
        return
    as_created = [PositionIn.model_validate(n.model_dump(exclude={"addon_to"})) for n in news]
    base_ok = {
        pid for pid, p in plan.live.items() if p.addon_to_id is None and pid not in plan.cancel
    } - plan.split
    try:
        drafts = await _check_positions(session, event, as_created)
    except FieldErrors as exc:
        drafts = []
        errors["create_positions"] = list(exc.errors["positions"])  # type: ignore[index]
    for index, new in enumerate(news):
        if new.addon_to is not None and new.addon_to not in base_ok:
            errors["create_positions"][index].setdefault("addon_to", []).append(ADDON_BASE)
    for draft, new in zip(drafts, news, strict=False):
        draft.line.is_addon = new.addon_to is not None  # type: ignore[union-attr]
    plan.new = drafts
    plan.new_addon_to = [n.addon_to for n in news]


async def check_change(session: AsyncSession, event: Event, order: Order, data: ChangeIn) -> Plan:
    """The validated plan of a change; raises FieldErrors (400) on any problem."""
    if order.status not in ("n", "p"):
        raise FieldErrors.general(NOT_LIVE)
    live = {p.id: p for p in order.positions if not p.canceled}
    fees: dict[int, OrderFee] = {f.id: f for f in order.fees if not f.canceled}
    rules = {
        r.id: r for r in await session.scalars(select(TaxRule).where(TaxRule.event_id == event.id))
    }
    plan = Plan(order=order, live=live, tax_rules=rules)
    errors: dict[str, Any] = {
        "patch_positions": [{} for _ in data.patch_positions],
        "create_positions": [{} for _ in data.create_positions],
    }
    cancel, errors["cancel_positions"] = _refs(data.cancel_positions, "position", live)
    split, errors["split_positions"] = _refs(data.split_positions, "position", live)
    plan.cancel = _with_addons(live, cancel)
    plan.split = _with_addons(live, split) - plan.cancel
    for index, ref in enumerate(data.split_positions):
        parent = live[ref.position].addon_to_id if ref.position in live else None
        if parent is not None and parent not in plan.split and ref.position not in plan.cancel:
            errors["split_positions"][index] = {"position": [SPLIT_ADDON]}
    _, errors["patch_positions"] = _refs(data.patch_positions, "position", live)
    plan.block, errors["add_block"] = _refs(data.add_block, "position", live)
    plan.unblock, errors["remove_block"] = _refs(data.remove_block, "position", live)
    plan.cancel_fees, errors["cancel_fees"] = _refs(data.cancel_fees, "fee", fees)
    _, errors["patch_fees"] = _refs(data.patch_fees, "fee", fees)
    plan.fee_values = {
        p.fee: p.body.value
        for p in data.patch_fees
        if p.fee in fees and p.fee not in plan.cancel_fees
    }
    await _check_targets(session, event, plan, data, errors)
    await _check_new(session, event, plan, data, errors)
    body = {k: v for k, v in errors.items() if any(v)}
    if body:
        raise FieldErrors(body)
    if not plan.staying and not plan.new:
        raise FieldErrors.general(EMPTY)
    return plan
