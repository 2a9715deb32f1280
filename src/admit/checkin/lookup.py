"""The one read of a redeem: every list named in the request, each with the ticket that has the
scanned secret in that list's event (if any) and everything the decision and the answer need.

One row per list found in the organizer: the list and its event; then, when the secret
matches a ticket of that event, the ticket, its order, item and variation flags, its
check-ins on that list (successful ones, and failed ones carrying the request's nonce), its
answers and the number of check-in questions still unanswered. Written once in SQLAlchemy
Core, built per dialect (JSON aggregation differs) and per number of lists, and run on the
fast-read path: on PostgreSQL one autocommit statement on the native pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    and_,
    bindparam,
    exists,
    func,
    literal_column,
    or_,
    select,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from admit.checkin.rows import LIST_WIDTH, Found, parse
from admit.models import (
    Answer,
    Checkin,
    CheckinList,
    Event,
    Item,
    ItemVariation,
    Order,
    OrderPosition,
    Question,
    QuestionOption,
    SubEvent,
    answer_options,
    checkin_list_items,
    question_items,
)

LIST_COLUMNS = (
    CheckinList.id,
    CheckinList.name,
    CheckinList.event_id,
    CheckinList.subevent_id,
    CheckinList.all_products,
    CheckinList.include_pending,
    CheckinList.allow_multiple_entries,
    CheckinList.allow_entry_after_exit,
    CheckinList.exit_all_at,
    CheckinList.addon_match,
    CheckinList.rules,
    Event.slug,
    Event.timezone,
    Event.date_from,
    Event.date_to,
    Event.date_admission,
)
POSITION_COLUMNS = tuple(OrderPosition.__table__.columns)
assert len(LIST_COLUMNS) == LIST_WIDTH  # rows.ListRow takes them in this order
_Parent = aliased(OrderPosition)


def _json_object(dialect: str, *pairs: tuple[str, Any]) -> Any:
    args: list[Any] = []
    for key, value in pairs:
        args += [literal_column(f"'{key}'"), value]
    return (func.json_build_object if dialect == "postgresql" else func.json_object)(*args)


def _json_rows(dialect: str, row: Any) -> Any:
    agg = func.json_agg(row) if dialect == "postgresql" else func.json_group_array(row)
    return agg


def _embed(dialect: str, value: Any) -> Any:
    """A JSON subquery result placed inside another JSON object (SQLite keeps it as text)."""
    return value if dialect == "postgresql" else func.json(value)


def _scans(dialect: str) -> Any:
    obj = _json_object(
        dialect,
        ("id", Checkin.id),
        ("seq", Checkin.seq),
        ("type", Checkin.type),
        ("datetime", Checkin.datetime),
        ("successful", Checkin.successful),
        ("error_reason", Checkin.error_reason),
        ("nonce", Checkin.nonce),
        ("device_id", Checkin.device_id),
        ("device_number", Checkin.device_number),
        ("gate_id", Checkin.gate_id),
        ("auto_checked_in", Checkin.auto_checked_in),
    )
    return (
        select(_json_rows(dialect, obj))
        .where(
            Checkin.position_id == OrderPosition.id,
            Checkin.list_id == CheckinList.id,
            or_(Checkin.successful, Checkin.nonce == bindparam("nonce")),
        )
        .correlate(OrderPosition, CheckinList)
        .scalar_subquery()
    )


def _answers(dialect: str) -> Any:
    option = _json_object(
        dialect, ("id", QuestionOption.id), ("identifier", QuestionOption.identifier)
    )
    options = (
        select(_json_rows(dialect, option))
        .select_from(answer_options)
        .join(QuestionOption, QuestionOption.id == answer_options.c.option_id)
        .where(answer_options.c.answer_id == Answer.id)
        .correlate(Answer)
        .scalar_subquery()
    )
    obj = _json_object(
        dialect,
        ("id", Answer.id),
        ("question", Answer.question_id),
        ("answer", Answer.answer),
        ("identifier", Question.identifier),
        ("text", _embed(dialect, Question.question)),
        ("show", Question.show_during_checkin),
        ("options", _embed(dialect, options)),
    )
    return (
        select(_json_rows(dialect, obj))
        .select_from(Answer)
        .join(Question, Question.id == Answer.question_id)
        .where(Answer.orderposition_id == OrderPosition.id)
        .correlate(OrderPosition)
        .scalar_subquery()
    )


def _missing_questions() -> Any:
    answered = (
        exists()
        .where(Answer.orderposition_id == OrderPosition.id, Answer.question_id == Question.id)
        .correlate_except(Answer)
    )
    return (
        select(func.count())
        .select_from(Question)
        .join(question_items, question_items.c.question_id == Question.id)
        .where(
            question_items.c.item_id == OrderPosition.item_id,
            Question.ask_during_checkin.is_(True),
            ~answered,
        )
        .correlate(OrderPosition)
        .scalar_subquery()
    )


def _on_list() -> ColumnElement[bool]:
    return exists().where(
        checkin_list_items.c.list_id == CheckinList.id,
        checkin_list_items.c.item_id == OrderPosition.item_id,
    )


def _label(prefix: str, column: Any) -> Any:
    """Stable, unique output names (``l_id``, ``p_id``, ...): the fast path refers to them."""
    table = column.table.name if column.table is not None else ""
    prefix = "e" if table == "events" else prefix
    return column.label(f"{prefix}_{column.key}")


def _build(dialect: str, n_lists: int) -> Select[Any]:
    list_ids = [bindparam(f"list_{i}") for i in range(n_lists)]
    parent_name = (
        select(_Parent.attendee_name_cached)
        .where(_Parent.id == OrderPosition.addon_to_id)
        .correlate(OrderPosition)
        .scalar_subquery()
    )
    columns = [
        *(_label("l", c) for c in LIST_COLUMNS),
        *(_label("p", c) for c in POSITION_COLUMNS),
        *(
            _label(prefix, c)
            for prefix, c in (
                ("o", Order.code),
                ("o", Order.status),
                ("o", Order.require_approval),
                ("o", Order.valid_if_pending),
                ("o", Order.locale),
                ("o", Order.checkin_attention),
                ("o", Order.checkin_text),
                ("o", Order.invoice_address),
                ("i", Item.checkin_attention),
                ("i", Item.checkin_text),
                ("v", ItemVariation.checkin_attention),
                ("v", ItemVariation.checkin_text),
                ("s", SubEvent.date_from),
                ("s", SubEvent.date_to),
                ("s", SubEvent.date_admission),
            )
        ),
        _on_list().label("on_list"),
        parent_name.label("parent_name"),
        _scans(dialect).label("scans"),
        _answers(dialect).label("answers"),
        _missing_questions().label("missing"),
    ]
    return (
        select(*columns)
        .select_from(CheckinList)
        .join(
            Event,
            and_(Event.id == CheckinList.event_id, Event.organizer_id == bindparam("organizer")),
        )
        .outerjoin(
            OrderPosition,
            and_(
                OrderPosition.event_id == CheckinList.event_id,
                OrderPosition.secret == bindparam("secret"),
            ),
        )
        .outerjoin(Order, Order.id == OrderPosition.order_id)
        .outerjoin(Item, Item.id == OrderPosition.item_id)
        .outerjoin(ItemVariation, ItemVariation.id == OrderPosition.variation_id)
        .outerjoin(SubEvent, SubEvent.id == OrderPosition.subevent_id)
        .where(CheckinList.id.in_(list_ids))
        .order_by(CheckinList.id)
    )


_STATEMENTS: dict[tuple[str, int], Select[Any]] = {}


def statement(dialect: str, n_lists: int) -> Select[Any]:
    """Built once per dialect and number of lists; the fast reader caches it compiled."""
    key = (dialect, n_lists)
    stmt = _STATEMENTS.get(key)
    if stmt is None:
        stmt = _STATEMENTS[key] = _build(dialect, n_lists)
    return stmt


async def find(
    session: AsyncSession,
    organizer_id: int,
    secret: str,
    list_ids: Sequence[int],
    nonce: str | None,
) -> list[Found]:
    """One row per requested list that exists in the organizer, in list id order."""
    fast = session.info["fast"]
    stmt = statement(fast.engine.dialect.name, len(list_ids))
    params: dict[str, Any] = {"organizer": organizer_id, "secret": secret, "nonce": nonce}
    params.update({f"list_{i}": pk for i, pk in enumerate(list_ids)})
    return [parse(r) for r in await fetch_all(session, stmt, params)]


async def fetch_all(
    session: AsyncSession, stmt: Any, params: dict[str, Any]
) -> list[tuple[Any, ...]]:
    """Every row of ``stmt`` (a module-level constant) on the fast path: the native pool on
    PostgreSQL (autocommit), the request's connection on SQLite."""
    fast = session.info["fast"]
    if not fast.native:
        connection = await session.connection()
        return [tuple(r) for r in (await connection.execute(stmt, params)).all()]
    sql, names = fast.compile(stmt)  # the fast reader's compiled-SQL cache
    fast.executed += 1
    pool = await fast.pool()
    return [tuple(r.values()) for r in await pool.fetch(sql, *(params[n] for n in names))]
