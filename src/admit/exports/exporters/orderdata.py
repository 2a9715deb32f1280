"""Reading an event's orders for exports: the catalog once, the orders in chunks.

The order list and the JSON export read the same way: what rows refer to (events, products,
variations, dates, questions and their options) is loaded once per run, since it is bounded
by the catalog; orders, positions and fees are streamed in chunks through one cursor each,
and what a chunk needs beyond its own rows (answers, payments, totals) is loaded per chunk in
a fixed number of queries. Memory therefore stays bounded by the chunk size whatever the
number of orders.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, false, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.taxes.compute import currency_places
from admit.exports.exporters.answers import AnswerColumns, load_answer_columns
from admit.exports.reader import Reader, among_ids
from admit.jobs.queue import JobFailed
from admit.kit.resources.i18n import localized
from admit.models import (
    Event,
    Item,
    ItemVariation,
    Order,
    OrderFee,
    OrderPayment,
    OrderPosition,
    Seat,
    SubEvent,
    Voucher,
)


def zone(name: str | None) -> zoneinfo.ZoneInfo:
    try:
        return zoneinfo.ZoneInfo(name or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return zoneinfo.ZoneInfo("UTC")


@dataclass
class EventData:
    """One exported event and the names its rows refer to, in the export's language."""

    id: int
    slug: str
    name: str
    tz: zoneinfo.ZoneInfo
    currency: str
    places: int
    has_subevents: bool
    items: dict[int, str] = field(default_factory=dict)
    variations: dict[int, str] = field(default_factory=dict)
    # subevent id -> (name, local start)
    subevents: dict[int, tuple[str, dt.datetime]] = field(default_factory=dict)


@dataclass
class Catalog:
    events: dict[int, EventData]
    answers: AnswerColumns

    @property
    def any_subevents(self) -> bool:
        return any(e.has_subevents for e in self.events.values())


async def load_events(
    session: AsyncSession, event_ids: Sequence[int], locale: str
) -> dict[int, EventData]:
    """The events with their products, variations and dates (names in ``locale``)."""
    query = select(
        Event.id,
        Event.slug,
        Event.name,
        Event.timezone,
        Event.currency,
        Event.has_subevents,
    ).where(Event.id.in_(list(event_ids)))
    events: dict[int, EventData] = {}
    for row in await session.execute(query.order_by(Event.id)):
        events[row.id] = EventData(
            id=row.id,
            slug=row.slug,
            name=localized(row.name, locale),
            tz=zone(row.timezone),
            currency=row.currency,
            places=currency_places(row.currency),
            has_subevents=bool(row.has_subevents),
        )
    if not events and event_ids:
        raise JobFailed("The event no longer exists.")
    ids = list(events)
    items = select(Item.id, Item.event_id, Item.name).where(Item.event_id.in_(ids))
    for row in await session.execute(items):
        events[row.event_id].items[row.id] = localized(row.name, locale)
    variations = (
        select(ItemVariation.id, Item.event_id, ItemVariation.value)
        .join(Item, Item.id == ItemVariation.item_id)
        .where(Item.event_id.in_(ids))
    )
    for row in await session.execute(variations):
        events[row.event_id].variations[row.id] = localized(row.value, locale)
    dates = select(SubEvent.id, SubEvent.event_id, SubEvent.name, SubEvent.date_from).where(
        SubEvent.event_id.in_(ids)
    )
    for row in await session.execute(dates):
        event = events[row.event_id]
        event.subevents[row.id] = (localized(row.name, locale), row.date_from.astimezone(event.tz))
    return events


async def load_catalog(
    session: AsyncSession, event_ids: Sequence[int], locale: str, *, group_choices: bool
) -> Catalog:
    """The events and the answer columns of their questions."""
    events = await load_events(session, event_ids, locale)
    zones = {event_id: event.tz for event_id, event in events.items()}
    answers = await load_answer_columns(session, zones, locale, group_choices=group_choices)
    return Catalog(events, answers)


# -- filters ---------------------------------------------------------------------------------


def day_start(day: dt.date, tz: zoneinfo.ZoneInfo) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tz).astimezone(dt.UTC)


