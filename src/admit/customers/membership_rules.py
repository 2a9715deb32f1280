"""Memberships at sale: items that require one are sold only against a valid membership of the
order's customer, and items that grant one create it when the order is paid.

Checking (:func:`check_order`) locks the memberships named by the order (PostgreSQL: ``FOR
UPDATE`` until commit), so two orders racing for the last use of a membership (``max_usages``)
or for the same date (no ``allow_parallel_usage``) are decided one after the other. Orders
without such items pay one ``if`` and no query.

Granting (:func:`grant_for_paid_order`) runs as an ``order_paid_hooks`` hook in the order's
transaction; a membership records the ticket that granted it (``granted_in_id``, unique), so
paying again after a reactivation grants nothing twice.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.errors import FieldErrors
from admit.models import (
    Event,
    Item,
    Membership,
    MembershipType,
    Order,
    OrderPosition,
    SubEvent,
    item_required_membership_types,
)
from admit.orders import hooks
from admit.orders.validity import Window, add_months

SAME_TIME = dt.timedelta(minutes=1)  # two dates closer than this are the same event time


async def type_used_by_items(session: AsyncSession, type_id: int) -> bool:
    """Whether an item grants or requires the type (then the type cannot be deleted)."""
    granted = await session.scalar(
        select(Item.id).where(Item.grant_membership_type_id == type_id).limit(1)
    )
    if granted is not None:
        return True
    required = await session.scalar(
        select(item_required_membership_types.c.item_id)
        .where(item_required_membership_types.c.membership_type_id == type_id)
        .limit(1)
    )
    return required is not None


@dataclass
class _Use:
    """What is known about one membership while the order's positions are checked."""

    membership: Membership
    type: MembershipType
    usages: int
    dates: list[dt.datetime] = field(default_factory=list)
    ranges: list[Window] = field(default_factory=list)


def _label(item: Item) -> str:
    name = item.name or {}
    return name.get("en") or next(iter(name.values()), str(item.id))


async def _load_uses(
    session: AsyncSession, organizer_id: int, ids: set[int], *, lock: bool = True
) -> dict[int, _Use]:
    if not ids:
        return {}
    query = (
        select(Membership, MembershipType)
        .join(MembershipType, MembershipType.id == Membership.membership_type_id)
        .where(Membership.id.in_(ids), Membership.organizer_id == organizer_id)
        .order_by(Membership.id)
    )
    rows = await session.execute(query.with_for_update(of=Membership) if lock else query)
    uses = {m.id: _Use(m, t, 0) for m, t in rows}
    if not uses:
        return uses
    event_date = func.coalesce(SubEvent.date_from, Event.date_from)
    taken = await session.execute(
        select(
            OrderPosition.used_membership_id,
            OrderPosition.valid_from,
            OrderPosition.valid_until,
            event_date,
        )
        .join(Order, Order.id == OrderPosition.order_id)
        .join(Event, Event.id == Order.event_id)
        .outerjoin(SubEvent, SubEvent.id == OrderPosition.subevent_id)
        .where(
            OrderPosition.used_membership_id.in_(list(uses)),
            OrderPosition.canceled.is_(False),
            Order.status != "c",
        )
    )
    for membership_id, start, end, when in taken:
        use = uses[membership_id]
        use.usages += 1
        if start is not None or end is not None:
            use.ranges.append((start, end))
        else:
            use.dates.append(when)
    return uses


