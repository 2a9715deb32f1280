"""Orders and positions as the API renders them. Lists load everything up front
(:data:`ORDER_LOAD`, one query for question identifiers), so the number of queries is fixed."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.models import (
    Answer,
    Checkin,
    Order,
    OrderFee,
    OrderPayment,
    OrderPosition,
    OrderRefund,
    Question,
)
from admit.orders.order_fields import order_fields, position_fields, position_print_logs
from admit.seating.expand import register_holder_renderer
from admit.seating.render import position_seats

ORDER_LOAD = (
    selectinload(Order.positions).selectinload(OrderPosition.answers).selectinload(Answer.options),
    selectinload(Order.fees),
    selectinload(Order.payments),
    selectinload(Order.refunds),
)
POSITION_LOAD = (selectinload(OrderPosition.answers).selectinload(Answer.options),)


def _dt(value: dt.datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def _money(value: Decimal | None) -> str | None:
    return f"{value:.2f}" if value is not None else None


def attendee_name(parts: dict[str, str] | None) -> str | None:
    """The display name of a set of name parts (``_scheme`` and empty parts left out)."""
    values = [v for k, v in (parts or {}).items() if k != "_scheme" and v]
    return " ".join(values) or None


async def question_identifiers(
    session: AsyncSession, positions: Iterable[OrderPosition]
) -> dict[int, str]:
    ids = {a.question_id for p in positions for a in p.answers}
    if not ids:
        return {}
    rows = await session.execute(
        select(Question.id, Question.identifier).where(Question.id.in_(ids))
    )
    return {k: v for k, v in rows}


def checkin_dict(
    *,
    id: int,
    list_id: int,
    when: dt.datetime,
    kind: str,
    gate_id: int | None,
    device_id: int | None,
    device_number: int | None,
    auto_checked_in: bool,
) -> dict[str, Any]:
    """A successful check-in as a position lists it."""
    return {
        "id": id,
        "list": list_id,
        "datetime": _dt(when),
        "type": kind,
        "gate": gate_id,
        "device": device_id,
        "device_id": device_number,
        "auto_checked_in": auto_checked_in,
    }


async def position_checkins(
    session: AsyncSession, position_ids: Iterable[int], list_id: int | None = None
) -> dict[int, list[dict[str, Any]]]:
    """The successful check-ins of many positions (of one list, or all) in one query."""
    ids = sorted(set(position_ids))
    if not ids:
        return {}
    query = select(Checkin).where(Checkin.position_id.in_(ids), Checkin.successful.is_(True))
    if list_id is not None:
        query = query.where(Checkin.list_id == list_id)
    found: dict[int, list[dict[str, Any]]] = {}
    for c in await session.scalars(query.order_by(Checkin.datetime, Checkin.id)):
        found.setdefault(c.position_id, []).append(  # type: ignore[arg-type]
            checkin_dict(
                id=c.id,
                list_id=c.list_id,
                when=c.datetime,
                kind=c.type,
                gate_id=c.gate_id,
                device_id=c.device_id,
                device_number=c.device_number,
                auto_checked_in=c.auto_checked_in,
            )
        )
    return found


def position_dict(
    pos: OrderPosition,
    order_code: str,
    idents: dict[int, str],
    seats: Mapping[int, dict[str, Any]] | None = None,
    checkins: Mapping[int, list[dict[str, Any]]] | None = None,
    print_logs: dict[int, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """``seats``: seat objects by id (``seating.render.position_seats``); without, no seat.
    ``checkins``: check-ins by position id (:func:`position_checkins`); without, none.
    ``print_logs``: by position id (``order_fields.position_print_logs``); without, none."""
    return {
        "id": pos.id,
        "order": order_code,
        "positionid": pos.positionid,
        "item": pos.item_id,
        "variation": pos.variation_id,
        "price": _money(pos.price),
        "attendee_name": pos.attendee_name_cached,
        "attendee_name_parts": dict(pos.attendee_name_parts or {}),
        "attendee_email": pos.attendee_email,
        "company": pos.company,
        "street": pos.street,
        "zipcode": pos.zipcode,
        "city": pos.city,
        "country": pos.country,
        "state": pos.state,
        "voucher": pos.voucher_id,
        "voucher_budget_use": _money(pos.voucher_budget_use),
        "tax_rate": _money(pos.tax_rate),
        "tax_value": _money(pos.tax_value),
        "tax_rule": pos.tax_rule_id,
        "tax_code": pos.tax_code,
        "secret": pos.secret,
        "addon_to": pos.addon_to_id,
        "subevent": pos.subevent_id,
        "discount": pos.discount_id,
        "is_bundled": pos.is_bundled,
        "seat": (seats or {}).get(pos.seat_id) if pos.seat_id is not None else None,
        "pseudonymization_id": pos.pseudonymization_id,
        "canceled": pos.canceled,
        "valid_from": _dt(pos.valid_from),
        "valid_until": _dt(pos.valid_until),
        "blocked": list(pos.blocked) if pos.blocked is not None else None,
        "checkins": list((checkins or {}).get(pos.id, ())),
        "downloads": [],
        **position_fields(pos, print_logs),
        "answers": [
            {
                "question": a.question_id,
                "question_identifier": idents.get(a.question_id),
                "answer": a.answer,
                "options": [o.id for o in a.options],
                "option_identifiers": [o.identifier for o in a.options],
            }
            for a in pos.answers
        ],
    }


def fee_dict(fee: OrderFee) -> dict[str, Any]:
    return {
        "id": fee.id,
        "fee_type": fee.fee_type,
        "value": _money(fee.value),
        "description": fee.description,
        "internal_type": fee.internal_type,
        "tax_rate": _money(fee.tax_rate),
        "tax_value": _money(fee.tax_value),
        "tax_rule": fee.tax_rule_id,
        "tax_code": fee.tax_code,
        "canceled": fee.canceled,
    }


def _gift_card_details(provider: str, info: dict[str, Any] | None) -> dict[str, Any]:
    """What a client may see of a gift card payment or refund: the card it used (recorded in
    ``info`` when the card was debited or credited); other providers show nothing."""
    card = (info or {}).get("gift_card")
    if provider != "giftcard" or not isinstance(card, dict):
        return {}
    return {"gift_card": {k: card.get(k) for k in ("id", "secret", "organizer")}}


def payment_dict(payment: OrderPayment) -> dict[str, Any]:
    return {
        "local_id": payment.local_id,
        "state": payment.state,
        "amount": _money(payment.amount),
        "created": _dt(payment.created),
        "payment_date": _dt(payment.payment_date),
        "payment_url": None,
        "details": _gift_card_details(payment.provider, payment.info),
        "provider": payment.provider,
    }


def refund_dict(refund: OrderRefund, payment_local_ids: Mapping[int, int]) -> dict[str, Any]:
    """``payment_local_ids`` maps payment ids to their order-local ids (what the API shows)."""
    return {
        "local_id": refund.local_id,
        "state": refund.state,
        "source": refund.source,
        "amount": _money(refund.amount),
        "payment": payment_local_ids.get(refund.payment_id) if refund.payment_id else None,
        "created": _dt(refund.created),
        "execution_date": _dt(refund.execution_date),
        "comment": refund.comment,
        "provider": refund.provider,
        "details": _gift_card_details(refund.provider, refund.info),
    }


def refund_dicts(order: Order) -> list[dict[str, Any]]:
    """The order's refunds (payments and refunds loaded, as :data:`ORDER_LOAD` does)."""
    local_ids = {p.id: p.local_id for p in order.payments}
    return [refund_dict(r, local_ids) for r in order.refunds]


