"""Creating an order through the API: validate every position, price it, take quota, write.

All checks that can fail run before quota is taken; :func:`admit.quotas.availability.reserve`
locks the quotas of every position at once right before the rows are inserted, so the lock is
held only for the inserts and the commit.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.catalog.questions.answers import (
    CheckedAnswer,
    check_answers,
    load_questions,
    to_models,
)
from admit.customers import membership_rules
from admit.db import utcnow
from admit.kit.errors import FieldErrors
from admit.models import (
    Event,
    Item,
    Order,
    OrderFee,
    OrderPayment,
    OrderPosition,
    Seat,
    SubEvent,
    TaxRule,
)
from admit.orders import codes, customer_link, hooks, order_fields, validity
from admit.orders.pricing import Line, load_discounts, price_lines, tax
from admit.orders.quota import quota_errors
from admit.orders.schemas import OrderIn, PositionIn
from admit.quotas import ledger
from admit.quotas.availability import NoQuota, QuotaExceeded, reserve
from admit.seating import claim as seating
from admit.vouchers import redeem
from admit.vouchers import sales as voucher_sales
from admit.vouchers import usage as voucher_usage

PAYMENT_TERM_DAYS = 14  # the reference's default payment term
ZERO = Decimal("0.00")


def invalid_pk(pk: object) -> str:
    return f'Invalid pk "{pk}" - object does not exist.'


def default_expires(event: Event, now: dt.datetime) -> dt.datetime:
    """End of the day, in the event's time zone, ``PAYMENT_TERM_DAYS`` from now."""
    tz = zoneinfo.ZoneInfo(event.timezone or "UTC")
    day = (now + dt.timedelta(days=PAYMENT_TERM_DAYS)).astimezone(tz).date()
    return dt.datetime.combine(day, dt.time(23, 59, 59), tzinfo=tz).astimezone(dt.UTC)


async def _load(session: AsyncSession, model: Any, event_id: int, ids: set[int], *opts: Any):
    if not ids:
        return {}
    rows = await session.scalars(
        select(model).where(model.id.in_(ids), model.event_id == event_id).options(*opts)
    )
    return {r.id: r for r in rows}


class Draft:
    """What the validation found for one position."""

    def __init__(self, data: PositionIn, positionid: int) -> None:
        self.data = data
        self.positionid = positionid
        self.line: Line | None = None
        self.answers: list[CheckedAnswer] = []
        self.seat: Seat | None = None


async def _check_positions(
    session: AsyncSession, event: Event, positions: list[PositionIn]
) -> list[Draft]:
    items = await _load(
        session, Item, event.id, {p.item for p in positions}, selectinload(Item.variations)
    )
    sub_ids = {p.subevent for p in positions if p.subevent is not None}
    subevents = await _load(
        session,
        SubEvent,
        event.id,
        sub_ids,
        selectinload(SubEvent.item_overrides),
        selectinload(SubEvent.variation_overrides),
    )
    questions = await load_questions(
        session, event.id, {a.question for p in positions for a in p.answers}
    )
    seats = await seating.load(session, event, [(p.subevent, p.seat) for p in positions])
    wanted_secrets = [p.secret for p in positions if p.secret]
    taken = await codes.taken_secrets(session, event.id, wanted_secrets)
    errors: list[dict[str, Any]] = []
    drafts: list[Draft] = []
    seen_secrets: set[str] = set()
    main_ids: set[int] = set()
    for index, data in enumerate(positions):
        err: dict[str, Any] = {}
        draft = Draft(data, data.positionid or index + 1)
        if data.positionid is not None and data.positionid != index + 1:
            err["positionid"] = ["Position IDs need to be consecutive, starting at 1."]
        item = items.get(data.item)
        variation = None
        if item is None:
            err["item"] = [invalid_pk(data.item)]
        elif item.variations and data.variation is None:
            err["variation"] = ["You should specify a variation for this item."]
        elif data.variation is not None:
            variation = next((v for v in item.variations if v.id == data.variation), None)
            if not item.variations:
                err["variation"] = ["You cannot specify a variation for this item."]
            elif variation is None:
                err["variation"] = [invalid_pk(data.variation)]
        subevent = subevents.get(data.subevent) if data.subevent is not None else None
        if event.has_subevents and data.subevent is None:
            err["subevent"] = ["You need to set a subevent."]
        elif not event.has_subevents and data.subevent is not None:
            err["subevent"] = ["You cannot set a subevent for this event."]
        elif data.subevent is not None and subevent is None:
            err["subevent"] = [invalid_pk(data.subevent)]
        if data.addon_to is not None:
            if data.addon_to not in main_ids:
                err["addon_to"] = [
                    "addon_to must refer to the positionid of an earlier position that is "
                    "not an add-on itself."
                ]
        else:
            main_ids.add(draft.positionid)
        if item is not None:
            draft.seat, seat_problem = seating.check(seats, item, data.subevent, data.seat)
            if seat_problem:
                err["seat"] = [seat_problem]
        if data.secret is not None:
            if data.secret in taken or data.secret in seen_secrets:
                err["secret"] = ["You cannot assign a position secret that already exists."]
            seen_secrets.add(data.secret)
        if item is not None and data.answers:
            draft.answers, answer_errors = check_answers(data.answers, item.id, questions)
            if answer_errors:
                err["answers"] = answer_errors
        if item is not None and not err:
            draft.line = Line(item, variation, subevent, data.price, data.addon_to is not None)
        errors.append(err)
        drafts.append(draft)
    if any(errors):
        raise FieldErrors({"positions": errors})
    return drafts