def order_filters(
    events: dict[int, EventData],
    *,
    paid_only: bool = False,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
) -> list[ColumnElement[bool]]:
    """Which orders an export covers: its events; paid only; ordered from ``date_from`` to
    ``date_to`` (whole days, inclusive, in each event's time zone)."""
    conditions: list[ColumnElement[bool]] = [Order.event_id.in_(list(events))]
    if paid_only:
        conditions.append(Order.status == "p")
    if date_from is not None or date_to is not None:
        by_zone: dict[str, list[int]] = {}
        zones: dict[str, zoneinfo.ZoneInfo] = {}
        for event in events.values():
            by_zone.setdefault(event.tz.key, []).append(event.id)
            zones[event.tz.key] = event.tz
        per_zone = []
        for key, ids in by_zone.items():
            bounds = [Order.event_id.in_(ids)]
            if date_from is not None:
                bounds.append(Order.datetime >= day_start(date_from, zones[key]))
            if date_to is not None:
                end = day_start(date_to + dt.timedelta(days=1), zones[key])
                bounds.append(Order.datetime < end)
            per_zone.append(and_(*bounds))
        conditions.append(or_(*per_zone) if per_zone else false())
    return conditions


async def count(session: AsyncSession, statement: Select[Any]) -> int:
    inner = statement.order_by(None).subquery()
    return int(await session.scalar(select(func.count()).select_from(inner)) or 0)


# -- statements --------------------------------------------------------------------------------


def orders_query(conditions: Iterable[ColumnElement[bool]]) -> Select[Any]:
    return (
        select(
            Order.id,
            Order.event_id,
            Order.code,
            Order.status,
            Order.testmode,
            Order.secret,
            Order.email,
            Order.phone,
            Order.locale,
            Order.datetime,
            Order.expires,
            Order.total,
            Order.sales_channel,
            Order.comment,
            Order.checkin_attention,
            Order.require_approval,
            Order.valid_if_pending,
            Order.invoice_address,
            Order.cancellation_date,
            Order.last_modified,
        )
        .where(*conditions)
        .order_by(Order.event_id, Order.id)
    )


def order_rows_query(conditions: Iterable[ColumnElement[bool]]) -> Select[Any]:
    """The columns the order list shows of an order, read by position in this order."""
    return (
        select(
            Order.id,
            Order.event_id,
            Order.code,
            Order.status,
            Order.testmode,
            Order.email,
            Order.phone,
            Order.locale,
            Order.datetime,
            Order.total,
            Order.sales_channel,
            Order.comment,
            Order.invoice_address,
        )
        .where(*conditions)
        .order_by(Order.event_id, Order.id)
    )


def positions_query(conditions: Iterable[ColumnElement[bool]]) -> Select[Any]:
    """Positions with what the order list shows of their order, seat and voucher, ordered by
    order and position (so an add-on's parent comes in the same order, before it as a rule).
    The columns are read by position, in this order."""
    return (
        select(
            OrderPosition.id,
            OrderPosition.order_id,
            OrderPosition.positionid,
            OrderPosition.item_id,
            OrderPosition.variation_id,
            OrderPosition.subevent_id,
            OrderPosition.price,
            OrderPosition.tax_rate,
            OrderPosition.tax_value,
            OrderPosition.attendee_name_cached,
            OrderPosition.attendee_email,
            OrderPosition.company,
            OrderPosition.street,
            OrderPosition.zipcode,
            OrderPosition.city,
            OrderPosition.country,
            OrderPosition.state,
            OrderPosition.secret,
            OrderPosition.canceled,
            OrderPosition.addon_to_id,
            Order.event_id,
            Order.code,
            Order.status,
            Order.email,
            Order.datetime,
            Seat.seat_label,
            Seat.zone_name,
            Seat.row_name,
            Seat.seat_number,
            Voucher.code.label("voucher"),
        )
        .join(Order, Order.id == OrderPosition.order_id)
        .outerjoin(Seat, Seat.id == OrderPosition.seat_id)
        .outerjoin(Voucher, Voucher.id == OrderPosition.voucher_id)
        .where(*conditions)
        .order_by(Order.event_id, OrderPosition.order_id, OrderPosition.positionid)
    )


