"""Running one order scenario twice (fast lane on, then off) and comparing what each left:
the answers and the rows of its event, with ids, codes, secrets and timestamps replaced by
what they stand for (the catalog object's name, the order's number in the event)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import select

from admit.models import (
    Answer,
    Checkin,
    CheckinList,
    Discount,
    Event,
    GiftCard,
    Item,
    ItemVariation,
    Notification,
    Order,
    OrderFee,
    OrderPayment,
    OrderPosition,
    Question,
    QuestionOption,
    Quota,
    Seat,
    SubEvent,
    TaxRule,
    Voucher,
    answer_options,
)
from admit.models.quotas import SalesCount
from tests.factories import Factory, World, auth

# Response keys whose values differ between two runs by construction.
_DROP = {
    "id",
    "code",
    "order",
    "secret",
    "url",
    "event",
    "datetime",
    "last_modified",
    "created",
    "payment_date",
    "pseudonymization_id",
    "expires",
    "customer",
    "valid_from",
    "valid_until",
}
# Response keys holding the id of a catalog object.
_REFS = {
    "item": Item,
    "variation": ItemVariation,
    "subevent": SubEvent,
    "question": Question,
    "tax_rule": TaxRule,
    "voucher": Voucher,
    "discount": Discount,
    "list": CheckinList,
}


@dataclass
class Run:
    client: Any
    world: World
    factory: Factory
    event: Event
    answers: list[tuple[int, Any]] = field(default_factory=list)

    def url(self, rest: str = "orders/") -> str:
        return f"/api/v1/organizers/{self.world.org.slug}/events/{self.event.slug}/{rest}"

    async def post(self, body: dict[str, Any], **headers: str) -> dict[str, Any]:
        response = await self.client.post(
            self.url(), json=body, headers={**auth(self.world.admin), **headers}
        )
        data = response.json()
        if response.status_code == 201:
            detail = await self.client.get(
                self.url(f"orders/{data['code']}/"), headers=auth(self.world.admin)
            )
            assert detail.json() == data, "the answer is not what the detail shows"
        self.answers.append((response.status_code, await self.comparable(data)))
        return data

    async def labels(self) -> dict[tuple[str, int], str]:
        """Every catalog object of the event by (kind, id): its name."""
        found: dict[tuple[str, int], str] = {}
        async with self.factory.sessionmaker() as s:
            eid = self.event.id
            for item in await s.scalars(select(Item).where(Item.event_id == eid)):
                found[("item", item.id)] = item.name["en"]
            rows = await s.execute(
                select(ItemVariation.id, ItemVariation.value, Item.name)
                .join(Item, Item.id == ItemVariation.item_id)
                .where(Item.event_id == eid)
            )
            for vid, value, name in rows:
                found[("variation", vid)] = f"{name['en']}/{value['en']}"
            for sub in await s.scalars(select(SubEvent).where(SubEvent.event_id == eid)):
                found[("subevent", sub.id)] = sub.name["en"]
            for q in await s.scalars(select(Question).where(Question.event_id == eid)):
                found[("question", q.id)] = q.identifier
            rows = await s.execute(
                select(QuestionOption.id, QuestionOption.identifier, Question.identifier)
                .join(Question, Question.id == QuestionOption.question_id)
                .where(Question.event_id == eid)
            )
            for oid, ident, qident in rows:
                found[("option", oid)] = f"{qident}/{ident}"
            for rule in await s.scalars(select(TaxRule).where(TaxRule.event_id == eid)):
                found[("tax_rule", rule.id)] = rule.name["en"]
            for quota in await s.scalars(select(Quota).where(Quota.event_id == eid)):
                found[("quota", quota.id)] = quota.name
            for v in await s.scalars(select(Voucher).where(Voucher.event_id == eid)):
                found[("voucher", v.id)] = v.code
            for d in await s.scalars(select(Discount).where(Discount.event_id == eid)):
                found[("discount", d.id)] = d.internal_name
            for seat in await s.scalars(select(Seat).where(Seat.event_id == eid)):
                found[("seat", seat.id)] = seat.seat_guid
            for clist in await s.scalars(select(CheckinList).where(CheckinList.event_id == eid)):
                found[("list", clist.id)] = clist.name
        return found

    async def comparable(self, body: Any) -> Any:
        return _comparable(body, await self.labels(), {})

    async def rows(self) -> dict[str, Any]:
        """What the scenario left in the database, comparable between two events."""
        labels = await self.labels()
        async with self.factory.sessionmaker() as s:
            eid = self.event.id
            orders = list(
                await s.scalars(select(Order).where(Order.event_id == eid).order_by(Order.id))
            )
            number = {o.id: n for n, o in enumerate(orders)}
            codes = {o.code: n for n, o in enumerate(orders)}
            positions = list(
                await s.scalars(
                    select(OrderPosition)
                    .where(OrderPosition.event_id == eid)
                    .order_by(OrderPosition.order_id, OrderPosition.positionid)
                )
            )
            where = {p.id: (number[p.order_id], p.positionid) for p in positions}
            out: dict[str, Any] = {
                "orders": [
                    _row(o, labels, skip={"code", "secret", "datetime", "expires"})
                    | {"customer_id": o.customer_id is not None}
                    for o in orders
                ],
                "positions": [
                    _row(p, labels, skip={"secret", "web_secret", "pseudonymization_id"})
                    | {
                        "order_id": number[p.order_id],
                        "addon_to_id": where.get(p.addon_to_id),  # type: ignore[arg-type]
                    }
                    for p in positions
                ],
            }
            answers = await s.execute(
                select(Answer).where(Answer.orderposition_id.in_(where)).order_by(Answer.id)
            )
            out["answers"] = []
            for (answer,) in answers:
                options = await s.scalars(
                    select(answer_options.c.option_id).where(
                        answer_options.c.answer_id == answer.id
                    )
                )
                out["answers"].append(
                    (
                        where[answer.orderposition_id],  # type: ignore[index]
                        labels[("question", answer.question_id)],
                        answer.answer,
                        sorted(labels[("option", o)] for o in options),
                    )
                )
            for name, model in (("fees", OrderFee), ("payments", OrderPayment)):
                rows = await s.scalars(
                    select(model).where(model.order_id.in_(number)).order_by(model.id)
                )
                out[name] = [
                    _row(r, labels, skip={"created", "payment_date"})
                    | {"order_id": number[r.order_id]}
                    for r in rows
                ]
            notes = await s.scalars(
                select(Notification).where(Notification.event_id == eid).order_by(Notification.id)
            )
            out["notifications"] = [
                (n.action, codes.get((n.payload or {}).get("code"), "?")) for n in notes
            ]
            items = {i for k, i in labels if k == "item"}
            counts = await s.scalars(select(SalesCount).where(SalesCount.item_id.in_(items)))
            out["ledger"] = sorted(
                (labels[("item", c.item_id)], c.pending, c.paid, c.carts) for c in counts
            )
            checkins = await s.scalars(select(Checkin).where(Checkin.position_id.in_(where)))
            out["checkins"] = sorted(where[c.position_id] for c in checkins)
            cards = await s.scalars(select(GiftCard).where(GiftCard.issued_in_id.in_(where)))
            out["giftcards"] = sorted((where[c.issued_in_id], str(c.value)) for c in cards)  # type: ignore[index]
            vouchers = await s.scalars(select(Voucher).where(Voucher.event_id == eid))
            out["vouchers"] = sorted((v.code, v.redeemed, str(v.budget_used)) for v in vouchers)
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal | dt.datetime | dt.date):
        return str(value)
    return value


def _row(obj: Any, labels: dict[tuple[str, int], str], skip: set[str]) -> dict[str, Any]:
    row = {}
    for column in obj.__table__.columns:
        key = column.key
        if key in skip or key == "id" or key == "event_id":
            continue
        value = getattr(obj, key)
        kind = key.removesuffix("_id")
        if key.endswith("_id") and value is not None and (kind, value) in labels:
            value = labels[(kind, value)]
        elif key in ("last_modified", "valid_from", "valid_until") and value is not None:
            value = "set"
        row[key] = _plain(value)
    return row


def _comparable(body: Any, labels: dict[tuple[str, int], str], ids: dict[int, int]) -> Any:
    """The body with run-specific values replaced (see the module)."""
    if isinstance(body, list):
        return [_comparable(v, labels, ids) for v in body]
    if not isinstance(body, dict):
        return body
    out: dict[str, Any] = {}
    if "positions" in body and isinstance(body["positions"], list):
        ids = {
            p["id"]: p["positionid"] for p in body["positions"] if isinstance(p, dict) and "id" in p
        }
    for key, value in body.items():
        if key in _DROP:
            out[key] = "…" if value is not None else None
        elif key in _REFS and isinstance(value, int) and not isinstance(value, bool):
            out[key] = labels.get((key, value), value)
        elif key == "options" and isinstance(value, list):
            out[key] = [labels.get(("option", v), v) for v in value]
        elif key == "addon_to" and isinstance(value, int):
            out[key] = ids.get(value, value)
        elif key == "downloads":
            out[key] = len(value)
        else:
            out[key] = _comparable(value, labels, ids)
    return out


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """Where two nested structures first differ, and how (for assertion messages)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if a.get(key, "<missing>") != b.get(key, "<missing>"):
                return first_difference(
                    a.get(key, "<missing>"), b.get(key, "<missing>"), f"{path}.{key}"
                )
    elif isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) == len(b):
        for n, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{n}]")
    return f"{path}: {a!r} != {b!r}"
