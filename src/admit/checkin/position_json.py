"""The tickets of one check-in list written as JSON by PostgreSQL (``kit/resources/sql_json.py``):
``CHECKIN_POSITION_ROWS`` with the SQL of its ``finish`` (each expression names its step).

The list whose check-ins are shown is a bound parameter (``j_list``). Pages that need Python
after their rows (``expand=``) and the search of several lists render from rows;
``tests/checkin/test_sql_json.py`` compares both paths byte for byte.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Integer, bindparam, case, func, or_

from admit.checkin.position_rows import CHECKIN_POSITION_ROWS
from admit.kit.resources.sql_json import (
    Flags,
    JsonShape,
    compact_json,
    json_or_empty,
    json_string,
    sql_text,
)
from admit.models import Checkin, Order, OrderPosition
from admit.orders.order_json import ANSWER_SHAPE
from admit.orders.order_rows import CHECKIN_ROWS

LIST = bindparam("j_list", type_=Integer)

_HIDDEN = dict(zip(CHECKIN_POSITION_ROWS.names, CHECKIN_POSITION_ROWS.columns, strict=False))


def _hidden(name: str) -> Any:
    return _HIDDEN[name].element


def _attendee_name(_flags: Flags) -> ColumnElement[str]:
    """``_finish``: the ticket's name, else its parent's, else the invoice address's."""
    own = OrderPosition.attendee_name_cached
    parent = _hidden("__parent_name")
    invoice = Order.invoice_address
    return case(
        (func.coalesce(own, sql_text("")) != sql_text(""), json_string(own)),
        (func.coalesce(parent, sql_text("")) != sql_text(""), json_string(parent)),
        (func.jsonb_typeof(invoice) == sql_text("object"), compact_json(invoice["name"])),
        else_=sql_text("null"),
    )


def _attention(_flags: Flags) -> ColumnElement[str]:
    """``_finish``: the order, the product or the variation asks for attention."""
    asks = or_(
        *(
            func.coalesce(e, False).is_(True)
            for e in (
                Order.checkin_attention,
                _hidden("__item_attention"),
                _hidden("__variation_attention"),
            )
        )
    )
    return case((asks, sql_text("true")), else_=sql_text("false"))


# Only the list's own check-ins (``_finish``).
LIST_CHECKIN_SHAPE = JsonShape(CHECKIN_ROWS, where=lambda _f: (Checkin.list_id == LIST,))
CHECKIN_POSITION_SHAPE = JsonShape(
    CHECKIN_POSITION_ROWS,
    fields={
        "attendee_name": _attendee_name,
        "attendee_name_parts": lambda _f: json_or_empty(OrderPosition.attendee_name_parts),
        "plugin_data": lambda _f: json_or_empty(OrderPosition.plugin_data),
        "seat": lambda _f: sql_text("null"),
        "downloads": lambda _f: sql_text("[]"),
        "print_logs": lambda _f: sql_text("[]"),
        "require_attention": _attention,
    },
    children=(LIST_CHECKIN_SHAPE, ANSWER_SHAPE),
)
