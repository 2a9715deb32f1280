"""Buyers change their invoice address on the order page, under the same rules as their
attendee details (``order_details.refusal``: a live order, before the event's modification
deadline, not after an entry check-in unless allowed), checked as at checkout
(``address.check``: the event's required fields, a plausible VAT ID).

A placed order's prices do not change here: an address that would change how a tax rule of the
order treats the sale (reverse charge, a custom rule for the country or for businesses) is
refused with a sentence sending the buyer to the organizer, who can change the order. An
accepted change is stored as the API's order PATCH stores it (``service.event.order.modified``)
and runs the order-changed hooks: where the event reissues invoices after a change
(``invoice_reissue_after_modify``), the invoice in force is cancelled and issued anew with the
new address.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.taxes.rules import Buyer, applicable
from admit.db import utcnow
from admit.kit.http.errors import FieldErrors
from admit.models import Event, Order, TaxRule
from admit.notifications.notify import notify_all
from admit.orders import hooks
from admit.shop import address
from admit.shop.order_details import MODIFIED
from admit.web.forms import Pairs

TAXES_WOULD_CHANGE = (
    "This address would change the taxes of your order, so it can not be changed here. "
    "Please contact the organizer."
)
NOTHING_CHANGED = "The invoice address is unchanged."
# The address's fields as the form names them (``ia_`` and the stored key).
FORM_FIELDS = (*address.FIELDS, "is_business")


def offered(event: Event) -> bool:
    """The order page shows the form: the event asks buyers for an invoice address."""
    return address.asked(event)["asked"]


def current(order: Order) -> dict[str, list[str]]:
    """The form filled with the order's address."""
    stored = order.invoice_address or {}
    kept = {f"ia_{key}": [str(stored.get(key) or "")] for key in address.FIELDS}
    kept["ia_is_business"] = ["yes"] if stored.get("is_business") else []
    return kept


async def _rules(session: AsyncSession, order: Order) -> list[TaxRule]:
    ids = {p.tax_rule_id for p in order.positions if not p.canceled}
    ids |= {f.tax_rule_id for f in order.fees if not f.canceled}
    ids.discard(None)
    if not ids:
        return []
    return list(await session.scalars(select(TaxRule).where(TaxRule.id.in_(ids))))


def _field_errors(exc: FieldErrors) -> dict[str, str]:
    """The checkout's ``invoice_address`` errors, by the form's field names."""
    found = dict(exc.errors).get("invoice_address") or {}
    if not isinstance(found, dict):
        return {"ia_": " ".join(str(m) for m in found)}
    return {
        (f"ia_{key}" if key in FORM_FIELDS else "ia_"): " ".join(str(m) for m in messages)
        for key, messages in found.items()
    }


async def change(
    session: AsyncSession, event: Event, order: Order, pairs: Pairs
) -> tuple[dict[str, str], str | None]:
    """Checks the posted address and, when it holds, stores it. Returns the errors by field
    (``ia_`` for the address as a whole) and a sentence for the page (None when stored)."""
    try:
        stored = address.check(event, address.from_form(pairs))
    except FieldErrors as exc:
        return _field_errors(exc), None
    if (stored or None) == (order.invoice_address or None):
        return {}, NOTHING_CHANGED
    before, after = Buyer.of(order.invoice_address), Buyer.of(stored)
    for rule in await _rules(session, order):
        if applicable(rule, before) != applicable(rule, after):
            return {"ia_": TAXES_WOULD_CHANGE}, None
    order.invoice_address = stored
    order.last_modified = utcnow()
    hooks.changed(session, order)  # the invoice in force names the old address
    await session.flush()
    await notify_all(
        session, [MODIFIED], organizer_id=event.organizer_id, event_id=event.id, code=order.code
    )
    return {}, None
