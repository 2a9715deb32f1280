"""When invoices are issued without being asked for: the order life-cycle hooks.

``invoice_generate`` (an event setting, the reference's values): ``"True"`` issues the invoice
when the order is placed, ``"paid"`` when it becomes paid, ``"user"`` when the buyer asks (the
shop), ``"admin"`` only when the organizer asks (the API's ``create_invoice``), ``"False"``
never by itself. The API's ``create_invoice`` works in every mode. An order waiting for
approval gets no invoice when placed; with ``"True"`` it gets it when approved.

Canceling an order (also through a refund that cancels it) issues the cancellation of each of
its invoices; an order canceled with a cancellation fee keeps living with the fee, so it also
gets a new invoice of the fee when it had one before.

Changing an order where invoices are issued on their own (``"True"``, ``"paid"``) and the
order has an invoice in force: when the change wants it (the change API's ``reissue_invoice``,
default true; a position's PATCH or cancel only with ``invoice_reissue_after_modify``) and
the order's lines now differ from the invoice's (a price, a product, a fee, an attendee's
name), the invoice gets its cancellation and the order a new invoice. An invoice is never
edited.

The hooks say when they have nothing to do (``idle``, from the event's settings in memory), so
order creation's fast lane keeps taking the orders of events that do not invoice on their own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.invoices import content, loaded, service, writing
from admit.invoices.content import LineData
from admit.invoices.settings_keys import setting
from admit.kit.http.transaction import before_commit
from admit.models import Event, Invoice, Item, Order, OrderPosition
from admit.orders import hooks

ON_PLACED = ("True",)
ON_PAID = ("True", "paid")


async def _event(session: AsyncSession, order: Order) -> Event | None:
    return await session.get(Event, order.event_id)


async def on_placed(
    session: AsyncSession, order: Order, _positions: Sequence[OrderPosition]
) -> None:
    event = await _event(session, order)
    if event is None or setting(event, "invoice_generate") not in ON_PLACED:
        return
    if order.require_approval:
        return
    _issue_before_commit(session, event, order)


async def on_approved(
    session: AsyncSession, order: Order, _positions: Sequence[OrderPosition]
) -> None:
    """An order placed while it waited for approval gets the invoice it did not get when
    placed, once approved (as the reference does)."""
    event = await _event(session, order)
    if event is None or setting(event, "invoice_generate") not in ON_PLACED:
        return
    _issue_before_commit(session, event, order)


async def on_paid(session: AsyncSession, order: Order, _positions: Sequence[OrderPosition]) -> None:
    event = await _event(session, order)
    if event is None or setting(event, "invoice_generate") not in ON_PAID:
        return
    _issue_before_commit(session, event, order)


def _issue_before_commit(session: AsyncSession, event: Event, order: Order) -> None:
    """Issues the order's invoice right before the commit, not now: the number's counter row
    stays locked from taking the number to the commit, so it is taken as late as possible and
    concurrent payments wait for each other only that long (as quota locks are taken last)."""
    session.info.setdefault("invoices_to_issue", {})[order.id] = (event, order)
    before_commit(session, "invoices_to_issue", _issue_pending)


async def _issue_pending(session: AsyncSession) -> None:
    """Plans the invoices now and writes them among the last statements (``hot_locks``):
    the reading happens before the sales ledger locks its totals row, and only the writing
    (which takes the counter's lock) stands between those locks and the commit."""
    pending: dict[int, tuple[Event, Order]] = session.info.pop("invoices_to_issue", {})
    plans: list[writing.Plan] = session.info.setdefault("invoices_to_write", [])
    for event, order in pending.values():
        if loaded.is_loaded(order):
            # Lines from memory; the write asks whether an invoice is in force and fills in
            # the organizer's name (``loaded``): no query here.
            lines = await loaded.lines(session, event, order)
            if service.qualifies(order, lines):
                plan = await service.planned(session, event, order, lines, organizer_name="")
                plans.append(plan)
            continue
        # One query tells the lines, whether an invoice is in force and the organizer's name.
        found = await service.read(session, event, order)
        if not found.invoiced and service.qualifies(order, found.lines):
            lines, name = found.lines, found.organizer_name
            plans.append(await service.planned(session, event, order, lines, organizer_name=name))
    before_commit(session, "invoices_to_write", _write_planned, hot_locks=True)


async def _write_planned(session: AsyncSession) -> None:
    for plan in session.info.pop("invoices_to_write", []):
        await writing.write_unless_invoiced(session, plan)


async def on_canceled(
    session: AsyncSession, order: Order, _positions: Sequence[OrderPosition]
) -> None:
    event = await _event(session, order)
    if event is None:
        return
    canceled = await service.cancel_all(session, event, order)
    if not canceled or order.status == "c":
        return
    # Canceled keeping a fee: the order lives on with the fee, invoiced anew.
    lines = await service.order_lines(session, event, order)
    if service.qualifies(order, lines):
        await service.issue(session, event, order, lines)


_COMPARED = (
    "description gross_value tax_value tax_rate tax_code item_id variation_id subevent_id "
    "fee_type attendee_name"
).split()


def _same_recipient(invoice: Invoice, order: Order) -> bool:
    """The invoice names the order's invoice address as it is now."""
    wanted = content.recipient(order.invoice_address)
    return all(getattr(invoice, key) == value for key, value in wanted.items())


def _same_lines(invoice: Invoice, lines: Sequence[LineData]) -> bool:
    def key(line: Any) -> tuple[Any, ...]:
        return tuple(getattr(line, name) or None for name in _COMPARED)

    return [key(line) for line in invoice.lines] == [key(line) for line in lines]


def _reissue_wanted(session: AsyncSession, event: Event, order: Order) -> bool:
    """The change API says (its ``reissue_invoice``, default true, as the reference's);
    any other change (a position's PATCH or cancel) reissues only with the event's
    ``invoice_reissue_after_modify``."""
    asked = hooks.reissue_invoice_asked(session, order)
    if asked is not None:
        return asked
    return bool(setting(event, "invoice_reissue_after_modify"))


async def on_changed(
    session: AsyncSession, order: Order, _positions: Sequence[OrderPosition]
) -> None:
    event = await _event(session, order)
    if event is None or setting(event, "invoice_generate") not in ON_PAID:
        return
    if not _reissue_wanted(session, event, order):
        return
    if order.status == "c":
        return  # canceled: the cancellation hook issued what it needs
    active = await service.active_invoices(session, order.id)
    if not active:
        return
    await session.flush()
    lines = await service.order_lines(session, event, order)
    if len(active) == 1 and _same_lines(active[0], lines) and _same_recipient(active[0], order):
        return
    # Issuers of one order are serialised on its row (a position PATCH does not hold it).
    await session.execute(select(Order.id).where(Order.id == order.id).with_for_update())
    for invoice in await service.active_invoices(session, order.id):
        await service.cancel(session, event, order, invoice)
    if service.qualifies(order, lines):
        await service.issue(session, event, order, lines)


def _placed_idle(event: Event, _items: Sequence[Item], _row: Mapping[str, Any]) -> bool:
    return setting(event, "invoice_generate") not in ON_PLACED


def _paid_idle(event: Event, _items: Sequence[Item], _row: Mapping[str, Any]) -> bool:
    return setting(event, "invoice_generate") not in ON_PAID


hooks.register(hooks.order_placed_hooks, on_placed, idle=_placed_idle)
hooks.register(hooks.order_paid_hooks, on_paid, idle=_paid_idle)
hooks.register(hooks.order_approved_hooks, on_approved)
if on_canceled not in hooks.order_canceled_hooks:
    hooks.order_canceled_hooks.append(on_canceled)
if on_changed not in hooks.order_changed_hooks:
    hooks.order_changed_hooks.append(on_changed)
