"""Recording what webhooks announce: one ``notifications`` row per operation, written in the
transaction of the operation itself (a transactional outbox), so a rolled-back or refused
change leaves no row and a committed one cannot lose its notification. The webhook fan-out
reads new rows later and delivers ``{notification_id, organizer, event, code, action,
**payload}``.

The payload is the trigger only, as the reference's: receivers fetch details through the API.
It carries the id of what the type is about and nothing else:

- order types: ``code``;
- waiting list types: ``waitinglistentry`` (``voucher_assigned`` also ``voucher``);
- item types: ``item``; quota types: ``quota``; subevent types: ``subevent``; voucher
  types: ``voucher``;
- gift card types: ``giftcard``; customer types: ``customer`` (its ``identifier``, what the
  API addresses customers by);
- event types: nothing, the event is the row's ``event_id``.

The organizer and event slugs are not stored: the fan-out joins them from ``organizer_id``
and ``event_id`` when it builds the body (slugs can change; ids cannot, and a join per batch
is cheaper than a lookup per write). The one exception is ``service.event.deleted``: the row
cannot reference an event that is gone (``event_id`` would cascade the row away), so it has
``event_id`` NULL and the deleted event's slug as ``event`` in its payload.

Which operation records which type (the producers, see ``PRODUCERS`` in
``tests/notifications/test_coverage.py`` for the test of each):

- orders: create -> ``placed`` (+ ``placed.require_approval`` when it needs approval, + ``paid``
  and ``payment.confirmed`` when created paid or free); ``mark_paid`` -> ``payment.confirmed``
  (when a payment was confirmed) and ``paid``; ``approve`` -> ``approved`` (+ ``paid`` and
  ``payment.confirmed`` for a free order); ``deny`` -> ``denied``; ``mark_canceled`` ->
  ``canceled`` (also when a cancellation fee is kept); ``reactivate`` -> ``reactivated``;
  ``mark_expired`` -> ``expired``; ``extend`` -> ``expirychanged``; PATCH -> ``contact.changed``
  (email, phone), ``expirychanged`` (expires), ``modified`` (any other field), each only when
  the value changed; DELETE (test mode) -> ``deleted``; ``regenerate_secrets`` ->
  ``changed.secret``; ``mark_pending`` records nothing (no core type for "unpaid");
- order positions: PATCH -> ``modified`` (attendee data, answers), ``changed.secret``,
  ``changed.validity`` (valid_from / valid_until), ``changed.blocked``, each only when changed;
  DELETE -> ``changed.cancel``;
- events: create / clone -> ``added``; PUT / PATCH -> ``changed``, and ``live.activated`` /
  ``live.deactivated`` / ``testmode.activated`` / ``testmode.deactivated`` when the flag
  flips; DELETE -> ``deleted``;
- items: create -> ``item.added``; PUT / PATCH -> ``item.changed``; DELETE ->
  ``item.deleted``; a write to a variation, add-on or bundle -> ``item.changed`` of its item;
- quotas (Admit's own types): create -> ``quota.added``; PUT / PATCH -> ``quota.changed``;
  DELETE -> ``quota.deleted``; payload ``quota``;
- vouchers: create and ``batch_create`` (one per voucher) -> ``added``; PUT / PATCH ->
  ``changed``; DELETE -> ``deleted``;
- gift cards: create (also issued for a paid order) -> ``created``; PUT / PATCH ->
  ``modified``; ``transact`` -> ``transaction.manual``;
- subevents, waiting list entries: create / PUT / PATCH / DELETE -> ``added`` / ``changed`` /
  ``deleted``; ``send_voucher`` and the automatic assignment -> ``voucher_assigned``;
- customers: create -> ``created``; PUT / PATCH -> ``changed``; ``anonymize`` -> ``anonymized``;
- check-in: ``checkin.reverted`` on annul; a successful check-in is no row here, the
  ``checkins`` table is its outbox (the redeem fast path writes nothing more).

Not produced: ``refund.requested`` (Admit has no shop in which a buyer asks for a refund).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Insert, insert
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.kit.http.context import ACTOR
from admit.models import Notification
from admit.notifications import types

# The members of ``service.event.order.changed.*`` Admit records.
ORDER_CHANGED_CANCEL = types.ORDER_CHANGED_PREFIX + "cancel"  # a position was canceled
ORDER_CHANGED_SECRET = types.ORDER_CHANGED_PREFIX + "secret"  # ticket secret(s) changed
ORDER_CHANGED_VALIDITY = types.ORDER_CHANGED_PREFIX + "validity"  # valid_from / valid_until
ORDER_CHANGED_BLOCKED = types.ORDER_CHANGED_PREFIX + "blocked"  # a position's blocks
# Order changes (``orders/change.py``) record these besides: the reference's names.
ORDER_CHANGE_KINDS = (
    "item", "subevent", "seat", "price", "tax_rule", "add", "split", "split_from", "feevalue",
    "cancelfee", "recalculate_taxes",
)  # fmt: skip
ORDER_CHANGED_ACTIONS = (
    ORDER_CHANGED_CANCEL,
    ORDER_CHANGED_SECRET,
    ORDER_CHANGED_VALIDITY,
    ORDER_CHANGED_BLOCKED,
    *(types.ORDER_CHANGED_PREFIX + kind for kind in ORDER_CHANGE_KINDS),
)
ITEM_ADDED = types.ITEM_PREFIX + "added"
ITEM_CHANGED = types.ITEM_PREFIX + "changed"
ITEM_DELETED = types.ITEM_PREFIX + "deleted"
ITEM_ACTIONS = (ITEM_ADDED, ITEM_CHANGED, ITEM_DELETED)
# ``transact`` through the API: a transaction someone booked by hand.
GIFTCARD_TRANSACTION_MANUAL = types.GIFTCARD_TRANSACTION_PREFIX + "manual"
GIFTCARD_TRANSACTION_ACTIONS = (GIFTCARD_TRANSACTION_MANUAL,)

# Keys the fan-out sets itself; a payload must not shadow them.
RESERVED = frozenset({"notification_id", "organizer", "action"})


def _row(
    action: str,
    organizer_id: int,
    event_id: int | None,
    payload: dict[str, Any],
    actor: tuple[str, int] | None = None,
) -> dict[str, Any]:
    # A wrong type or payload is a programming error: fail the request (and its transaction)
    # rather than record something no webhook can subscribe to.
    if not types.is_known(action):
        raise ValueError(f"unknown notification type {action!r}")
    clash = set(payload) & RESERVED
    if event_id is not None and "event" in payload:
        clash.add("event")
    if clash:
        raise ValueError(f"payload keys {sorted(clash)} are set by the fan-out")
    return {
        "organizer_id": organizer_id,
        "event_id": event_id,
        "action": action,
        "payload": payload,
        "created": utcnow(),
        "actor_kind": actor[0] if actor else None,
        "actor_id": actor[1] if actor else None,
    }


def actor_of(session: AsyncSession) -> tuple[str, int] | None:
    """Whoever the session's request acts for (set when it was authenticated), recorded with
    each row so the object's history can name them."""
    return session.info.get(ACTOR)