def _problem(
    use: _Use | None,
    item: Item,
    types: set[int],
    customer_id: int | None,
    testmode: bool,
    when: dt.datetime,
    window: Window,
) -> str | None:
    """Why the membership cannot pay for this ticket, or None (and the use is counted)."""
    if use is None:
        return "The selected membership does not exist."
    m, mtype = use.membership, use.type
    if customer_id is None or m.customer_id != customer_id:
        return "You selected a membership that is connected to a different customer account."
    if m.canceled:
        return "You selected a membership that has been canceled."
    if m.testmode != testmode:
        return (
            "You can not use a test mode membership for tickets that are not in test mode."
            if m.testmode
            else "You need a test mode membership to buy tickets in test mode."
        )
    moment = window[0] or when
    if not m.date_start <= moment <= m.date_end:
        return (
            f"You selected a membership that is valid from {m.date_start.isoformat()} to "
            f"{m.date_end.isoformat()}, but the ticket is for {moment.isoformat()}."
        )
    if m.membership_type_id not in types:
        return f'The membership type is not allowed for the product "{_label(item)}".'
    if mtype.max_usages is not None and use.usages >= mtype.max_usages:
        return f"This membership has already been used {use.usages} times, which is the maximum."
    if not mtype.allow_parallel_usage:
        start, end = window
        if start is not None or end is not None:
            for other_start, other_end in use.ranges:
                if (start and other_end and start > other_end) or (
                    end and other_start and end < other_start
                ):
                    continue
                return "This membership is already used for a ticket valid at the same time."
            use.ranges.append(window)
        else:
            if any(abs(when - d) < SAME_TIME for d in use.dates):
                return "This membership is already used for a ticket at the same time."
            use.dates.append(when)
    use.usages += 1
    return None


async def _required_types(session: AsyncSession, item_ids: set[int]) -> dict[int, set[int]]:
    """The membership types each item accepts."""
    links = await session.execute(
        select(
            item_required_membership_types.c.item_id,
            item_required_membership_types.c.membership_type_id,
        ).where(item_required_membership_types.c.item_id.in_(item_ids))
    )
    types: dict[int, set[int]] = defaultdict(set)
    for item_id, type_id in links:
        types[item_id].add(type_id)
    return types


async def check_order(
    session: AsyncSession,
    event: Event,
    customer_id: int | None,
    testmode: bool,
    drafts: Sequence[Any],
    windows: Mapping[int, Window],
) -> dict[int, int]:
    """``positionid`` -> membership id for positions sold against a membership; 400 (per
    position, on ``used_membership``) when one is missing, foreign, invalid or used up."""
    wanted = [d for d in drafts if d.line.item.require_membership or d.data.used_membership]
    if not wanted:
        return {}
    types = await _required_types(session, {d.line.item.id for d in wanted})
    ids = {d.data.used_membership for d in wanted if d.data.used_membership}
    uses = await _load_uses(session, event.organizer_id, {i for i in ids if 0 < i < 2**31})
    errors: list[dict[str, list[str]]] = []
    chosen: dict[int, int] = {}
    for draft in drafts:
        item, pk = draft.line.item, draft.data.used_membership
        message = None
        if not item.require_membership and pk is not None:
            message = (
                f'You selected a membership for the product "{_label(item)}" which does not '
                "require a membership."
            )
        elif item.require_membership and pk is None:
            message = (
                f'The product "{_label(item)}" requires an active membership: set '
                "used_membership to a membership of the order's customer."
            )
        elif pk is not None:
            subevent = draft.line.subevent
            when = (subevent or event).date_from
            message = _problem(
                uses.get(pk),
                item,
                types[item.id],
                customer_id,
                testmode,
                when,
                windows.get(draft.positionid, (None, None)),
            )
            chosen[draft.positionid] = pk
        errors.append({"used_membership": [message]} if message else {})
    if any(errors):
        raise FieldErrors({"positions": errors})
    return chosen


async def usable(
    session: AsyncSession,
    event: Event,
    customer_id: int,
    lines: Sequence[tuple[int, Item, SubEvent | None]],
) -> dict[int, list[tuple[Membership, MembershipType]]]:
    """For each ``(key, item, date)`` whose item requires a membership: the customer's
    memberships that :func:`check_order` would accept for it on its own (the rules above,
    each membership judged as if this were the only ticket using it; the order is checked
    again in full when it is placed). Reads without locking: the shop's checkout form."""
    wanted = [line for line in lines if line[1].require_membership]
    if not wanted:
        return {}
    ids = set(
        await session.scalars(
            select(Membership.id).where(
                Membership.customer_id == customer_id,
                Membership.organizer_id == event.organizer_id,
                Membership.canceled.is_(False),
            )
        )
    )
    uses = await _load_uses(session, event.organizer_id, ids, lock=False)
    types = await _required_types(session, {item.id for _, item, _ in wanted})
    found: dict[int, list[tuple[Membership, MembershipType]]] = {}
    for key, item, subevent in wanted:
        when = (subevent or event).date_from
        found[key] = [
            (use.membership, use.type)
            for use in uses.values()
            if _problem(
                _Use(use.membership, use.type, use.usages, list(use.dates), list(use.ranges)),
                item,
                types[item.id],
                customer_id,
                event.testmode,
                when,
                (None, None),
            )
            is None
        ]
    return found


