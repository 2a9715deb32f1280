"""Everything a set of tickets prints, loaded in a fixed number of queries however many.

A batch of 1,000 positions costs the same dozen statements as one: the positions with their
orders, their add-ons, the items and variations, dates, seats, answers and their options,
the organizer's name, the layouts the positions may use (assignments, defaults, overrides)
and the uploads behind backgrounds and product pictures. Rows are read as plain values; no
relationship is touched (they are ``lazy="raise"``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import (
    Answer,
    Event,
    Item,
    ItemVariation,
    Order,
    OrderPosition,
    Organizer,
    Question,
    QuestionOption,
    Seat,
    SubEvent,
    TicketLayout,
    TicketLayoutItem,
    UploadedFile,
    answer_options,
)

# Built once (building a statement can cost more than running it); ids bind as expanding lists.
_IDS = bindparam("ids", expanding=True)
_POSITIONS = (
    select(OrderPosition, Order)
    .join(Order, Order.id == OrderPosition.order_id)
    .where(OrderPosition.event_id == bindparam("event_id"), OrderPosition.id.in_(_IDS))
)
_ADDONS = (
    select(OrderPosition.addon_to_id, OrderPosition.item_id, OrderPosition.variation_id)
    .where(OrderPosition.addon_to_id.in_(_IDS), OrderPosition.canceled.is_(False))
    .order_by(OrderPosition.addon_to_id, OrderPosition.positionid)
)
_PARENT_NAMES = select(OrderPosition.id, OrderPosition.attendee_name_cached).where(
    OrderPosition.id.in_(_IDS)
)
_ITEMS = select(Item).where(Item.id.in_(_IDS))
_VARIATIONS = select(ItemVariation).where(ItemVariation.id.in_(_IDS))
_SUBEVENTS = select(SubEvent).where(SubEvent.id.in_(_IDS))
_SEATS = select(Seat).where(Seat.id.in_(_IDS))
_ANSWERS = (
    select(Answer.id, Answer.orderposition_id, Answer.answer, Question.identifier, Question.type)
    .join(Question, Question.id == Answer.question_id)
    .where(Answer.orderposition_id.in_(_IDS))
    .order_by(Answer.id)
)
_OPTIONS = (
    select(answer_options.c.answer_id, QuestionOption.answer)
    .join(QuestionOption, QuestionOption.id == answer_options.c.option_id)
    .where(answer_options.c.answer_id.in_(_IDS))
    .order_by(answer_options.c.answer_id, QuestionOption.position, QuestionOption.id)
)
_ORGANIZER_NAME = select(Organizer.name).where(Organizer.id == bindparam("organizer_id"))
_ASSIGNMENTS = (
    select(TicketLayoutItem.item_id, TicketLayoutItem.sales_channel, TicketLayoutItem.layout_id)
    .join(TicketLayout, TicketLayout.id == TicketLayoutItem.layout_id)
    .where(TicketLayout.event_id == bindparam("event_id"), TicketLayoutItem.item_id.in_(_IDS))
)
_LAYOUTS = (
    select(TicketLayout)
    .where(
        TicketLayout.event_id == bindparam("event_id"),
        or_(TicketLayout.default.is_(True), TicketLayout.id.in_(_IDS)),
    )
    .order_by(TicketLayout.id)
)
_UPLOADS = select(UploadedFile).where(
    or_(
        UploadedFile.id.in_(bindparam("upload_ids", expanding=True)),
        UploadedFile.uuid.in_(bindparam("uuids", expanding=True)),
    )
)


@dataclass
class AnswerData:
    identifier: str
    type: str
    answer: str
    options: list[dict[str, str]] = field(default_factory=list)  # chosen options' texts


@dataclass
class PositionData:
    """One position and what its ticket prints about it."""

    position: OrderPosition
    order: Order
    item: Item
    variation: ItemVariation | None
    subevent: SubEvent | None
    seat: Seat | None
    parent_name: str | None  # the attendee name of the position an add-on belongs to
    answers: list[AnswerData] = field(default_factory=list)
    addons: list[tuple[Item, ItemVariation | None]] = field(default_factory=list)


@dataclass
class Batch:
    event: Event
    organizer_name: str
    positions: dict[int, PositionData]
    layouts: dict[int, TicketLayout]
    assignments: dict[tuple[int, str], int]  # (item, sales channel) -> layout
    default_layout: int | None
    uploads: dict[int, UploadedFile]  # by id: backgrounds
    pictures: dict[str, UploadedFile]  # by uuid: product pictures


def picture_uuid(path: str | None) -> str | None:
    """The upload uuid of an item's ``picture`` (``<uuid>/<name>``), if it is one."""
    if not path:
        return None
    handle = path.split("/", 1)[0]
    if len(handle) == 32 and all(c in "0123456789abcdef" for c in handle):
        return handle
    return None


async def _rows(session: AsyncSession, statement: Any, ids: Collection[Any], **params: Any) -> Any:
    """The statement's rows for ``ids`` (none asked, none fetched: no round trip)."""
    if not ids:
        return []
    return (await session.execute(statement, {"ids": list(ids), **params})).all()


