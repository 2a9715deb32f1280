"""The attendees of one check-in list, read for the check-in list exports (table and PDF).

Which tickets a list holds is decided by the same clauses the check-in endpoints use
(:mod:`admit.checkin.state`: the list's products and date, paid orders, pending ones when the
list includes them or the order is valid while pending). Rows are read through one cursor in
chunks; per chunk the answers, seats, vouchers and dates they refer to are loaded in a fixed
number of queries. An add-on without a name of its own shows its parent ticket's name, e-mail
and answers, then the invoice address's name.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import Select, exists, func, literal, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased, selectinload

from admit.checkin import state
from admit.exports.exporters.listing import EventInfo, chunks, localized
from admit.jobs.queue import JobFailed
from admit.models import (
    Answer,
    Checkin,
    CheckinList,
    Item,
    ItemVariation,
    Order,
    OrderPosition,
    Question,
    Seat,
    SubEvent,
    Voucher,
    answer_options,
)
from admit.seating.render import seat_name

_Parent = aliased(OrderPosition)
NEVER = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
SORTS = ("name", "code", "last_checked_in")


@dataclass
class Catalog:
    """The event's products and questions, loaded once per export (small next to orders)."""

    items: dict[int, str]
    variations: dict[int, str]
    attention_items: set[int]
    attention_variations: set[int]
    questions: list[Question]
    options: dict[int, str] = field(default_factory=dict)

    def product(self, item_id: int, variation_id: int | None) -> str:
        name = self.items.get(item_id, "")
        if variation_id is not None and variation_id in self.variations:
            return f"{name} – {self.variations[variation_id]}"
        return name


async def load_catalog(
    session: AsyncSession, event_id: int, locale: str, question_ids: Sequence[int] | None
) -> Catalog:
    items: dict[int, str] = {}
    attention: set[int] = set()
    for item_id, name, flagged in await session.execute(
        select(Item.id, Item.name, Item.checkin_attention).where(Item.event_id == event_id)
    ):
        items[item_id] = localized(name, locale)
        if flagged:
            attention.add(item_id)
    variations: dict[int, str] = {}
    attention_variations: set[int] = set()
    for var_id, value, flagged in await session.execute(
        select(ItemVariation.id, ItemVariation.value, ItemVariation.checkin_attention)
        .join(Item, Item.id == ItemVariation.item_id)
        .where(Item.event_id == event_id)
    ):
        variations[var_id] = localized(value, locale)
        if flagged:
            attention_variations.add(var_id)
    query = (
        select(Question)
        .where(Question.event_id == event_id)
        .options(selectinload(Question.options))
        .order_by(Question.position, Question.id)
    )
    if question_ids is not None:
        query = query.where(Question.id.in_(list(question_ids)))
    questions = list((await session.scalars(query)).all())
    if question_ids is not None and len(questions) != len(set(question_ids)):
        missing = sorted(set(question_ids) - {q.id for q in questions})
        raise JobFailed(f"The questions {missing} do not belong to this event.")
    options = {o.id: localized(o.answer, locale) for q in questions for o in q.options}
    return Catalog(items, variations, attention, attention_variations, questions, options)


async def find_list(session: AsyncSession, event_id: int, list_id: int) -> CheckinList:
    """The list, if it belongs to the event (another event's list reads as missing)."""
    found = await session.scalar(
        select(CheckinList).where(CheckinList.id == list_id, CheckinList.event_id == event_id)
    )
    if found is None:
        raise JobFailed(f"The check-in list {list_id} does not exist in this event.")
    return found


@dataclass
class Attendee:
    position_id: int
    positionid: int
    order_code: str
    name: str
    email: str
    company: str
    product: str
    price: Decimal
    paid: bool
    checked_in_at: dt.datetime | None
    checked_out_at: dt.datetime | None
    auto_checked_in: bool
    secret: str
    order_date: dt.datetime
    attention: bool
    comment: str
    subevent: tuple[str, dt.datetime, dt.datetime | None] | None
    voucher: str
    seat: Any
    answers: dict[int, str]

    @property
    def checked_in(self) -> bool:
        return self.checked_in_at is not None