async def notify(
    session: AsyncSession,
    action: str,
    *,
    organizer_id: int,
    event_id: int | None = None,
    **payload: Any,
) -> None:
    """Records ``action`` in the session's transaction: committed with the change or not at
    all. One INSERT, sent at once (no ORM unit of work, so hot paths pay one statement)."""
    await notify_all(session, (action,), organizer_id=organizer_id, event_id=event_id, **payload)


async def notify_in_event(ctx: Any, action: str, **payload: Any) -> None:
    """:func:`notify` for a request scoped to one event (an ``EventContext``)."""
    await notify(
        ctx.session, action, organizer_id=ctx.organizer_id, event_id=ctx.event.id, **payload
    )


async def notify_all(
    session: AsyncSession,
    actions: Sequence[str],
    *,
    organizer_id: int,
    event_id: int | None = None,
    **payload: Any,
) -> None:
    """Several types about one object (an order created paid is placed, paid and has a
    confirmed payment), in one statement; nothing when ``actions`` is empty."""
    actor = actor_of(session)
    rows = [_row(a, organizer_id, event_id, dict(payload), actor) for a in actions]
    if rows:
        await session.execute(insert(Notification), rows)


def notification_insert(
    session: AsyncSession,
    action: str,
    *,
    organizer_id: int,
    event_id: int | None = None,
    **payload: Any,
) -> Insert:
    """The INSERT of one notification as a statement, for hot paths that fold it into one of
    their own (a data-modifying CTE on PostgreSQL) to save a round trip; ``session`` names who
    acts, as :func:`notify` records it."""
    row = _row(action, organizer_id, event_id, payload, actor_of(session))
    return insert(Notification).values(**row)


async def notify_each(
    session: AsyncSession,
    action: str,
    payloads: Iterable[dict[str, Any]],
    *,
    organizer_id: int,
    event_id: int | None = None,
) -> None:
    """One ``action`` per payload (batch operations: one notification per object), in one
    statement."""
    actor = actor_of(session)
    rows = [_row(action, organizer_id, event_id, p, actor) for p in payloads]
    if rows:
        await session.execute(insert(Notification), rows)