def fees_query(conditions: Iterable[ColumnElement[bool]]) -> Select[Any]:
    return (
        select(
            OrderFee.id,
            OrderFee.fee_type,
            OrderFee.description,
            OrderFee.internal_type,
            OrderFee.value,
            OrderFee.tax_rate,
            OrderFee.tax_value,
            OrderFee.tax_rule_id,
            OrderFee.canceled,
            Order.event_id,
            Order.code,
            Order.status,
        )
        .join(Order, Order.id == OrderFee.order_id)
        .where(*conditions)
        .order_by(Order.event_id, OrderFee.order_id, OrderFee.id)
    )


# -- per chunk -----------------------------------------------------------------------------------


@dataclass
class OrderExtras:
    """What an order row shows beyond its own columns."""

    positions: int = 0
    taxes: Decimal = Decimal("0")
    provider: str | None = None
    payment_date: dt.datetime | None = None
    paid: dict[str, Decimal] = field(default_factory=dict)  # confirmed amount per provider


class OrderExtrasReader:
    """Position counts, taxes and payments of a chunk of orders: three queries a chunk,
    compiled once per export."""

    def __init__(self, dialect: str) -> None:
        live = OrderPosition.canceled.is_(False)
        self.positions = (
            select(
                OrderPosition.order_id,
                func.count(),
                func.coalesce(func.sum(OrderPosition.tax_value), 0),
            )
            .where(among_ids(OrderPosition.order_id, dialect), live)
            .group_by(OrderPosition.order_id)
        )
        self.fees = (
            select(OrderFee.order_id, func.sum(OrderFee.tax_value))
            .where(among_ids(OrderFee.order_id, dialect), OrderFee.canceled.is_(False))
            .group_by(OrderFee.order_id)
        )
        self.payments = (
            select(
                OrderPayment.order_id,
                OrderPayment.state,
                OrderPayment.amount,
                OrderPayment.provider,
                OrderPayment.payment_date,
            )
            .where(among_ids(OrderPayment.order_id, dialect))
            .order_by(OrderPayment.order_id, OrderPayment.local_id)
        )

    async def read(self, reader: Reader, order_ids: list[int]) -> dict[int, OrderExtras]:
        extras = {order_id: OrderExtras() for order_id in order_ids}
        ids = {"ids": order_ids}
        for order_id, n, tax in await reader.fetch(self.positions, ids):
            found = extras[order_id]
            found.positions = int(n)
            found.taxes += Decimal(tax)
        for order_id, tax in await reader.fetch(self.fees, ids):
            extras[order_id].taxes += Decimal(tax or 0)
        for order_id, state, amount, provider, paid_at in await reader.fetch(self.payments, ids):
            found = extras[order_id]
            found.provider = provider
            if state == "confirmed":
                found.payment_date = paid_at or found.payment_date
                found.paid[provider] = found.paid.get(provider, Decimal("0")) + amount
        return extras


async def payment_providers(
    session: AsyncSession, conditions: Iterable[ColumnElement[bool]]
) -> list[str]:
    """The providers of confirmed payments of the exported orders (one column each)."""
    query = (
        select(OrderPayment.provider)
        .join(Order, Order.id == OrderPayment.order_id)
        .where(*conditions, OrderPayment.state == "confirmed")
        .distinct()
    )
    return sorted(await session.scalars(query))


def seat_name(label: str | None, zone: str | None, row: str | None, number: str | None) -> Any:
    if label:
        return label
    parts = [p for p in (zone, row, number) if p]
    return ", ".join(parts) or None


_PARENT_NUMBERS = select(OrderPosition.id, OrderPosition.positionid)


async def parent_numbers(reader: Reader, ids: list[int]) -> dict[int, int]:
    query = _PARENT_NUMBERS.where(among_ids(OrderPosition.id, reader.dialect.name))
    return {pos_id: number for pos_id, number in await reader.fetch(query, {"ids": ids})}
