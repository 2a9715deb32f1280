"""How orders and order positions render for GETs, declared against their documented shapes
(``order_out.py``, see ``kit/resources/render.py``): the same JSON as ``serialize.order_dict`` /
``position_dict`` completed by ``downloads_field``, without ORM objects.

A page of orders costs one statement for the orders (with their count) and one per kind of
child: positions, answers, answer options, check-ins, payments, and (only for orders or
positions that have some) fees, refunds, seats and print logs. Money comes from the database
as decimals of the column's scale and is written as their text (``"23.00"``).

``finish`` functions read what the request knows from ``extra``: the view (``View``), and per
event id its slug (``slugs``), the shop's order page base (``bases``) and the API base of
the download URLs (``apis``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from sqlalchemy import case, select

from admit.kit.resources.render import Nested, Rows
from admit.models import (
    Answer,
    Checkin,
    Customer,
    Device,
    Item,
    Order,
    OrderFee,
    OrderPayment,
    OrderPosition,
    OrderRefund,
    PrintLog,
    Question,
    QuestionOption,
    Seat,
    answer_options,
)
from admit.orders.order_fields import SUPPORTED_ROUNDING
from admit.orders.order_out import (
    OrderFeeOut,
    OrderOut,
    OrderPositionOut,
    PaymentOut,
    PositionAnswer,
    PositionCheckin,
    PrintLogOut,
    RefundOut,
    SeatRef,
)
from admit.orders.serialize import _gift_card_details
from admit.seating.render import seat_name

OUTPUT = "pdf"


class OptionRef(BaseModel):
    """An option chosen in an answer (split into ``options`` and ``option_identifiers``)."""

    id: int
    identifier: str


# -- answers, check-ins, seats, print logs ------------------------------------------------------


def _finish_answer(row: dict[str, Any], _parent: Any, _extra: Mapping[str, Any]) -> None:
    chosen = row.pop("__options")
    row["options"] = [o["id"] for o in chosen]
    row["option_identifiers"] = [o["identifier"] for o in chosen]


OPTION_ROWS = Rows(OptionRef, QuestionOption)
ANSWER_ROWS = Rows(
    PositionAnswer,
    Answer,
    # The answers' statement names the questions table: joined by the Nested's ``where``.
    columns={"question_identifier": Question.identifier},
    computed=("options", "option_identifiers"),
    children=(
        Nested(
            "__options",
            answer_options.c.answer_id,
            Answer.id,
            rows=OPTION_ROWS,
            where=(QuestionOption.id == answer_options.c.option_id,),
            order_by=(QuestionOption.id,),
            parent_field="__id",  # answers show no id
        ),
    ),
    hidden={"__id": Answer.id},
    finish=_finish_answer,
)
ANSWERS = Nested.of(OrderPosition.answers, ANSWER_ROWS, where=(Question.id == Answer.question_id,))

CHECKIN_ROWS = Rows(PositionCheckin, Checkin, columns={"device_id": Checkin.device_number})
# A position's successful check-ins on every list (the check-in list's view keeps its own).
CHECKINS = Nested(
    "checkins",
    Checkin.position_id,
    OrderPosition.id,
    rows=CHECKIN_ROWS,
    where=(Checkin.successful.is_(True),),
    order_by=(Checkin.datetime, Checkin.id),
)


class _SeatView:
    """A seat row read as the attributes ``seat_name`` reads."""

    __slots__ = ("row",)

    def __init__(self, row: dict[str, Any]) -> None:
        self.row = row

    def __getattr__(self, name: str) -> Any:
        return self.row[name]


def _finish_seat(row: dict[str, Any], _parent: Any, _extra: Mapping[str, Any]) -> None:
    row["name"] = seat_name(_SeatView(row))  # type: ignore[arg-type]


SEAT_ROWS = Rows(SeatRef, Seat, computed=("name",), finish=_finish_seat)
# Positions name their seat by a hidden column; only pages with seats run the statement.
SEAT = Nested("seat", Seat.id, OrderPosition.seat_id, rows=SEAT_ROWS, parent_field="__seat_id")


def _finish_print_log(row: dict[str, Any], _parent: Any, _extra: Mapping[str, Any]) -> None:
    row["info"] = row["info"] or {}


_DEVICE_NUMBER = (
    select(Device.device_id).where(Device.id == PrintLog.device_id).correlate(PrintLog)
).scalar_subquery()
PRINT_LOG_ROWS = Rows(
    PrintLogOut, PrintLog, columns={"device_id": _DEVICE_NUMBER}, finish=_finish_print_log
)
# Only positions flagged ``has_print_logs`` (a hidden column naming them) run the statement.
PRINT_LOGS = Nested(
    "print_logs",
    PrintLog.position_id,
    OrderPosition.id,
    rows=PRINT_LOG_ROWS,
    order_by=(PrintLog.datetime, PrintLog.id),
    parent_field="__print_key",
)


# -- positions --------------------------------------------------------------------------------

_GENERATES = (
    select(Item.generate_tickets).where(Item.id == OrderPosition.item_id).correlate(OrderPosition)
).scalar_subquery()
_POSITION_HIDDEN = {
    "__seat_id": OrderPosition.seat_id,
    "__print_key": case((OrderPosition.has_print_logs.is_(True), OrderPosition.id), else_=None),
    "__generates": _GENERATES,
}


def refuses_downloads(status: str, require_approval: bool, valid_if_pending: bool) -> bool:
    """Whether the order's tickets cannot be downloaded now (``tickets.downloads``' rules)."""
    if status == "p":
        return bool(require_approval)
    if status == "n":
        return bool(require_approval) or not valid_if_pending
    return True


def has_ticket(row: dict[str, Any], refused: bool) -> bool:
    """Whether the position's ticket can be downloaded (``tickets.downloads`` rules: not
    canceled, the order allows it, the product generates one; unset: not for add-ons)."""
    if refused or row["canceled"]:
        return False
    chosen = row["__generates"]
    if chosen is not None:
        return bool(chosen)
    return row["addon_to"] is None


def _finish_position(
    row: dict[str, Any], order: dict[str, Any] | None, extra: Mapping[str, Any]
) -> None:
    if order is not None:  # within an order (unfinished: ``event`` is still its id)
        row["order"] = order["code"]
        refused = refuses_downloads(
            order["status"], order["require_approval"], order["valid_if_pending"]
        )
        api = extra["apis"][order["event"]]
    else:
        refused = refuses_downloads(row["__status"], row["__approval"], row["__pending_ok"])
        api = extra["api"]
    row["attendee_name_parts"] = row["attendee_name_parts"] or {}
    row["plugin_data"] = row["plugin_data"] or {}
    seat = row["seat"]
    row["seat"] = seat[0] if seat else None
    if has_ticket(row, refused):
        url = f"{api}orderpositions/{row['id']}/download/pdf/"
        row["downloads"] = [{"output": OUTPUT, "url": url}]
    else:
        row["downloads"] = []


_POSITION_CHILDREN = (SEAT, CHECKINS, PRINT_LOGS, ANSWERS)
_COMPUTED = ("downloads",)
_OMIT = ("pdf_data",)
_NAME = {"attendee_name": OrderPosition.attendee_name_cached}

# Positions within an order (the order is their parent row).
NESTED_POSITION_ROWS = Rows(
    OrderPositionOut,
    OrderPosition,
    columns=_NAME,
    computed=_COMPUTED,
    children=_POSITION_CHILDREN,
    hidden=_POSITION_HIDDEN,
    omit=_OMIT,
    finish=_finish_position,
)
# Positions on their own (``E/orderpositions/``): their statement joins the order.
POSITION_ROWS = Rows(
    OrderPositionOut,
    OrderPosition,
    columns={**_NAME, "order": Order.code},
    computed=_COMPUTED,
    children=_POSITION_CHILDREN,
    hidden={
        **_POSITION_HIDDEN,
        "__status": Order.status,
        "__approval": Order.require_approval,
        "__pending_ok": Order.valid_if_pending,
    },
    omit=_OMIT,
    finish=_finish_position,
)


# -- fees, payments, refunds ---------------------------------------------------------------------


def _finish_money(row: dict[str, Any], _parent: Any, _extra: Mapping[str, Any]) -> None:
    row["details"] = _gift_card_details(row["provider"], row["__info"])


FEE_ROWS = Rows(OrderFeeOut, OrderFee)
PAYMENT_ROWS = Rows(
    PaymentOut,
    OrderPayment,
    computed=("payment_url", "details"),
    hidden={"__info": OrderPayment.info},
    finish=_finish_money,
)
_PAID_BY = (
    select(OrderPayment.local_id)
    .where(OrderPayment.id == OrderRefund.payment_id)
    .correlate(OrderRefund)
    .scalar_subquery()
)
REFUND_ROWS = Rows(
    RefundOut,
    OrderRefund,
    columns={"payment": _PAID_BY},
    computed=("details",),
    hidden={"__info": OrderRefund.info},
    finish=_finish_money,
)


# -- orders ---------------------------------------------------------------------------------------

_CUSTOMER = (
    select(Customer.identifier).where(Customer.id == Order.customer_id).correlate(Order)
).scalar_subquery()


def _finish_order(row: dict[str, Any], _parent: Any, extra: Mapping[str, Any]) -> None:
    event_id = row["event"]
    row["event"] = extra["slugs"][event_id]
    payments = row["payments"]
    confirmed = [p for p in payments if p["state"] == "confirmed"]
    row["payment_date"] = confirmed[-1]["payment_date"] if confirmed else None
    row["payment_provider"] = payments[-1]["provider"] if payments else None
    code = row["code"]
    row["url"] = f"{extra['bases'][event_id]}order/{code}/{row['secret']}/"
    if not extra["view"].canceled_fees:
        row["fees"] = [f for f in row["fees"] if not f["canceled"]]
    if any(p["downloads"] for p in row["positions"]):
        url = f"{extra['apis'][event_id]}orders/{code}/download/pdf/"
        row["downloads"] = [{"output": OUTPUT, "url": url}]
    else:
        row["downloads"] = []
    row["api_meta"] = row["api_meta"] or {}
    row["plugin_data"] = row["plugin_data"] or {}
    row["tax_rounding_mode"] = row["tax_rounding_mode"] or SUPPORTED_ROUNDING


def _shown(canceled: bool) -> Any:
    return lambda extra: extra["view"].canceled_positions is canceled


# Orders show no id: their children find them by a hidden one.
_OF_ORDER = {"parent_field": "__id"}

ORDER_ROWS = Rows(
    OrderOut,
    Order,
    columns={"customer": _CUSTOMER},
    computed=("payment_date", "payment_provider", "url", "downloads"),
    children=(
        # Canceled positions only when asked for (``include_canceled_positions``).
        Nested.of(
            Order.positions,
            NESTED_POSITION_ROWS,
            where=(OrderPosition.canceled.is_(False),),
            when=_shown(False),
            **_OF_ORDER,
        ),
        Nested.of(Order.positions, NESTED_POSITION_ROWS, when=_shown(True), **_OF_ORDER),
        Nested.of(Order.fees, FEE_ROWS, probe=True, **_OF_ORDER),
        Nested.of(Order.payments, PAYMENT_ROWS, **_OF_ORDER),
        Nested.of(Order.refunds, REFUND_ROWS, probe=True, **_OF_ORDER),
    ),
    hidden={"__id": Order.id},
    finish=_finish_order,
)