@dataclass
class Selection:
    """What to export from a list: its date range (for series), the attention filter, the
    order of the rows."""

    date_from: dt.datetime | None = None
    date_to: dt.datetime | None = None
    attention_only: bool = False
    sort: str = "name"


def _last(list_id: int, kind: str) -> Any:
    return (
        select(func.max(Checkin.datetime))
        .where(
            Checkin.position_id == OrderPosition.id,
            Checkin.list_id == list_id,
            Checkin.successful.is_(True),
            Checkin.type == kind,
        )
        .correlate(OrderPosition)
        .scalar_subquery()
    )


def attendee_query(
    clist: CheckinList, info: EventInfo, catalog: Catalog, selection: Selection
) -> Select[Any]:
    last_in = _last(clist.id, "entry")
    auto = exists().where(
        Checkin.position_id == OrderPosition.id,
        Checkin.list_id == clist.id,
        Checkin.successful.is_(True),
        Checkin.auto_checked_in.is_(True),
    )
    query = (
        select(
            OrderPosition.id,
            OrderPosition.positionid,
            OrderPosition.attendee_name_cached,
            OrderPosition.attendee_email,
            OrderPosition.company,
            OrderPosition.item_id,
            OrderPosition.variation_id,
            OrderPosition.subevent_id,
            OrderPosition.seat_id,
            OrderPosition.voucher_id,
            OrderPosition.price,
            OrderPosition.secret,
            OrderPosition.addon_to_id,
            Order.code,
            Order.status,
            Order.email.label("order_email"),
            Order.datetime.label("order_datetime"),
            Order.checkin_attention,
            Order.comment,
            Order.invoice_address,
            _Parent.attendee_name_cached.label("parent_name"),
            _Parent.attendee_email.label("parent_email"),
            last_in.label("last_in"),
            _last(clist.id, "exit").label("last_out"),
            auto.label("auto"),
        )
        .select_from(OrderPosition)
        .join(Order, Order.id == OrderPosition.order_id)
        .outerjoin(_Parent, _Parent.id == OrderPosition.addon_to_id)
        .where(state.on_list(clist), state.order_valid(clist))
    )
    by_date = info.has_subevents and clist.subevent_id is None
    if by_date or selection.date_from or selection.date_to:
        query = query.outerjoin(SubEvent, SubEvent.id == OrderPosition.subevent_id)
        if selection.date_from is not None:
            query = query.where(SubEvent.date_from >= selection.date_from)
        if selection.date_to is not None:
            query = query.where(SubEvent.date_from < selection.date_to)
    if selection.attention_only:
        query = query.where(
            or_(
                Order.checkin_attention.is_(True),
                OrderPosition.item_id.in_(sorted(catalog.attention_items) or [-1]),
                OrderPosition.variation_id.in_(sorted(catalog.attention_variations) or [-1]),
            )
        )
    order: list[Any] = [SubEvent.date_from, SubEvent.id] if by_date else []
    if selection.sort == "code":
        order += [Order.code, OrderPosition.positionid]
    elif selection.sort == "last_checked_in":
        order += [func.coalesce(last_in, literal(NEVER, Checkin.datetime.type)).desc()]
    else:
        name = func.coalesce(
            func.nullif(OrderPosition.attendee_name_cached, ""),
            func.nullif(_Parent.attendee_name_cached, ""),
            Order.code,
        )
        order += [func.lower(name), Order.code, OrderPosition.positionid]
    return query.order_by(*order, OrderPosition.id)