def _name_parts(data: PositionIn) -> dict[str, str]:
    if data.attendee_name_parts:
        return dict(data.attendee_name_parts)
    if data.attendee_name:
        return {"_legacy": data.attendee_name}
    return {}


def build_position(draft: Any, price: Any, **fields: Any) -> OrderPosition:
    """A new position from a checked draft (its product, attendee and seat) and its price;
    ``fields`` are what the caller decides (order, numbers, secret, validity, …). Order
    creation and order changes make positions here, so both write the same columns."""
    line, data = draft.line, draft.data
    parts = _name_parts(data)
    return OrderPosition(
        item_id=line.item.id,
        variation_id=line.variation.id if line.variation else None,
        subevent_id=line.subevent.id if line.subevent else None,
        price=price.price,
        tax_rate=price.tax_rate,
        tax_value=price.tax_value,
        tax_rule_id=price.tax_rule_id,
        tax_code=price.tax_code,
        discount_id=price.discount_id,
        attendee_name_parts=parts,
        attendee_name_cached=_display(parts),
        attendee_email=data.attendee_email,
        company=data.company,
        street=data.street,
        zipcode=data.zipcode,
        city=data.city,
        country=data.country,
        state=data.state,
        web_secret=codes.web_secret(),
        pseudonymization_id=codes.pseudonymization_id(),
        seat_id=draft.seat.id if draft.seat else None,
        **fields,
    )