async def _entities(session: AsyncSession, statement: Any, ids: Collection[int]) -> dict[int, Any]:
    return {row[0].id: row[0] for row in await _rows(session, statement, ids)}


async def _answers(session: AsyncSession, ids: Collection[int]) -> dict[int, list[AnswerData]]:
    by_answer: dict[int, AnswerData] = {}
    found: dict[int, list[AnswerData]] = defaultdict(list)
    for row in await _rows(session, _ANSWERS, ids):
        data = AnswerData(row.identifier, row.type, row.answer or "")
        by_answer[row.id] = data
        found[row.orderposition_id].append(data)
    choice = [answer_id for answer_id, a in by_answer.items() if a.type in ("C", "M")]
    for answer_id, text in await _rows(session, _OPTIONS, choice):
        by_answer[answer_id].options.append(text or {})
    return found


async def _layouts(
    session: AsyncSession, event_id: int, item_ids: Collection[int], extra: Collection[int]
) -> tuple[dict[int, TicketLayout], dict[tuple[int, str], int], int | None]:
    assignments = {
        (row.item_id, row.sales_channel): row.layout_id
        for row in await _rows(session, _ASSIGNMENTS, item_ids, event_id=event_id)
    }
    wanted = list(set(assignments.values()) | set(extra))
    rows = await session.execute(_LAYOUTS, {"event_id": event_id, "ids": wanted})
    layouts = {layout.id: layout for layout in rows.scalars()}
    default = next((lid for lid, layout in layouts.items() if layout.default), None)
    return layouts, assignments, default


async def load_batch(
    session: AsyncSession,
    event: Event,
    position_ids: Iterable[int],
    *,
    layout_ids: Iterable[int] = (),
) -> Batch:
    """The positions among ``position_ids`` that belong to ``event`` (others are left out)
    with everything their tickets print, and the layouts they may use (``layout_ids``:
    overrides to load as well)."""
    ids = sorted(set(position_ids))
    found = {
        pos.id: (pos, order)
        for pos, order in await _rows(session, _POSITIONS, ids, event_id=event.id)
    }
    addon_rows = await _rows(session, _ADDONS, list(found))
    parents = {pos.addon_to_id for pos, _ in found.values() if pos.addon_to_id}
    parent_names = dict(await _rows(session, _PARENT_NAMES, parents))
    item_ids = {pos.item_id for pos, _ in found.values()} | {r.item_id for r in addon_rows}
    variation_ids = {pos.variation_id for pos, _ in found.values() if pos.variation_id} | {
        r.variation_id for r in addon_rows if r.variation_id
    }
    items = await _entities(session, _ITEMS, item_ids)
    variations = await _entities(session, _VARIATIONS, variation_ids)
    subevents = await _entities(
        session, _SUBEVENTS, {pos.subevent_id for pos, _ in found.values() if pos.subevent_id}
    )
    seats = await _entities(
        session, _SEATS, {pos.seat_id for pos, _ in found.values() if pos.seat_id}
    )
    answers = await _answers(session, list(found))
    organizer_name = await session.scalar(_ORGANIZER_NAME, {"organizer_id": event.organizer_id})
    layouts, assignments, default = await _layouts(
        session, event.id, {pos.item_id for pos, _ in found.values()}, set(layout_ids)
    )
    background_ids = {layout.background_id for layout in layouts.values() if layout.background_id}
    picture_ids = {u for item in items.values() if (u := picture_uuid(item.picture))}
    uploads: dict[int, UploadedFile] = {}
    pictures: dict[str, UploadedFile] = {}
    if background_ids or picture_ids:
        params = {"upload_ids": list(background_ids), "uuids": list(picture_ids)}
        for upload in (await session.execute(_UPLOADS, params)).scalars():
            if upload.id in background_ids:
                uploads[upload.id] = upload
            if upload.uuid in picture_ids:
                pictures[upload.uuid] = upload

    addons: dict[int, list[tuple[Item, ItemVariation | None]]] = defaultdict(list)
    for row in addon_rows:
        addons[row.addon_to_id].append(
            (items[row.item_id], variations.get(row.variation_id) if row.variation_id else None)
        )
    positions = {
        pid: PositionData(
            position=pos,
            order=order,
            item=items[pos.item_id],
            variation=variations.get(pos.variation_id) if pos.variation_id else None,
            subevent=subevents.get(pos.subevent_id) if pos.subevent_id else None,
            seat=seats.get(pos.seat_id) if pos.seat_id else None,
            parent_name=parent_names.get(pos.addon_to_id) if pos.addon_to_id else None,
            answers=answers.get(pid, []),
            addons=addons.get(pid, []),
        )
        for pid, (pos, order) in found.items()
    }
    return Batch(
        event=event,
        organizer_name=organizer_name or "",
        positions=positions,
        layouts=layouts,
        assignments=assignments,
        default_layout=default,
        uploads=uploads,
        pictures=pictures,
    )
