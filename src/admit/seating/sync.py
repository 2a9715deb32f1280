"""An event's or date's seats follow its ``seating_plan`` and ``seat_category_mapping``.

Validation (:func:`assignment_errors`) runs with the other field rules. :func:`sync_seats`
then makes the stored seats match the plan inside the same transaction: seats whose guid stays
keep their id (and so their sales, blocks and references), changed labels and products are
updated, new seats inserted, and seats no longer in the plan deleted — unless one of them is
sold or reserved, which refuses the whole change with a 400 on ``seating_plan``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.filtering import PK_MAX
from admit.models import Event, Item, Seat, SeatingPlan, SubEvent
from admit.seating.claim import lock_seats
from admit.seating.holders import holds
from admit.seating.layout import LayoutError, SeatSpec, parse_layout, seat_categories
from admit.seating.render import seat_name

MAPPING_NEEDS_PLAN = "A seat category mapping needs a seating plan."
WRITE_CHUNK = 2000
_COMPARED = (
    "zone_name",
    "row_name",
    "row_label",
    "seat_number",
    "seat_label",
    "product_id",
    "sorting_rank",
)


def _invalid_pk(value: object) -> str:
    return f'Invalid pk "{value}" - object does not exist.'


async def assignment_errors(
    session: AsyncSession,
    organizer_id: int,
    event_id: int | None,
    plan_id: int | None,
    mapping: Mapping[str, int | None],
    current: tuple[int | None, Any] | None = None,
) -> dict[str, list[str]]:
    """What is wrong with a plan / mapping pair: the plan must be one of the organizer's, the
    mapping's keys categories of that plan and its values items of this event.

    ``current`` is the stored pair: an unchanged pair is not checked again, so an item deleted
    since (its seats lost their product) does not block unrelated edits of the event or date.
    """
    if current is not None and not _changed(current, plan_id, mapping):
        return {}
    errors: dict[str, list[str]] = {}
    plan = None
    if plan_id is not None:
        if 1 <= plan_id <= PK_MAX:
            # Shared lock: the plan cannot be deleted or redrawn until this write commits.
            plan = await session.scalar(
                select(SeatingPlan)
                .where(SeatingPlan.id == plan_id, SeatingPlan.organizer_id == organizer_id)
                .with_for_update(read=True)
            )
        if plan is None:
            errors["seating_plan"] = [_invalid_pk(plan_id)]
    if mapping and plan_id is None:
        errors["seat_category_mapping"] = [MAPPING_NEEDS_PLAN]
    if not mapping or plan is None:
        return errors
    messages: list[str] = []
    categories = seat_categories(plan.layout)
    messages += [f'The seating plan has no category "{k}".' for k in mapping if k not in categories]
    wanted = {v for v in mapping.values() if v is not None}
    known: set[int] = set()
    valid = {v for v in wanted if 1 <= v <= PK_MAX}
    if valid and event_id is not None:
        known = set(
            await session.scalars(
                select(Item.id).where(Item.event_id == event_id, Item.id.in_(valid))
            )
        )
    messages += [_invalid_pk(v) for v in sorted(wanted - known)]
    if messages:
        errors["seat_category_mapping"] = messages
    return errors


def _changed(event_plan: tuple[int | None, Any], new_plan: int | None, mapping: Any) -> bool:
    old_plan, old_mapping = event_plan
    return old_plan != new_plan or dict(old_mapping or {}) != dict(mapping or {})


async def sync_event(
    session: AsyncSession,
    event: Event,
    plan_id: int | None,
    mapping: Mapping[str, int | None],
    *,
    force: bool = False,
) -> None:
    """The event's own seats (a series has seats per date only, so none)."""
    if not force and not _changed(
        (event.seating_plan, event.seat_category_mapping), plan_id, mapping
    ):
        return
    await _lock_owner(session, Event, event.id)
    target = None if event.has_subevents else plan_id
    await sync_seats(session, event.id, None, target, mapping)


