"""The buyer's view of one order: found by code *and* secret (the link every mail carries),
what it holds, how to pay it, its tickets, and cancelling where the event allows it.

A wrong secret is the same 404 as a missing order: the code alone (short, printed on tickets)
must never open another buyer's order. The secret is compared in constant time.
"""

from __future__ import annotations

import hmac
import io
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.customers import membership_rules
from admit.db import utcnow
from admit.kit.http.errors import APIError
from admit.kit.resources.i18n import localized
from admit.models import Event, Item, ItemVariation, Order
from admit.notifications.notify import notify_all
from admit.orders import actions
from admit.orders.schemas import CancelIn
from admit.orders.serialize import ORDER_LOAD
from admit.payments import providers
from admit.payments.fees import fee_label
from admit.quotas import ledger
from admit.shop.dates import label, load_many
from admit.shop.i18n import translator
from admit.tickets.documents import Part, plan, render_pages
from admit.tickets.downloads import order_refusal
from admit.tickets.loading import load_batch
from admit.vouchers import usage as voucher_usage

STATUS = {"n": "Pending payment", "p": "Paid", "e": "Expired", "c": "Canceled"}
CANCELED = "service.event.order.canceled"


async def find(
    session: AsyncSession, event: Event, code: str, secret: str, *, lock: bool = False
) -> Order | None:
    """The order with this code and secret, or None (wrong secret included)."""
    if not (0 < len(code) <= 16 and 0 < len(secret) <= 64):
        return None
    query = (
        select(Order)
        .where(Order.event_id == event.id, Order.code == code.upper())
        .options(*ORDER_LOAD)
        .execution_options(populate_existing=True)
    )
    if lock:
        query = query.with_for_update(of=Order)
    order = (await session.execute(query)).scalars().first()
    if order is None or not hmac.compare_digest(order.secret.encode(), secret.encode()):
        return None
    if lock:
        await ledger.track_orders(session, [order.id])
    return order


def may_cancel(event: Event, order: Order) -> bool:
    from admit.events.settings import value

    if order.status == "n":
        return bool(value(event, "cancel_allow_user"))
    if order.status == "p":
        # Paid orders need a refund, which this shop does not start yet: free ones only.
        return bool(value(event, "cancel_allow_user_paid")) and order.total == 0
    return False


def tickets_allowed(event: Event, order: Order) -> bool:
    from admit.events.settings import value

    if not value(event, "ticket_download"):
        return False
    if order.status == "n" and value(event, "ticket_download_pending"):
        return not order.require_approval
    return order_refusal(order) is None


@dataclass
class OrderView:
    order: Order
    status: str
    positions: list[dict[str, Any]]
    instructions: Any
    can_cancel: bool
    tickets: bool
    # the order's fees (a payment method's): label, value and tax, as the order page lists them
    fees: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self, url: str) -> dict[str, Any]:
        ins = self.instructions
        return {
            "code": self.order.code,
            "status": self.order.status,
            "status_text": self.status,
            "total": f"{self.order.total:.2f}",
            "email": self.order.email,
            "expires": self.order.expires.isoformat(),
            "url": url,
            "positions": self.positions,
            "fees": self.fees,
            "payment_instructions": None
            if ins is None
            else {"title": ins.title, "text": ins.text, "details": dict(ins.details)},
            "can_cancel": self.can_cancel,
            "tickets": self.tickets,
        }


async def view(session: AsyncSession, event: Event, order: Order) -> OrderView:
    ids = {p.item_id for p in order.positions}
    items = (
        {i.id: i for i in await session.scalars(select(Item).where(Item.id.in_(ids)))}
        if ids
        else {}
    )
    var_ids = {p.variation_id for p in order.positions if p.variation_id}
    variations = (
        {
            v.id: v
            for v in await session.scalars(
                select(ItemVariation).where(ItemVariation.id.in_(var_ids))
            )
        }
        if var_ids
        else {}
    )
    subevents = await load_many(
        session, event, {p.subevent_id for p in order.positions if p.subevent_id}
    )
    positions = []
    for p in sorted(order.positions, key=lambda p: p.positionid):
        name = localized(items[p.item_id].name, order.locale) if p.item_id in items else ""
        if p.variation_id in variations:
            name = f"{name} – {localized(variations[p.variation_id].value, order.locale)}"
        positions.append(
            {
                "id": p.id,
                "positionid": p.positionid,
                "name": name,
                "price": f"{p.price:.2f}",
                "subevent": p.subevent_id,
                "date": label(subevents[p.subevent_id], order.locale)
                if p.subevent_id in subevents
                else None,
                "attendee_name": p.attendee_name_cached,
                "canceled": p.canceled,
                "answers": [a.answer for a in p.answers],
            }
        )
    shown_fees = [
        {
            "fee_type": f.fee_type,
            "label": fee_label(f.fee_type, f.description, translator(order.locale)),
            "value": f"{f.value:.2f}",
            "tax_rate": f"{f.tax_rate:.2f}",
            "tax_value": f"{f.tax_value:.2f}",
        }
        for f in sorted(order.fees, key=lambda f: f.id)
        if not f.canceled
    ]
    instructions = None
    if order.status == "n":
        waiting = [p for p in order.payments if p.state in ("created", "pending")]
        provider = providers.get(waiting[0].provider) if waiting else None
        instructions = provider.instructions(event, order) if provider else None
    return OrderView(
        order,
        STATUS.get(order.status, order.status),
        positions,
        instructions,
        may_cancel(event, order),
        tickets_allowed(event, order),
        shown_fees,
    )


def mail_lines(view: OrderView, currency: str) -> list[str]:
    """The lines the buyer's mails list: the positions not canceled, then the fees."""
    lines = [line_text(p, currency) for p in view.positions if not p["canceled"]]
    return lines + [f"{f['label']}: {f['value']} {currency}" for f in view.fees]


def line_text(position: dict[str, Any], currency: str) -> str:
    """One position as the buyer's mails list it: name, date (a series), price."""
    date = f" ({position['date']})" if position.get("date") else ""
    return f"{position['name']}{date}: {position['price']} {currency}"


async def cancel(session: AsyncSession, event: Event, order: Order) -> None:
    """Cancels the (locked) order when the event lets buyers do so; 400 otherwise."""
    if not may_cancel(event, order):
        raise APIError(400, "This order cannot be canceled here. Please contact the organizer.")
    actions.mark_canceled(session, order, CancelIn())
    await membership_rules.cancel_granted(session, order)
    order.last_modified = utcnow()
    await session.flush()
    await voucher_usage.sync_order(session, order)
    await notify_all(
        session, [CANCELED], organizer_id=event.organizer_id, event_id=event.id, code=order.code
    )


async def ticket_pdf(
    session: AsyncSession, store: Any, event: Event, order: Order, position_id: int | None
) -> bytes | None:
    """The PDF of the order's tickets (or of one position), drawn now; None when there is
    no such ticket."""
    wanted = [
        p.id
        for p in sorted(order.positions, key=lambda p: p.positionid)
        if not p.canceled and (position_id is None or p.id == position_id)
    ]
    if not wanted:
        return None
    batch = await load_batch(session, event, wanted)
    from admit.tickets.downloads import position_refusal

    ids = [
        pid
        for pid in wanted
        if pid in batch.positions and position_refusal(batch.positions[pid]) is None
    ]
    if not ids:
        return None
    pages = plan(batch, [Part(pid) for pid in ids])
    out = io.BytesIO()
    await render_pages(store, batch, pages, out, title=f"Tickets {order.code}")
    return out.getvalue()
