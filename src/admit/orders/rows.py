"""The rows a new order is written as: built once from the checked and priced request, for
every path that writes orders.

:func:`build` turns the request into complete rows (every column but the ids, defaults filled
in), so the general path's Core inserts (:func:`write`) and the fast lane's database call write
exactly the same values, and the answer is rendered from these rows without reading them back.
Datetimes are kept in UTC, as they come back from the database.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, Table, bindparam, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.questions.answers import CheckedAnswer
from admit.events.settings import value as setting_value
from admit.models import Answer, Item, Order, OrderFee, OrderPayment, OrderPosition, answer_options
from admit.orders import codes
from admit.orders.drafts import Draft, ProductKey, key_of
from admit.orders.order_fields import SUPPORTED_ROUNDING
from admit.orders.pricing import Priced, PricedOrder
from admit.orders.schemas import OrderIn, PositionIn
from admit.orders.validity import Window
from admit.tickets.secrets import generator as secret_generator
from admit.vouchers import redeem

PAYMENT_TERM_DAYS = 14  # the reference's default payment term
# A longer term would run past the calendar (year 9999); nobody waits 100 years for a payment.
_MAX_TERM_DAYS = 36_500

PLACED = "service.event.order.placed"
PLACED_REQUIRE_APPROVAL = "service.event.order.placed.require_approval"
PAID = "service.event.order.paid"
PAYMENT_CONFIRMED = "service.event.order.payment.confirmed"

ORDERS: Table = Order.__table__  # type: ignore[assignment]
_STAMP = select(Order.last_modified).where(Order.id == bindparam("order_id"))
POSITIONS: Table = OrderPosition.__table__  # type: ignore[assignment]
ANSWERS: Table = Answer.__table__  # type: ignore[assignment]
FEES: Table = OrderFee.__table__  # type: ignore[assignment]
PAYMENTS: Table = OrderPayment.__table__  # type: ignore[assignment]

# Filled in by the writer: the ids, and the order's code once a free one is found.
_LATER = {"id", "order_id", "addon_to_id", "orderposition_id"}


# Per table: its column names, and per column (name, JSON or not, what fills it when no value
# is given: "skip" | "none" | "call" | "value", with the default's callable or value).
_SPECS: dict[str, tuple[frozenset[str], list[tuple[str, bool, str, Any]]]] = {}


def _spec(table: Table) -> tuple[frozenset[str], list[tuple[str, bool, str, Any]]]:
    found = _SPECS.get(table.name)
    if found is None:
        columns = []
        for column in table.columns:
            is_json = isinstance(column.type, JSON)
            default = column.default
            if column.key in _LATER or (is_json and default is None):
                kind, arg = "skip", None
            elif default is None:
                kind, arg = "none", None
            elif default.is_callable:
                kind, arg = "call", default.arg  # type: ignore[attr-defined]
            else:
                kind, arg = "value", default.arg  # type: ignore[attr-defined]
            columns.append((column.key, is_json, kind, arg))
        found = _SPECS[table.name] = (frozenset(c.key for c in table.columns), columns)
    return found


def complete(table: Table, values: Mapping[str, Any]) -> dict[str, Any]:
    """A row with every column: ``values``, else the column's Python default (callables are
    called per row, so no two rows share a dict). Unknown names are a programming error.

    A JSON column without a value or given None is left out (SQL NULL, as the ORM leaves a
    column it never set; a JSON ``null`` would be a value). Other columns without a value are
    None."""
    names, columns = _spec(table)
    if not values.keys() <= names:
        raise KeyError(f"{table.name} has no columns {sorted(set(values) - names)}")
    row: dict[str, Any] = {}
    for key, is_json, kind, arg in columns:
        if key in values:
            value = values[key]
            if value is not None or not is_json:
                row[key] = value
        elif kind == "none":
            row[key] = None
        elif kind == "call":
            row[key] = arg(None)
        elif kind == "value":
            row[key] = arg
    return row


def utc(value: dt.datetime | None) -> dt.datetime | None:
    return value.astimezone(dt.UTC) if value is not None else None


def name_parts(data: PositionIn) -> dict[str, str]:
    if data.attendee_name_parts:
        return dict(data.attendee_name_parts)
    if data.attendee_name:
        return {"_legacy": data.attendee_name}
    return {}


def display_name(parts: Mapping[str, str]) -> str | None:
    values = [v for k, v in parts.items() if k != "_scheme" and v]
    return " ".join(values) or None


def position_values(draft: Any, price: Priced, **fields: Any) -> dict[str, Any]:
    """A new position's columns from a checked draft (its product, attendee and seat) and its
    price; ``fields`` are what the caller decides (order, numbers, secret, validity, …). Order
    creation and order changes make positions from this, so both write the same columns."""
    line, data = draft.line, draft.data
    parts = name_parts(data)
    return {
        "item_id": line.item.id,
        "variation_id": line.variation.id if line.variation else None,
        "subevent_id": line.subevent.id if line.subevent else None,
        "price": price.price,
        "tax_rate": price.tax_rate,
        "tax_value": price.tax_value,
        "tax_rule_id": price.tax_rule_id,
        "tax_code": price.tax_code,
        "discount_id": price.discount_id,
        "attendee_name_parts": parts,
        "attendee_name_cached": display_name(parts),
        "attendee_email": data.attendee_email,
        "company": data.company,
        "street": data.street,
        "zipcode": data.zipcode,
        "city": data.city,
        "country": data.country,
        "state": data.state,
        "seat_id": draft.seat.id if draft.seat else None,
        **fields,
    }


@dataclass
class NewPosition:
    positionid: int
    addon_to: int | None  # the positionid of the position it is an add-on to
    row: dict[str, Any]  # every column but the ids (``order_id``, ``addon_to_id``)
    answers: list[CheckedAnswer]
    key: ProductKey
    item: Item


@dataclass
class NewOrder:
    """A new order as rows; ``order["code"]`` is None until the writer found a free one."""

    order: dict[str, Any]
    positions: list[NewPosition]  # in request order
    fees: list[dict[str, Any]]
    payment: dict[str, Any]
    actions: list[str]  # the notification types recorded with it
    customer_identifier: str | None

    @property
    def paid(self) -> bool:
        return self.order["status"] == "p"

    def write_order(self) -> list[NewPosition]:
        """The positions in the order they are inserted: add-ons after the others (an add-on
        names its parent's id)."""
        return [p for p in self.positions if p.addon_to is None] + [
            p for p in self.positions if p.addon_to is not None
        ]

    def ledger_deltas(self) -> dict[tuple[int, int, int], tuple[int, int, int]]:
        """What the order adds to the sales ledger: (pending, paid, carts) per product."""
        counts: dict[tuple[int, int, int], int] = {}
        for position in self.positions:
            item, variation, subevent = position.key
            key = (item, variation or 0, subevent or 0)
            counts[key] = counts.get(key, 0) + 1
        return {k: (0, n, 0) if self.paid else (n, 0, 0) for k, n in counts.items()}


@dataclass
class Written:
    """The ids the database gave a new order's rows (positions and answers in request order)."""

    order_id: int
    code: str
    position_ids: list[int]
    answer_ids: list[list[int]]
    fee_ids: list[int]
    payment_id: int


def placed_actions(order: Mapping[str, Any]) -> list[str]:
    """One of the two placed types (an order that needs approval is not placed for those who
    only want orders they can fulfil); created paid (or free), its payment is confirmed too."""
    placed = PLACED_REQUIRE_APPROVAL if order["require_approval"] else PLACED
    paid = [PAYMENT_CONFIRMED, PAID] if order["status"] == "p" else []
    return [placed, *paid]


def default_expires(event: Any, now: dt.datetime) -> dt.datetime:
    """End of the day, in the event's time zone, ``payment_term_days`` (the event setting,
    the reference's 14 by default) from now, moved from a Saturday or Sunday to the Monday
    with ``payment_term_weekdays`` (on by default: some countries' law wants a payment term
    to end on a working day), and no later than the day ``payment_term_last``."""
    tz = zoneinfo.ZoneInfo(event.timezone or "UTC")
    days = setting_value(event, "payment_term_days")
    day = (now.astimezone(tz) + dt.timedelta(days=min(days, _MAX_TERM_DAYS))).date()
    if setting_value(event, "payment_term_weekdays") and day.weekday() >= 5:
        day += dt.timedelta(days=7 - day.weekday())
    last = setting_value(event, "payment_term_last")
    if last:
        day = min(day, dt.date.fromisoformat(last))
    return dt.datetime.combine(day, dt.time(23, 59, 59), tzinfo=tz).astimezone(dt.UTC)


def build(
    event: Any,
    data: OrderIn,
    drafts: Sequence[Draft],
    priced: PricedOrder,
    *,
    windows: Mapping[int, Window],
    memberships: Mapping[int, int],
    uses: Sequence[Any],
    customer_id: int | None,
    testmode: bool,
    now: dt.datetime,
    secrets: Sequence[str] | None = None,
) -> NewOrder:
    """The rows of the checked order. ``secrets``: for the positions that name none, in
    order (checked by the caller); without, fresh ones (the lane's database call checks
    them)."""
    total = priced.total
    # The client's flag alone: an order created through the API needs approval only when
    # its creator says so, as with the reference, which leaves a tax rule's
    # ``require_approval`` action to its shop (a box office that sells "paid" gets "paid").
    require_approval = data.require_approval
    paid = data.status == "p" or (total == 0 and not require_approval)
    order = complete(
        ORDERS,
        {
            "event_id": event.id,
            "code": None,
            "status": "p" if paid else "n",
            "testmode": testmode,
            "secret": codes.order_secret(),
            "email": data.email,
            "phone": data.phone,
            "locale": data.locale,
            "datetime": now,
            "expires": utc(data.expires) or default_expires(event, now),
            "total": total,
            "sales_channel": data.sales_channel,
            "comment": data.comment,
            "checkin_attention": data.checkin_attention,
            "checkin_text": data.checkin_text,
            "require_approval": require_approval,
            "valid_if_pending": data.valid_if_pending,
            "invoice_address": data.invoice_address,
            "meta_info": {},
            "customer_id": customer_id,
            "api_meta": data.api_meta,
            "custom_followup_at": data.custom_followup_at,
            "tax_rounding_mode": data.tax_rounding_mode or SUPPORTED_ROUNDING,
            "last_modified": now,
        },
    )
    n = len(drafts)
    unnamed = sum(1 for d in drafts if not d.data.secret)
    # A signed event's secrets certify each ticket's product, date and validity (its key
    # was prepared by the caller); the random ones are drawn (or given) up front.
    signed = secret_generator.issuer(event)
    fresh = iter(() if signed else codes.ticket_secrets(unnamed) if secrets is None else secrets)
    web = codes.web_secrets(n)
    pseudo = codes.pseudonymization_ids(n)
    positions = []
    for i, (draft, price) in enumerate(zip(drafts, priced.lines, strict=True)):
        window = windows[draft.positionid]
        line = draft.line
        assert line is not None
        secret = draft.data.secret or (signed.for_line(line, window) if signed else next(fresh))
        values = position_values(
            draft,
            price,
            event_id=event.id,
            positionid=draft.positionid,
            secret=secret,
            web_secret=web[i],
            pseudonymization_id=pseudo[i],
            valid_from=utc(window[0]),
            valid_until=utc(window[1]),
            used_membership_id=memberships.get(draft.positionid),
            **redeem.position_fields(line.voucher),
        )
        positions.append(
            NewPosition(
                positionid=draft.positionid,
                addon_to=draft.data.addon_to,
                row=complete(POSITIONS, values),
                answers=list(draft.answers),
                key=key_of(line),
                item=line.item,
            )
        )
    fees = [
        complete(
            FEES,
            {
                "fee_type": fee.fee_type,
                "value": fee.value,
                "description": fee.description,
                "internal_type": fee.internal_type,
                "tax_rate": taxed.rate,
                "tax_value": taxed.tax,
                "tax_rule_id": fee.tax_rule,
                "tax_code": taxed.code,
            },
        )
        for fee, taxed in zip(data.fees, priced.fees, strict=True)
    ]
    payment = complete(
        PAYMENTS,
        {
            "local_id": 1,
            "state": "confirmed" if paid else "created",
            "amount": total,
            "provider": data.payment_provider or ("free" if total == 0 else "manual"),
            "created": now,
            "payment_date": (utc(data.payment_date) or now) if paid else None,
            "info": {},
        },
    )
    return NewOrder(
        order=order,
        positions=positions,
        fees=fees,
        payment=payment,
        actions=placed_actions(order),
        customer_identifier=data.customer if customer_id is not None else None,
    )


def answer_row(answer: CheckedAnswer) -> dict[str, Any]:
    return complete(ANSWERS, {"question_id": answer.question.id, "answer": answer.answer})


# -- the general path's writer --------------------------------------------------------------

_ORDER_INSERTS: dict[str, Any] = {}


def _order_insert(dialect: str) -> Any:
    """INSERT of an order that does nothing (returns no row) when its code is taken."""
    stmt = _ORDER_INSERTS.get(dialect)
    if stmt is None:
        make = postgresql.insert if dialect == "postgresql" else sqlite.insert
        stmt = (
            make(ORDERS)
            .on_conflict_do_nothing(index_elements=["event_id", "code"])
            .returning(ORDERS.c.id)
        )
        _ORDER_INSERTS[dialect] = stmt
    return stmt


_POSITION_INSERT = insert(POSITIONS).returning(POSITIONS.c.id, sort_by_parameter_order=True)
_ANSWER_INSERT = insert(ANSWERS).returning(ANSWERS.c.id, sort_by_parameter_order=True)
_OPTION_INSERT = insert(answer_options)
_FEE_INSERT = insert(FEES).returning(FEES.c.id, sort_by_parameter_order=True)
_PAYMENT_INSERT = insert(PAYMENTS).returning(PAYMENTS.c.id)


async def _ids(session: AsyncSession, stmt: Any, rows: list[dict[str, Any]]) -> list[int]:
    if not rows:
        return []
    return list((await session.execute(stmt, rows)).scalars())


async def write(session: AsyncSession, new: NewOrder) -> Written:
    """Inserts the order's rows (Core statements built once, one per table and level)."""
    conn = await session.connection()
    stmt = _order_insert(conn.dialect.name)
    order_id = None
    for code in codes.order_code_candidates():
        order_id = (await conn.execute(stmt, {**new.order, "code": code})).scalar()
        if order_id is not None:
            new.order["code"] = code
            break
    assert order_id is not None
    ids: dict[int, int] = {}
    for level in (False, True):
        batch = [p for p in new.positions if (p.addon_to is not None) == level]
        rows = [
            {
                **p.row,
                "order_id": order_id,
                "addon_to_id": ids[p.addon_to] if p.addon_to is not None else None,
            }
            for p in batch
        ]
        for position, position_id in zip(
            batch, await _ids(session, _POSITION_INSERT, rows), strict=True
        ):
            ids[position.positionid] = position_id
    position_ids = [ids[p.positionid] for p in new.positions]
    answers = [
        (pid, a) for p, pid in zip(new.positions, position_ids, strict=True) for a in p.answers
    ]
    answer_ids = await _ids(
        session, _ANSWER_INSERT, [{**answer_row(a), "orderposition_id": pid} for pid, a in answers]
    )
    options = [
        {"answer_id": aid, "option_id": o.id}
        for aid, (_, a) in zip(answer_ids, answers, strict=True)
        for o in a.options
    ]
    if options:
        await session.execute(_OPTION_INSERT, options)
    fee_ids = await _ids(session, _FEE_INSERT, [{**f, "order_id": order_id} for f in new.fees])
    payment_id = (
        await session.execute(_PAYMENT_INSERT, {**new.payment, "order_id": order_id})
    ).scalar_one()
    # The stamp as the database left it: its triggers (``models/stamp_triggers.py``) move it to
    # the transaction's start, and on SQLite on with every row written after the order's.
    new.order["last_modified"] = await conn.scalar(_STAMP, {"order_id": order_id})
    per_position = iter(answer_ids)
    return Written(
        order_id=order_id,
        code=new.order["code"],
        position_ids=position_ids,
        answer_ids=[[next(per_position) for _ in p.answers] for p in new.positions],
        fee_ids=fee_ids,
        payment_id=payment_id,
    )