async def sync_subevent(
    session: AsyncSession, sub: SubEvent, before: tuple[int | None, Any] | None
) -> None:
    """A date's seats after it was written; ``before`` is its (plan, mapping) until now, None
    for a new date."""
    if before is None and sub.seating_plan is None:
        return
    if before is not None and not _changed(before, sub.seating_plan, sub.seat_category_mapping):
        return
    await _lock_owner(session, SubEvent, sub.id)
    await sync_seats(session, sub.event_id, sub.id, sub.seating_plan, sub.seat_category_mapping)


async def _lock_owner(session: AsyncSession, model: Any, pk: int) -> None:
    """Seat generation for one event / date runs one at a time (PostgreSQL row lock)."""
    if session.bind.dialect.name == "postgresql":  # type: ignore[union-attr]
        await session.execute(select(model.id).where(model.id == pk).with_for_update())


async def sync_seats(
    session: AsyncSession,
    event_id: int,
    subevent_id: int | None,
    plan_id: int | None,
    mapping: Mapping[str, int | None],
) -> None:
    """Makes the seats of one event (``subevent_id`` None) or date match the plan."""
    specs: list[SeatSpec] = []
    if plan_id is not None:
        plan = await session.get(SeatingPlan, plan_id)
        if plan is not None:
            try:
                specs, _ = parse_layout(plan.layout)
            except LayoutError as exc:
                raise FieldErrors({"seating_plan": exc.messages}) from None
    scope = Seat.subevent_id.is_(None) if subevent_id is None else Seat.subevent_id == subevent_id
    # Plain rows, not ORM objects: the bulk writes below leave no stale copies in the session.
    columns = (Seat.id, Seat.seat_guid, *(getattr(Seat, c) for c in _COMPARED))
    existing = {
        row.seat_guid: row
        for row in await session.execute(select(*columns).where(Seat.event_id == event_id, scope))
    }
    wanted = {s.guid: s for s in specs}
    removed = [seat for guid, seat in existing.items() if guid not in wanted]
    updates: list[dict[str, Any]] = []
    inserts: list[dict[str, Any]] = []
    for spec in specs:
        values = {
            "zone_name": spec.zone_name,
            "row_name": spec.row_name,
            "row_label": spec.row_label,
            "seat_number": spec.seat_number,
            "seat_label": spec.seat_label,
            "product_id": mapping.get(spec.category),
            "sorting_rank": spec.rank,
        }
        seat = existing.get(spec.guid)
        if seat is None:
            inserts.append(
                {
                    **values,
                    "event_id": event_id,
                    "subevent_id": subevent_id,
                    "seat_guid": spec.guid,
                    "blocked": False,
                }
            )
        elif any(getattr(seat, k) != v for k, v in values.items()):
            updates.append({"id": seat.id, **values})
    # Every seat written is locked first, in id order like every sale locks them: updating in
    # layout order could deadlock against a sale holding two of them.
    updates.sort(key=lambda row: row["id"])
    await lock_seats(session, [s.id for s in removed] + [row["id"] for row in updates])
    if removed:
        await _delete_free(session, removed)
    for start in range(0, len(updates), WRITE_CHUNK):
        await session.execute(update(Seat), updates[start : start + WRITE_CHUNK])
    for start in range(0, len(inserts), WRITE_CHUNK):
        await session.execute(insert(Seat), inserts[start : start + WRITE_CHUNK])


async def _delete_free(session: AsyncSession, removed: list[Any]) -> None:
    """Deletes seats leaving the plan (locked by the caller); refuses (400) when one of them
    is sold or reserved."""
    ids = [s.id for s in removed]
    held = await holds(session, ids, utcnow())
    taken = [s for s in removed if s.id in held and held[s.id].taken()]
    if taken:
        names = ", ".join(f'"{seat_name(s)}"' for s in taken[:10])
        more = f" and {len(taken) - 10} more" if len(taken) > 10 else ""
        raise FieldErrors.single(
            "seating_plan",
            f"The plan cannot be changed: seats {names}{more} would be removed, but they are "
            "sold or reserved.",
        )
    for start in range(0, len(ids), WRITE_CHUNK):
        await session.execute(
            delete(Seat)
            .where(Seat.id.in_(ids[start : start + WRITE_CHUNK]))
            .execution_options(synchronize_session=False)
        )