async def create_order(session: AsyncSession, event: Event, data: OrderIn) -> Order:
    """Validates, prices, reserves quota and writes the order (flushed, not committed)."""
    now = utcnow()
    customer_id = await customer_link.resolve(session, event.organizer_id, data.customer)
    order_fields.check_create(data)
    drafts = await _check_positions(session, event, data.positions)
    windows = validity.windows(event, drafts, now)
    testmode = event.testmode if data.testmode is None else data.testmode
    memberships = await membership_rules.check_order(
        session, event, customer_id, testmode, drafts, windows
    )
    uses = await voucher_sales.for_order(session, event, drafts, now)  # locks the vouchers
    rules = {
        r.id: r for r in await session.scalars(select(TaxRule).where(TaxRule.event_id == event.id))
    }
    fee_errors = [
        {"tax_rule": [invalid_pk(f.tax_rule)]}
        if f.tax_rule is not None and f.tax_rule not in rules
        else {}
        for f in data.fees
    ]
    if any(fee_errors):
        raise FieldErrors({"fees": fee_errors})
    lines = [d.line for d in drafts]
    discounts = (
        await load_discounts(session, event.id) if any(ln.given is None for ln in lines) else []
    )  # type: ignore[union-attr]
    priced = price_lines(
        lines,  # type: ignore[arg-type]
        rules,
        discounts,
        currency=event.currency,
        sales_channel=data.sales_channel,
        now=now,
    )
    fee_taxes = [
        tax(f.value, rules.get(f.tax_rule) if f.tax_rule else None, True, 2) for f in data.fees
    ]
    total = sum((p.price for p in priced), ZERO) + sum((f.value for f in data.fees), ZERO)
    if data.status == "p" and total > 0 and not data.payment_provider:
        raise FieldErrors.single(
            "payment_provider", "This field is required when creating a paid order."
        )

    keys = [_key(ln) for ln in lines]  # type: ignore[arg-type]
    # The quota lock is held from reserve() to the commit, and every sale of the product waits
    # for it: an order without vouchers or seats writes everything first and takes the lock
    # last (its own rows are not in the sales ledger before the commit, so the count is the
    # same). Vouchers and seats move units between holders as they are written, so those
    # orders check first, as before.
    plain = not any(uses) and not any(d.seat for d in drafts)
    if not plain:
        await _take_quota_and_seats(session, event, data, drafts, uses, keys, lines, now)

    paid = data.status == "p" or (total == 0 and not data.require_approval)
    order = Order(
        event_id=event.id,
        code=await codes.new_order_code(session, event.id),
        status="p" if paid else "n",
        testmode=testmode,
        secret=codes.order_secret(),
        email=data.email,
        phone=data.phone,
        locale=data.locale,
        datetime=now,
        expires=data.expires or default_expires(event, now),
        total=total,
        sales_channel=data.sales_channel,
        comment=data.comment,
        checkin_attention=data.checkin_attention,
        checkin_text=data.checkin_text,
        require_approval=data.require_approval,
        valid_if_pending=data.valid_if_pending,
        invoice_address=data.invoice_address,
        meta_info={},
        customer_id=customer_id,
        api_meta=data.api_meta,
        custom_followup_at=data.custom_followup_at,
        tax_rounding_mode=data.tax_rounding_mode or order_fields.SUPPORTED_ROUNDING,
        last_modified=now,
    )
    session.add(order)
    await session.flush()
    await ledger.track_orders(session, [order.id], new=True)

    fresh = iter(
        await codes.new_ticket_secrets(
            session, event.id, sum(1 for d in drafts if not d.data.secret)
        )
    )
    by_positionid: dict[int, OrderPosition] = {}
    for addons in (False, True):
        for draft, price in zip(drafts, priced, strict=True):
            if (draft.data.addon_to is not None) != addons:
                continue
            pdata = draft.data
            pos = build_position(
                draft,
                price,
                order_id=order.id,
                event_id=event.id,
                positionid=draft.positionid,
                secret=pdata.secret or next(fresh),
                addon_to_id=by_positionid[pdata.addon_to].id if pdata.addon_to else None,
                valid_from=windows[draft.positionid][0],
                valid_until=windows[draft.positionid][1],
                used_membership_id=memberships.get(draft.positionid),
                **redeem.position_fields(draft.line.voucher),  # type: ignore[union-attr]
            )
            session.add(pos)
            by_positionid[draft.positionid] = pos
        await session.flush()
    voucher_usage.record(uses)
    for draft in drafts:
        for answer in to_models(draft.answers):
            answer.orderposition_id = by_positionid[draft.positionid].id
            session.add(answer)
    for fee, taxed in zip(data.fees, fee_taxes, strict=True):
        session.add(
            OrderFee(
                order_id=order.id,
                fee_type=fee.fee_type,
                value=fee.value,
                description=fee.description,
                internal_type=fee.internal_type,
                tax_rate=taxed.rate,
                tax_value=taxed.tax,
                tax_rule_id=fee.tax_rule,
            )
        )
    provider = data.payment_provider or ("free" if total == 0 else "manual")
    session.add(
        OrderPayment(
            order_id=order.id,
            local_id=1,
            state="confirmed" if paid else "created",
            amount=total,
            provider=provider,
            created=now,
            payment_date=(data.payment_date or now) if paid else None,
            info={},
        )
    )
    await session.flush()
    placed = list(by_positionid.values())
    await hooks.run(hooks.order_placed_hooks, session, order, placed)
    if order.status == "p":
        await hooks.run(hooks.order_paid_hooks, session, order, placed)
    if plain:
        await _take_quota_and_seats(session, event, data, drafts, uses, keys, lines, now)
    return order


async def _take_quota_and_seats(
    session: AsyncSession,
    event: Event,
    data: OrderIn,
    drafts: list[Any],
    uses: list[Any],
    keys: list[tuple[int, int | None, int | None]],
    lines: list[Any],
    now: dt.datetime,
) -> None:
    """Locks and checks the quotas (then the seats: the lock order); 400 when short."""
    try:
        await redeem.lock_for_exempt(session, event.id, keys, uses)
        demand = redeem.demand(keys, uses)  # quota-exempt voucher positions take none
        await reserve(session, event.id, demand, now=now, ignore_quota=data.force)
    except (NoQuota, QuotaExceeded) as exc:
        raise FieldErrors(
            {"positions": await quota_errors(session, event.id, keys, lines, exc)}
        ) from None
    claims = [
        seating.Claim(d.seat, d.data.item, u.voucher.id if u else None) if d.seat else None
        for d, u in zip(drafts, uses, strict=True)
    ]
    try:
        await seating.claim(session, claims, now)  # after the quotas: the lock order
    except seating.SeatsUnavailable as exc:
        per_position = [
            {"seat": [exc.problems[i]]} if i in exc.problems else {} for i in range(len(drafts))
        ]
        raise FieldErrors({"positions": per_position}) from None


def _key(line: Line) -> tuple[int, int | None, int | None]:
    return (
        line.item.id,
        line.variation.id if line.variation else None,
        line.subevent.id if line.subevent else None,
    )


def _display(parts: dict[str, str]) -> str | None:
    values = [v for k, v in parts.items() if k != "_scheme" and v]
    return " ".join(values) or None
