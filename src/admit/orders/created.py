"""The answer to order creation, rendered from the rows just written instead of reading them
back: the same renderers as the order detail (``serialize.order_dict``, ``decorate_orders``)
over snapshots of the rows, so ``POST`` answers exactly what ``GET`` of the order shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Answer, Order, OrderFee, OrderPayment, OrderPosition
from admit.orders.downloads_field import decorate_orders
from admit.orders.filters import View
from admit.orders.rows import NewOrder, Written
from admit.orders.serialize import order_dict

_NONE: dict[type[Any], dict[str, None]] = {}


def snapshot(model: type[Any], values: Mapping[str, Any]) -> Any:
    """An instance of ``model`` holding ``values`` (columns left out are None), outside any
    session: filled straight into ``__dict__``, nothing tracks changes to it."""
    obj = model.__mapper__.class_manager.new_instance()
    obj.__dict__.update(_none(model))
    obj.__dict__.update(values)
    return obj


def plain(model: type[Any], values: Mapping[str, Any]) -> Any:
    """The same as a plain object: what rendering reads, at a fraction of the cost."""
    return SimpleNamespace(**{**_none(model), **values})


def _none(model: type[Any]) -> dict[str, None]:
    empty = _NONE.get(model)
    if empty is None:
        empty = _NONE[model] = {c.key: None for c in model.__table__.columns}
    return empty


Make = Callable[[type[Any], Mapping[str, Any]], Any]


def order_snapshot(new: NewOrder, written: Written, make: Make = snapshot) -> Any:
    """The order with its positions, answers, fees and payment, as the database holds them
    (``make``: :func:`snapshot` for hooks, which expect the models, or :func:`plain`)."""
    by_positionid = {
        p.positionid: i for p, i in zip(new.positions, written.position_ids, strict=True)
    }
    positions = []
    for position, position_id, answer_ids in zip(
        new.positions, written.position_ids, written.answer_ids, strict=True
    ):
        answers = [
            make(
                Answer,
                {
                    "id": answer_id,
                    "orderposition_id": position_id,
                    "cartposition_id": None,
                    "question_id": a.question.id,
                    "answer": a.answer,
                    "file": None,
                    "options": sorted(a.options, key=lambda o: o.id),
                },
            )
            for answer_id, a in zip(answer_ids, position.answers, strict=True)
        ]
        addon_to = by_positionid[position.addon_to] if position.addon_to is not None else None
        values = {
            **position.row,
            "id": position_id,
            "order_id": written.order_id,
            "addon_to_id": addon_to,
            "answers": answers,
        }
        positions.append(make(OrderPosition, values))
    positions.sort(key=lambda p: p.positionid)
    fees = [
        make(OrderFee, {**fee, "id": fee_id, "order_id": written.order_id})
        for fee, fee_id in zip(new.fees, written.fee_ids, strict=True)
    ]
    payment = make(
        OrderPayment, {**new.payment, "id": written.payment_id, "order_id": written.order_id}
    )
    return make(
        Order,
        {
            **new.order,
            "id": written.order_id,
            "code": written.code,
            "customer_identifier": new.customer_identifier,
            "positions": positions,
            "fees": fees,
            "payments": [payment],
            "refunds": [],
        },
    )


async def created_body(
    session: AsyncSession,
    new: NewOrder,
    written: Written,
    *,
    event_slug: str,
    url_base: str,
    api_base: str,
    view: View,
    seats: Mapping[int, dict[str, Any]] | None = None,
    checkins: Mapping[int, list[dict[str, Any]]] | None = None,
    event: Any = None,
) -> dict[str, Any]:
    """The order as its detail renders it. ``seats`` and ``checkins`` by id, as the detail
    loads them (a new order has check-ins only when an auto check-in rule made them);
    ``event`` only with ``pdf_data`` in ``view`` (which reads the ticket data)."""
    order = order_snapshot(new, written, plain)
    idents = {a.question.id: a.question.identifier for p in new.positions for a in p.answers}
    body = order_dict(order, event_slug, url_base, idents, seats, checkins)
    flags = {p.item.id: p.item.generate_tickets for p in new.positions}
    await decorate_orders(session, [order], [body], view, {order.event_id: api_base}, event, flags)
    return body