async def _answers(
    session: AsyncSession, ids: set[int], catalog: Catalog, yes: str, no: str
) -> dict[int, dict[int, str]]:
    """{position id: {question id: answer text}} for the exported questions."""
    types = {q.id: q.type for q in catalog.questions}
    if not ids or not types:
        return {}
    found: dict[int, dict[int, str]] = {}
    choice: dict[int, tuple[int, int]] = {}
    for answer_id, position_id, question_id, text in await session.execute(
        select(Answer.id, Answer.orderposition_id, Answer.question_id, Answer.answer).where(
            Answer.orderposition_id.in_(ids), Answer.question_id.in_(list(types))
        )
    ):
        kind = types[question_id]
        if kind == "B":
            text = yes if text == "True" else no
        found.setdefault(position_id, {})[question_id] = text
        if kind in ("C", "M"):
            choice[answer_id] = (position_id, question_id)
    if choice:
        chosen: dict[int, list[str]] = {}
        for answer_id, option_id in await session.execute(
            select(answer_options.c.answer_id, answer_options.c.option_id)
            .where(answer_options.c.answer_id.in_(list(choice)))
            .order_by(answer_options.c.answer_id, answer_options.c.option_id)
        ):
            if option_id in catalog.options:
                chosen.setdefault(answer_id, []).append(catalog.options[option_id])
        for answer_id, texts in chosen.items():
            position_id, question_id = choice[answer_id]
            found[position_id][question_id] = ", ".join(texts)
    return found


async def _by_id(session: AsyncSession, columns: Sequence[Any], ids: set[Any]) -> dict[int, Any]:
    ids.discard(None)
    if not ids:
        return {}
    rows = await session.execute(select(*columns).where(columns[0].in_(sorted(ids))))
    return {row[0]: row for row in rows}


def _invoice_field(address: Any, key: str) -> str:
    if isinstance(address, dict):
        return str(address.get(key) or "")
    return ""


async def attendees(
    session: AsyncSession,
    clist: CheckinList,
    info: EventInfo,
    catalog: Catalog,
    selection: Selection,
    *,
    locale: str = "en",
    yes: str = "Yes",
    no: str = "No",
    size: int = 500,
) -> AsyncIterator[list[Attendee]]:
    """The list's attendees, a chunk of at most ``size`` at a time."""
    query = attendee_query(clist, info, catalog, selection)
    async for rows in chunks(session, query, size):
        ids = {r.id for r in rows} | {r.addon_to_id for r in rows if r.addon_to_id}
        answers = await _answers(session, ids, catalog, yes, no)
        seats = await _by_id(
            session,
            (
                Seat.id,
                Seat.seat_guid,
                Seat.zone_name,
                Seat.row_name,
                Seat.row_label,
                Seat.seat_number,
                Seat.seat_label,
            ),
            {r.seat_id for r in rows},
        )
        vouchers = await _by_id(session, (Voucher.id, Voucher.code), {r.voucher_id for r in rows})
        dates = await _by_id(
            session,
            (SubEvent.id, SubEvent.name, SubEvent.date_from, SubEvent.date_to),
            {r.subevent_id for r in rows},
        )
        chunk = []
        for r in rows:
            merged = {**answers.get(r.addon_to_id or 0, {}), **answers.get(r.id, {})}
            date = dates.get(r.subevent_id)
            voucher = vouchers.get(r.voucher_id)
            chunk.append(
                Attendee(
                    position_id=r.id,
                    positionid=r.positionid,
                    order_code=r.code,
                    name=r.attendee_name_cached
                    or r.parent_name
                    or _invoice_field(r.invoice_address, "name"),
                    email=r.attendee_email or r.parent_email or r.order_email or "",
                    company=r.company or _invoice_field(r.invoice_address, "company"),
                    product=catalog.product(r.item_id, r.variation_id),
                    price=r.price,
                    paid=r.status == "p",
                    checked_in_at=r.last_in,
                    checked_out_at=r.last_out,
                    auto_checked_in=bool(r.auto),
                    secret=r.secret,
                    order_date=r.order_datetime,
                    attention=bool(r.checkin_attention)
                    or r.item_id in catalog.attention_items
                    or (r.variation_id or 0) in catalog.attention_variations,
                    comment=r.comment or "",
                    subevent=(localized(date.name, locale), date.date_from, date.date_to)
                    if date
                    else None,
                    voucher=voucher.code if voucher else "",
                    seat=seats.get(r.seat_id),
                    answers=merged,
                )
            )
        yield chunk


def seat_columns(seat: Any) -> list[Any]:
    """Seat id (guid), name, zone, row, number — blanks for a ticket without a seat."""
    if seat is None:
        return ["", "", "", "", ""]
    return [seat.seat_guid, seat_name(seat), seat.zone_name, seat.row_name, seat.seat_number]