# -- granting ---------------------------------------------------------------------------------


def granted_window(
    item: Item, event: Event, subevent: SubEvent | None, now: dt.datetime
) -> tuple[dt.datetime, dt.datetime]:
    """Start and end of a membership granted by ``item``: the event's (or date's) time, or
    whole days and months from the start of today in the event's time zone."""
    tz = zoneinfo.ZoneInfo(event.timezone or "UTC")
    if item.grant_membership_duration_like_event:
        source = subevent or event
        start = source.date_from
        end = source.date_to or dt.datetime.combine(
            start.astimezone(tz).date(), dt.time(23, 59, 59, 999999), tzinfo=tz
        )
        return start, end.astimezone(dt.UTC)
    today = now.astimezone(tz).date()
    last = today
    months, days = item.grant_membership_duration_months, item.grant_membership_duration_days
    if months:
        last = add_months(today - dt.timedelta(days=1), months)
    if days:
        last += dt.timedelta(days=days - (0 if months else 1))
    start = dt.datetime.combine(today, dt.time(0, 0), tzinfo=tz)
    end = dt.datetime.combine(last, dt.time(23, 59, 59, 999999), tzinfo=tz)
    return start.astimezone(dt.UTC), end.astimezone(dt.UTC)


async def grant_for_paid_order(
    session: AsyncSession, order: Order, now: dt.datetime | None = None
) -> list[Membership]:
    """One membership per live ticket of a granting item, for the order's customer."""
    if order.customer_id is None:
        return []
    rows = (
        await session.execute(
            select(OrderPosition, Item)
            .join(Item, Item.id == OrderPosition.item_id)
            .where(
                OrderPosition.order_id == order.id,
                OrderPosition.canceled.is_(False),
                Item.grant_membership_type_id.is_not(None),
                ~select(Membership.id).where(Membership.granted_in_id == OrderPosition.id).exists(),
            )
            .order_by(OrderPosition.positionid)
        )
    ).all()
    if not rows:
        return []
    event = await session.get(Event, order.event_id)
    assert event is not None
    subevents = await _subevents(session, (p.subevent_id for p, _ in rows))
    moment = now or dt.datetime.now(dt.UTC)
    granted = []
    for position, item in rows:
        start, end = granted_window(item, event, subevents.get(position.subevent_id), moment)
        membership = Membership(
            organizer_id=event.organizer_id,
            customer_id=order.customer_id,
            membership_type_id=item.grant_membership_type_id,
            date_start=start,
            date_end=end,
            attendee_name_parts=dict(position.attendee_name_parts or {}),
            canceled=False,
            testmode=order.testmode,
            granted_in_id=position.id,
        )
        session.add(membership)
        granted.append(membership)
    await session.flush()
    return granted


async def _subevents(session: AsyncSession, ids: Iterable[int | None]) -> dict[int, SubEvent]:
    wanted = {i for i in ids if i is not None}
    if not wanted:
        return {}
    rows = await session.scalars(select(SubEvent).where(SubEvent.id.in_(wanted)))
    return {s.id: s for s in rows}


async def cancel_granted(session: AsyncSession, order: Order) -> None:
    """A canceled order takes back the memberships its tickets granted."""
    positions = select(OrderPosition.id).where(OrderPosition.order_id == order.id)
    await session.execute(
        update(Membership)
        .where(Membership.granted_in_id.in_(positions))
        .values(canceled=True)
        .execution_options(synchronize_session=False)
    )


async def _on_paid(session: AsyncSession, order: Order, _positions: object) -> None:
    await grant_for_paid_order(session, order)


def _idle(_event: Event, items: Sequence[Item], order: Mapping[str, Any]) -> bool:
    """Memberships are granted to the order's customer by items that grant one."""
    return order.get("customer_id") is None or not any(
        item.grant_membership_type_id is not None for item in items
    )


hooks.register(hooks.order_paid_hooks, _on_paid, idle=_idle)