def order_dict(
    order: Order,
    event_slug: str,
    url_base: str,
    idents: dict[int, str],
    seats: Mapping[int, dict[str, Any]] | None = None,
    checkins: Mapping[int, list[dict[str, Any]]] | None = None,
    print_logs: dict[int, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """``url_base`` is the public base URL with organizer and event (``…/org/event/``)."""
    confirmed = [p for p in order.payments if p.state == "confirmed"]
    provider = order.payments[-1].provider if order.payments else None
    return {
        "code": order.code,
        "event": event_slug,
        "status": order.status,
        "testmode": order.testmode,
        "secret": order.secret,
        "email": order.email,
        "phone": order.phone,
        "locale": order.locale,
        "sales_channel": order.sales_channel,
        "datetime": _dt(order.datetime),
        "expires": _dt(order.expires),
        "payment_date": _dt(confirmed[-1].payment_date) if confirmed else None,
        "payment_provider": provider,
        "total": _money(order.total),
        "comment": order.comment,
        "checkin_attention": order.checkin_attention,
        "checkin_text": order.checkin_text,
        "invoice_address": order.invoice_address,
        "require_approval": order.require_approval,
        "valid_if_pending": order.valid_if_pending,
        "customer": getattr(order, "customer_identifier", None),
        # The buyer's order page in the shop (the reference's address pattern, also mailed to
        # the buyer). Admit has no shop: a shop front served at ADMIT_BASE_URL answers it.
        "url": f"{url_base}order/{order.code}/{order.secret}/",
        "positions": [
            position_dict(p, order.code, idents, seats, checkins, print_logs)
            for p in order.positions
        ],
        "fees": [fee_dict(f) for f in order.fees],
        "payments": [payment_dict(p) for p in order.payments],
        "refunds": refund_dicts(order),
        "downloads": [],
        "last_modified": _dt(order.last_modified),
        "cancellation_date": _dt(order.cancellation_date),
        **order_fields(order),
    }


async def render_orders(
    session: AsyncSession, orders: Sequence[Order], slugs: dict[int, str], bases: dict[int, str]
) -> list[dict[str, Any]]:
    """Orders of possibly several events: ``slugs``/``bases`` map event id to slug / URL base."""
    idents = await question_identifiers(session, [p for o in orders for p in o.positions])
    seats = await position_seats(session, [p.seat_id for o in orders for p in o.positions])
    checkins = await position_checkins(session, [p.id for o in orders for p in o.positions])
    logs = await position_print_logs(session, [p for o in orders for p in o.positions])
    return [
        order_dict(o, slugs[o.event_id], bases[o.event_id], idents, seats, checkins, logs)
        for o in orders
    ]


async def seat_holders(
    session: AsyncSession, ids: Sequence[int], event_slug: str
) -> dict[int, dict[str, Any]]:
    """Order positions holding seats, for ``?expand=orderposition`` on the seats: the position
    resource with its ``order`` (code, event) and without its ``seat`` (the seat is the parent)."""
    rows = (
        await session.execute(
            select(OrderPosition, Order.code)
            .join(Order, Order.id == OrderPosition.order_id)
            .where(OrderPosition.id.in_(ids))
            .options(*POSITION_LOAD)
        )
    ).all()
    idents = await question_identifiers(session, [p for p, _ in rows])
    found = {}
    for position, code in rows:
        data = position_dict(position, code, idents)
        data["order"] = {"code": code, "event": event_slug}
        data.pop("seat", None)
        found[position.id] = data
    return found


register_holder_renderer("orderposition", seat_holders)
