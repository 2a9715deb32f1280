"""Query-string filters and orderings of the order and order position lists, and the flags
that choose what an order or position shows (canceled positions and fees, ``pdf_data``).

The names and their meaning follow the reference's lists. Filters by product, variation or
date of an order look at all its positions, canceled ones included, as the reference does.
Text searches escape ``%`` and ``_``: what the caller typed is matched as typed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from sqlalchemy import ColumnElement, and_, exists, func, or_, select
from sqlalchemy.orm import aliased

from admit.kit.http.errors import FieldErrors
from admit.kit.resources.filtering import (
    Filter,
    FilterSet,
    Ordering,
    parse_bool,
    parse_datetime,
    parse_int,
    parse_str,
)
from admit.models import Checkin, Event, Order, OrderPayment, OrderPosition, SubEvent, Voucher
from admit.orders import customer_link

MAX_LIST = 1000  # values in one ``__in`` filter: enough for any client, bounded for the database


def _bounded(values: list[Any]) -> list[Any]:
    if len(values) > MAX_LIST:
        raise ValueError(f"Ensure this list has no more than {MAX_LIST} values.")
    return values


def parse_strs(raw: str) -> list[str]:
    """A comma-separated list of strings (blanks dropped)."""
    return _bounded([part.strip() for part in raw.split(",") if part.strip()])


def parse_ints(raw: str) -> list[int]:
    """A comma-separated list of whole numbers (ids)."""
    try:
        return _bounded([parse_int(part) for part in raw.split(",") if part.strip()])
    except ValueError as exc:
        if "no more than" in str(exc):
            raise
        raise ValueError("Enter a comma-separated list of whole numbers.") from None


# -- what an order or position shows -------------------------------------------------------

FLAGS = ("include_canceled_positions", "include_canceled_fees", "pdf_data")


@dataclass(frozen=True)
class View:
    """What the caller asked to see besides the defaults (all off: the reference's default)."""

    canceled_positions: bool = False
    canceled_fees: bool = False
    pdf_data: bool = False


def view_of(params: Mapping[str, str]) -> View:
    """The flags of the query string; a value that is no boolean is a 400 naming it."""
    values: dict[str, bool] = {}
    errors: dict[str, list[str]] = {}
    for name in FLAGS:
        raw = params.get(name)
        if not raw:
            values[name] = False
            continue
        try:
            values[name] = parse_bool(raw)
        except ValueError as exc:
            errors[name] = [str(exc)]
    if errors:
        raise FieldErrors(errors)
    return View(
        values["include_canceled_positions"],
        values["include_canceled_fees"],
        values["pdf_data"],
    )


def request_view(request: Request) -> View:
    return view_of(request.query_params)


def _flags() -> tuple[Filter, ...]:
    """The flags as filters that leave the query alone: validated with the other filters, so
    one 400 names every bad value."""
    return tuple(Filter(name, parse_bool, lambda query, _value: query) for name in FLAGS)


# -- orders --------------------------------------------------------------------------------


def _orders_with(*conditions: ColumnElement[bool]) -> ColumnElement[bool]:
    """Orders with at least one position (canceled or not) meeting ``conditions``."""
    return Order.id.in_(select(OrderPosition.order_id).where(*conditions))


def _orders_with_date(condition: ColumnElement[bool]) -> ColumnElement[bool]:
    return Order.id.in_(
        select(OrderPosition.order_id)
        .join(SubEvent, SubEvent.id == OrderPosition.subevent_id)
        .where(condition)
    )


def _date_after(value: dt.datetime) -> ColumnElement[bool]:
    """A date that ends after ``value`` (one without an end: begins after it); exclusive."""
    return _orders_with_date(
        or_(SubEvent.date_to > value, and_(SubEvent.date_to.is_(None), SubEvent.date_from > value))
    )


def _date_before(value: dt.datetime) -> ColumnElement[bool]:
    """A date that begins before ``value``; exclusive."""
    return _orders_with_date(SubEvent.date_from < value)


def _invoice(key: str) -> Any:
    return Order.invoice_address[key].as_string()


def _order_search(value: str) -> ColumnElement[bool]:
    """The order code (also as ``<event slug>-<code>``), e-mail, comment, invoice name and
    company, or a position's attendee name or e-mail (substrings) or ticket secret (prefix)."""
    code: ColumnElement[bool] = Order.code.icontains(value.upper(), autoescape=True)
    if "-" in value:
        slug, _, rest = value.rpartition("-")
        slugs = select(Event.id).where(Event.slug.icontains(slug, autoescape=True))
        code = or_(
            code,
            and_(
                Order.event_id.in_(slugs),
                Order.code.icontains(rest.upper(), autoescape=True),
            ),
        )
    positions = exists().where(
        OrderPosition.order_id == Order.id,
        or_(
            OrderPosition.attendee_name_cached.icontains(value, autoescape=True),
            OrderPosition.attendee_email.icontains(value, autoescape=True),
            OrderPosition.secret.istartswith(value, autoescape=True),
        ),
    )
    return or_(
        code,
        Order.email.icontains(value, autoescape=True),
        Order.comment.icontains(value, autoescape=True),
        _invoice("name").icontains(value, autoescape=True),
        _invoice("company").icontains(value, autoescape=True),
        positions,
    )


def _statuses(values: list[str]) -> ColumnElement[bool]:
    return Order.status.in_([v.lower() for v in values])


ORDER_FILTERS = FilterSet(
    (
        # Status and code: any case (codes are upper case, states lower case).
        Filter.where("status", parse_str, lambda v: Order.status == v.lower()),
        Filter.where("status__in", parse_strs, _statuses),
        Filter.where("code", parse_str, lambda v: Order.code == v.upper()),
        Filter.where("code__in", parse_strs, lambda v: Order.code.in_([c.upper() for c in v])),
        Filter.where("email", parse_str, lambda v: func.lower(Order.email) == v.lower()),
        Filter.eq("locale", Order.locale),
        Filter.eq("sales_channel", Order.sales_channel),
        Filter.boolean("testmode", Order.testmode),
        Filter.boolean("require_approval", Order.require_approval),
        Filter.where(
            "payment_provider",
            parse_str,
            lambda v: exists().where(OrderPayment.order_id == Order.id, OrderPayment.provider == v),
        ),
        Filter.where("item", parse_int, lambda v: _orders_with(OrderPosition.item_id == v)),
        Filter.where("item__in", parse_ints, lambda v: _orders_with(OrderPosition.item_id.in_(v))),
        Filter.where(
            "variation", parse_int, lambda v: _orders_with(OrderPosition.variation_id == v)
        ),
        Filter.where("subevent", parse_int, lambda v: _orders_with(OrderPosition.subevent_id == v)),
        Filter.where("subevent_after", parse_datetime, _date_after),
        Filter.where("subevent_before", parse_datetime, _date_before),
        Filter.where("modified_since", parse_datetime, lambda v: Order.last_modified >= v),
        Filter.where("created_since", parse_datetime, lambda v: Order.datetime >= v),
        Filter.where("created_before", parse_datetime, lambda v: Order.datetime < v),
        Filter.where("customer", parse_str, customer_link.by_identifier),
        Filter.where("search", parse_str, _order_search),
        *_flags(),
    )
)
ORDER_ORDERING = Ordering(
    fields={
        "datetime": Order.datetime,
        "code": Order.code,
        "last_modified": Order.last_modified,
        "status": Order.status,
        "cancellation_date": Order.cancellation_date,
    },
    default=("datetime",),
    pk=Order.id,
)


# -- order positions -----------------------------------------------------------------------

Parent = aliased(OrderPosition, name="parent_position")


def _parent_has(condition: Callable[[Any], ColumnElement[bool]]) -> ColumnElement[bool]:
    """The position is an add-on to a position meeting ``condition``."""
    return OrderPosition.addon_to_id.in_(select(Parent.id).where(condition(Parent)))


def _name_is(value: str) -> ColumnElement[bool]:
    """The attendee name, or that of the position it is an add-on to, in any case."""
    low = value.lower()
    return or_(
        func.lower(OrderPosition.attendee_name_cached) == low,
        _parent_has(lambda p: func.lower(p.attendee_name_cached) == low),
    )


def _position_search(value: str) -> ColumnElement[bool]:
    """Ticket secret or order code (prefix); attendee name or e-mail (own or the main
    position's), order e-mail, invoice name or company (substring)."""

    def attendee(p: Any) -> ColumnElement[bool]:
        return or_(
            p.attendee_name_cached.icontains(value, autoescape=True),
            p.attendee_email.icontains(value, autoescape=True),
        )

    return or_(
        OrderPosition.secret.istartswith(value, autoescape=True),
        Order.code.istartswith(value.upper(), autoescape=True),
        attendee(OrderPosition),
        _parent_has(attendee),
        Order.email.icontains(value, autoescape=True),
        _invoice("name").icontains(value, autoescape=True),
        _invoice("company").icontains(value, autoescape=True),
    )


_checked_in = exists().where(Checkin.position_id == OrderPosition.id, Checkin.successful.is_(True))


def _voucher_code(value: str) -> ColumnElement[bool]:
    return OrderPosition.voucher_id.in_(
        select(Voucher.id).where(
            Voucher.event_id == OrderPosition.event_id, func.lower(Voucher.code) == value.lower()
        )
    )


def _in(name: str, column: Any) -> tuple[Filter, Filter]:
    return (
        Filter.eq(name, column, parse_int),
        Filter.where(f"{name}__in", parse_ints, lambda v: column.in_(v)),
    )


# The position list's query joins the order: its columns can be used directly.
POSITION_FILTERS = FilterSet(
    (
        Filter.where("order", parse_str, lambda v: Order.code == v.upper()),
        Filter.eq("order__status", Order.status),
        Filter.where("order__status__in", parse_strs, lambda v: Order.status.in_(v)),
        *_in("item", OrderPosition.item_id),
        *_in("variation", OrderPosition.variation_id),
        *_in("subevent", OrderPosition.subevent_id),
        *_in("addon_to", OrderPosition.addon_to_id),
        Filter.eq("secret", OrderPosition.secret),
        Filter.eq("pseudonymization_id", OrderPosition.pseudonymization_id),
        Filter.eq("voucher", OrderPosition.voucher_id, parse_int),
        Filter.where("voucher__code", parse_str, _voucher_code),
        # Checked in (successfully, on any list) at least once, or never.
        Filter.where("has_checkin", parse_bool, lambda v: _checked_in if v else ~_checked_in),
        Filter.where("attendee_name", parse_str, _name_is),
        Filter.where("search", parse_str, _position_search),
        *_flags(),
    )
)
POSITION_ORDERING = Ordering(
    fields={
        "order__code": Order.code,
        "order__datetime": Order.datetime,
        "positionid": OrderPosition.positionid,
        "attendee_name": OrderPosition.attendee_name_cached,
        "order__status": Order.status,
    },
    default=("order__datetime", "positionid"),
    pk=OrderPosition.id,
)
