"""The whole event as one JSON document (``json``): catalog and orders.

``{"event": {name, slug, organizer, currency, timezone, ..., categories, items (with
variations), questions (with options), tax_rules, quotas, subevents, orders}}``; each order
with its positions (and their answers), fees and payments. Money is a string with the
currency's places, datetimes ISO 8601 in UTC, multi-lingual texts as objects.

The catalog is small and written at once; orders are written a chunk at a time as they are
read (four queries per chunk: positions, answers, fees, payments), so the document is never
held in memory whatever the number of orders.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, BinaryIO

import orjson
from sqlalchemy import select

from admit.catalog.taxes.compute import currency_places
from admit.exports.base import (
    EVENT,
    Exporter,
    ExportInput,
    ExportRun,
    add_translations,
    register,
    result_filename,
)
from admit.exports.exporters.json_catalog import catalog, datetime_text, money_text
from admit.exports.exporters.orderdata import count, orders_query
from admit.exports.reader import Reader, among_ids
from admit.jobs.queue import JobFailed
from admit.models import (
    Answer,
    Event,
    Order,
    OrderFee,
    OrderPayment,
    OrderPosition,
    Organizer,
    Question,
    answer_options,
)

JSON_TYPE = "application/json"
# Orders per chunk (each brings its positions, answers, fees and payments along).
ORDER_CHUNK = 500


@register
class JSONExporter(Exporter):
    identifier = "json"
    verbose_name = "Order data (JSON)"
    level = EVENT
    permission = "event.orders:read"
    Input = ExportInput

    async def export(self, run: ExportRun) -> None:
        session = run.session
        event = (await session.execute(select(Event).where(Event.id == run.event_id))).scalar()
        if event is None:
            raise JobFailed("The event no longer exists.")
        organizer = await session.get(Organizer, event.organizer_id)
        places = currency_places(event.currency)
        head = {
            "name": event.name,
            "slug": event.slug,
            "organizer": {"name": organizer.name, "slug": organizer.slug} if organizer else None,
            "currency": event.currency,
            "timezone": event.timezone,
            "date_from": datetime_text(event.date_from),
            "date_to": datetime_text(event.date_to),
            "has_subevents": event.has_subevents,
            "meta_data": event.meta_data or {},
            **(await catalog(session, event.id, places)),
        }
        query = orders_query([Order.event_id == event.id])
        total = await count(session, query)
        filename = result_filename(run.organizer_slug, event.slug, self.identifier, "json")
        reader = Reader(session)
        orders = OrderChunkReader(reader)
        async with run.result_file(filename, JSON_TYPE) as handle:
            opening = orjson.dumps({"event": head})
            handle.write(opening[:-2] + b',"orders":[')  # the document stays open for orders
            done = 0
            async for chunk in reader.chunks(query, ORDER_CHUNK):
                await orders.write(handle, chunk, places, first=done == 0)
                done += len(chunk)
                await run.progress(done, total)
            handle.write(b"]}}")


class OrderChunkReader:
    """Positions, answers, fees and payments of a chunk of orders: four queries a chunk,
    each compiled once per export (rows read by position, in the order selected here)."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        dialect = reader.dialect.name
        self.positions = (
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
                OrderPosition.tax_rule_id,
                OrderPosition.tax_code,
                OrderPosition.attendee_name_cached,
                OrderPosition.attendee_name_parts,
                OrderPosition.attendee_email,
                OrderPosition.company,
                OrderPosition.street,
                OrderPosition.zipcode,
                OrderPosition.city,
                OrderPosition.country,
                OrderPosition.state,
                OrderPosition.secret,
                OrderPosition.addon_to_id,
                OrderPosition.seat_id,
                OrderPosition.voucher_id,
                OrderPosition.canceled,
                OrderPosition.valid_from,
                OrderPosition.valid_until,
            )
            .where(among_ids(OrderPosition.order_id, dialect))
            .order_by(OrderPosition.order_id, OrderPosition.positionid)
        )
        self.answers = (
            select(
                Answer.id,
                Answer.orderposition_id,
                Answer.question_id,
                Question.identifier,
                Answer.answer,
                answer_options.c.option_id,
            )
            .join(Question, Question.id == Answer.question_id)
            .outerjoin(answer_options, answer_options.c.answer_id == Answer.id)
            .where(among_ids(Answer.orderposition_id, dialect))
            .order_by(Answer.orderposition_id, Answer.id, answer_options.c.option_id)
        )
        self.fees = (
            select(
                OrderFee.order_id,
                OrderFee.fee_type,
                OrderFee.value,
                OrderFee.description,
                OrderFee.internal_type,
                OrderFee.tax_rate,
                OrderFee.tax_value,
                OrderFee.tax_rule_id,
                OrderFee.tax_code,
                OrderFee.canceled,
            )
            .where(among_ids(OrderFee.order_id, dialect))
            .order_by(OrderFee.order_id, OrderFee.id)
        )
        self.payments = (
            select(
                OrderPayment.order_id,
                OrderPayment.local_id,
                OrderPayment.state,
                OrderPayment.amount,
                OrderPayment.provider,
                OrderPayment.created,
                OrderPayment.payment_date,
            )
            .where(among_ids(OrderPayment.order_id, dialect))
            .order_by(OrderPayment.order_id, OrderPayment.local_id)
        )

    async def write(self, handle: BinaryIO, chunk: Sequence[Any], places: int, first: bool) -> None:
        """One chunk of orders with their positions, answers, fees and payments."""
        fetch = self.reader.fetch
        ids = {"ids": [o[0] for o in chunk]}
        positions: dict[int, list[dict[str, Any]]] = {}
        by_id: dict[int, dict[str, Any]] = {}
        for (
            pos_id, order_id, number, item, variation, subevent, price, tax_rate, tax_value,
            tax_rule, tax_code, name, name_parts, email, company, street, zipcode, city, country,
            state, secret, addon_to, seat, voucher, canceled, valid_from, valid_until,
        ) in await fetch(self.positions, ids):  # fmt: skip
            by_id[pos_id] = entry = {
                "id": pos_id,
                "positionid": number,
                "item": item,
                "variation": variation,
                "subevent": subevent,
                "price": money_text(price, places),
                "tax_rate": str(tax_rate),
                "tax_value": money_text(tax_value, places),
                "tax_rule": tax_rule,
                "tax_code": tax_code,
                "attendee_name": name,
                "attendee_name_parts": _json(name_parts) or {},
                "attendee_email": email,
                "company": company,
                "street": street,
                "zipcode": zipcode,
                "city": city,
                "country": country,
                "state": state,
                "secret": secret,
                "addon_to": addon_to,
                "seat": seat,
                "voucher": voucher,
                "canceled": canceled,
                "valid_from": datetime_text(valid_from),
                "valid_until": datetime_text(valid_until),
                "answers": [],
            }
            positions.setdefault(order_id, []).append(entry)
        if by_id:
            answers: dict[int, dict[str, Any]] = {}
            rows = await fetch(self.answers, {"ids": list(by_id)})
            for answer_id, pos_id, question_id, identifier, text, option_id in rows:
                found = answers.get(answer_id)
                if found is None:
                    answers[answer_id] = found = {
                        "question": question_id,
                        "question_identifier": identifier,
                        "answer": text,
                        "options": [],
                    }
                    by_id[pos_id]["answers"].append(found)
                if option_id is not None:
                    found["options"].append(option_id)
        fees: dict[int, list[dict[str, Any]]] = {}
        for (
            order_id, fee_type, value, description, internal_type, tax_rate, tax_value,
            tax_rule, tax_code, canceled,
        ) in await fetch(self.fees, ids):  # fmt: skip
            fees.setdefault(order_id, []).append(
                {
                    "fee_type": fee_type,
                    "value": money_text(value, places),
                    "description": description,
                    "internal_type": internal_type,
                    "tax_rate": str(tax_rate),
                    "tax_value": money_text(tax_value, places),
                    "tax_rule": tax_rule,
                    "tax_code": tax_code,
                    "canceled": canceled,
                }
            )
        payments: dict[int, list[dict[str, Any]]] = {}
        for order_id, local_id, state, amount, provider, created, paid_at in await fetch(
            self.payments, ids
        ):
            payments.setdefault(order_id, []).append(
                {
                    "local_id": local_id,
                    "state": state,
                    "amount": money_text(amount, places),
                    "provider": provider,
                    "created": datetime_text(created),
                    "payment_date": datetime_text(paid_at),
                }
            )
        parts = []
        for (
            order_id, _event, code, status, testmode, secret, email, phone, locale, placed,
            expires, total, channel, comment, attention, approval, valid_if_pending, address,
            canceled_at, modified,
        ) in chunk:  # fmt: skip
            parts.append(
                orjson.dumps(
                    {
                        "code": code,
                        "status": status,
                        "testmode": testmode,
                        "secret": secret,
                        "email": email,
                        "phone": phone,
                        "locale": locale,
                        "datetime": datetime_text(placed),
                        "expires": datetime_text(expires),
                        "total": money_text(total, places),
                        "sales_channel": channel,
                        "comment": comment,
                        "checkin_attention": attention,
                        "require_approval": approval,
                        "valid_if_pending": valid_if_pending,
                        "invoice_address": _json(address),
                        "cancellation_date": datetime_text(canceled_at),
                        "last_modified": datetime_text(modified),
                        "positions": positions.get(order_id, []),
                        "fees": fees.get(order_id, []),
                        "payments": payments.get(order_id, []),
                    }
                )
            )
        handle.write((b"" if first else b",") + b",".join(parts))


def _json(value: Any) -> Any:
    """A JSON column's value: as it is (SQLite), or its text embedded as is (asyncpg)."""
    return orjson.Fragment(value) if isinstance(value, str) else value


add_translations("de", {"Order data (JSON)": "Bestelldaten (JSON)"})
