"""Orders and order positions written as JSON by PostgreSQL (``kit/resources/sql_json.py``): the
declarations of ``order_rows.py`` with the SQL of what their ``finish`` functions compute.

Each expression here mirrors one ``finish`` step (named beside it), so the two paths give the
same bytes; ``tests/orders/test_sql_json.py`` compares them on every list they serve. The
request's values are bound parameters: the event's slug (``j_slug``), the shop's order page
base (``j_base``) and the event's API base (``j_api``). ``flags`` hold the request's ``View``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Text, and_, bindparam, case, cast, func, or_, select

from admit.kit.resources.sql_json import (
    Flags,
    JsonShape,
    concat,
    json_or_empty,
    json_string,
    sql_text,
    value_json,
)
from admit.models import (
    Answer,
    Order,
    OrderFee,
    OrderPayment,
    OrderPosition,
    OrderRefund,
    PrintLog,
    QuestionOption,
    Seat,
    answer_options,
)
from admit.orders.order_fields import SUPPORTED_ROUNDING
from admit.orders.order_rows import (
    _GENERATES,
    ANSWER_ROWS,
    CHECKIN_ROWS,
    FEE_ROWS,
    NESTED_POSITION_ROWS,
    ORDER_ROWS,
    OUTPUT,
    PAYMENT_ROWS,
    POSITION_ROWS,
    PRINT_LOG_ROWS,
    REFUND_ROWS,
    SEAT_ROWS,
)

SLUG = bindparam("j_slug", type_=Text)
BASE = bindparam("j_base", type_=Text)
API = bindparam("j_api", type_=Text)


def _const(text: str) -> Any:
    return lambda _flags: sql_text(text)


def _or_empty(column: Any) -> Any:
    return lambda _flags: json_or_empty(column)


# -- answers (``_finish_answer``: the chosen options split in two lists) ------------------------


def _options(_flags: Flags) -> ColumnElement[str]:
    """``options`` and ``option_identifiers`` of one subquery (most answers have none).

    The answer's options are read in their id order from the key's index (a subquery
    ordered by it: no sort) and each identifier by the option's key: per answer, no join
    to build and no sort in the aggregates (measured: 0.6 ms less of 5.8 ms for a page of
    50 orders with 350 answers)."""
    chosen = (
        select(answer_options.c.option_id)
        .where(answer_options.c.answer_id == Answer.id)
        .order_by(answer_options.c.option_id)
        .correlate(Answer)
        .subquery("chosen")
    )
    identifier = (
        select(QuestionOption.identifier)
        .where(QuestionOption.id == chosen.c.option_id)
        .scalar_subquery()
    )
    sep = sql_text(",")
    ids = func.string_agg(cast(chosen.c.option_id, Text), sep)
    names = func.string_agg(json_string(identifier), sep)
    both = concat(sql_text("["), ids, sql_text('],"option_identifiers":['), names, sql_text("]"))
    found = select(both).select_from(chosen).scalar_subquery()
    return func.coalesce(found, sql_text('[],"option_identifiers":[]'))


ANSWER_SHAPE = JsonShape(ANSWER_ROWS, fields={("options", "option_identifiers"): _options})
CHECKIN_SHAPE = JsonShape(CHECKIN_ROWS)


# -- seats (``seat_name``), print logs ------------------------------------------------------------


_EMPTY = sql_text("")


def _label(prefix: str, label: Any, number: Any) -> ColumnElement[Any]:
    return func.coalesce(
        func.nullif(label, _EMPTY), sql_text(prefix).op("||")(func.nullif(number, _EMPTY))
    )


_SEAT_NAME = func.coalesce(
    func.nullif(
        func.concat_ws(
            sql_text(", "),
            func.nullif(Seat.zone_name, _EMPTY),
            _label("Row ", Seat.row_label, Seat.row_name),
            _label("Seat ", Seat.seat_label, Seat.seat_number),
        ),
        _EMPTY,
    ),
    Seat.seat_guid,
)
SEAT_SHAPE = JsonShape(SEAT_ROWS, fields={"name": lambda _f: json_string(_SEAT_NAME)})
# Only positions flagged ``has_print_logs`` show theirs (the Python path looks up no others).
PRINT_LOG_SHAPE = JsonShape(
    PRINT_LOG_ROWS,
    fields={"info": _or_empty(PrintLog.info)},
    where=lambda _f: (OrderPosition.has_print_logs.is_(True),),
)


# -- positions (``_finish_position``) ------------------------------------------------------------

# ``refuses_downloads`` negated, on the position's order (joined or enclosing).
_DOWNLOADABLE = or_(
    and_(Order.status == "p", func.coalesce(Order.require_approval, False).is_(False)),
    and_(
        Order.status == "n",
        func.coalesce(Order.require_approval, False).is_(False),
        func.coalesce(Order.valid_if_pending, False).is_(True),
    ),
)
# ``has_ticket``.
HAS_TICKET = and_(
    _DOWNLOADABLE,
    OrderPosition.canceled.is_not(True),
    func.coalesce(_GENERATES, OrderPosition.addon_to_id.is_(None)).is_(True),
)


def _download(url: ColumnElement[Any]) -> ColumnElement[str]:
    return concat(sql_text(f'[{{"output":"{OUTPUT}","url":'), json_string(url), sql_text("}]"))


def _position_downloads(_flags: Flags) -> ColumnElement[str]:
    url = concat(API, sql_text("orderpositions/"), func.cast(OrderPosition.id, Text))
    url = concat(url, sql_text(f"/download/{OUTPUT}/"))
    return case((HAS_TICKET, _download(url)), else_=sql_text("[]"))


def _seat(_flags: Flags) -> ColumnElement[str]:
    seat = select(SEAT_SHAPE.object({})).where(Seat.id == OrderPosition.seat_id)
    return func.coalesce(seat.scalar_subquery(), sql_text("null"))


_POSITION_FIELDS = {
    "attendee_name_parts": _or_empty(OrderPosition.attendee_name_parts),
    "plugin_data": _or_empty(OrderPosition.plugin_data),
    "seat": _seat,
    "downloads": _position_downloads,
}
_POSITION_CHILDREN = (SEAT_SHAPE, CHECKIN_SHAPE, PRINT_LOG_SHAPE, ANSWER_SHAPE)
NESTED_POSITION_SHAPE = JsonShape(
    NESTED_POSITION_ROWS,
    fields={**_POSITION_FIELDS, "order": lambda _f: json_string(Order.code)},
    children=_POSITION_CHILDREN,
)
POSITION_SHAPE = JsonShape(POSITION_ROWS, fields=_POSITION_FIELDS, children=_POSITION_CHILDREN)


# -- fees, payments, refunds (``_finish_money``: a gift card's details) --------------------------


def _details(provider: Any, info: Any) -> Any:
    card = info["gift_card"]
    parts: list[ColumnElement[Any]] = []
    for i, key in enumerate(("id", "secret", "organizer")):
        parts += [sql_text(("{" if i == 0 else ",") + f'"{key}":'), value_json(card[key])]
    shown = concat(sql_text('{"gift_card":'), *parts, sql_text("}}"))
    is_card = and_(provider == "giftcard", func.jsonb_typeof(card) == "object")
    return lambda _f: case((is_card, shown), else_=sql_text("{}"))


FEE_SHAPE = JsonShape(
    FEE_ROWS,
    # ``include_canceled_fees``
    where=lambda f: () if f["view"].canceled_fees else (OrderFee.canceled.is_(False),),
)
PAYMENT_SHAPE = JsonShape(
    PAYMENT_ROWS,
    fields={
        "payment_url": _const("null"),
        "details": _details(OrderPayment.provider, OrderPayment.info),
    },
)
REFUND_SHAPE = JsonShape(
    REFUND_ROWS,
    fields={"details": _details(OrderRefund.provider, OrderRefund.info)},
)


# -- orders (``_finish_order``) --------------------------------------------------------------------


def _last_payment(column: Any, *where: Any) -> Any:
    return (
        select(column)
        .where(OrderPayment.order_id == Order.id, *where)
        .order_by(OrderPayment.local_id.desc())
        .limit(1)
        .scalar_subquery()
    )


def _order_downloads(_flags: Flags) -> ColumnElement[str]:
    # Canceled positions never have a ticket: any shown position's is any position's.
    tickets = select(OrderPosition.id).where(OrderPosition.order_id == Order.id, HAS_TICKET)
    url = concat(API, sql_text("orders/"), Order.code, sql_text(f"/download/{OUTPUT}/"))
    return case((tickets.exists(), _download(url)), else_=sql_text("[]"))


ORDER_SHAPE = JsonShape(
    ORDER_ROWS,
    fields={
        "event": lambda _f: json_string(SLUG),
        "payment_date": lambda _f: value_json(
            _last_payment(OrderPayment.payment_date, OrderPayment.state == "confirmed")
        ),
        "payment_provider": lambda _f: json_string(_last_payment(OrderPayment.provider)),
        "url": lambda _f: json_string(
            concat(BASE, sql_text("order/"), Order.code, sql_text("/"), Order.secret, sql_text("/"))
        ),
        "downloads": _order_downloads,
        "api_meta": _or_empty(Order.api_meta),
        "plugin_data": _or_empty(Order.plugin_data),
        "tax_rounding_mode": lambda _f: json_string(
            func.coalesce(func.nullif(Order.tax_rounding_mode, _EMPTY), SUPPORTED_ROUNDING)
        ),
    },
    children=(NESTED_POSITION_SHAPE, FEE_SHAPE, PAYMENT_SHAPE, REFUND_SHAPE),
)
