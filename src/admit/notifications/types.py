"""The webhook action types Admit emits (the spec's core types), in canonical form.

Integrations written for the reference send ``pretix.`` where Admit says ``service.``: input
accepts both (:func:`canonical`), storage and payloads use ``service.``.
"""

from __future__ import annotations

ORDER_ACTIONS = (
    "service.event.order.placed",
    "service.event.order.placed.require_approval",
    "service.event.order.paid",
    "service.event.order.canceled",
    "service.event.order.reactivated",
    "service.event.order.expired",
    "service.event.order.expirychanged",
    "service.event.order.modified",
    "service.event.order.contact.changed",
    "service.event.order.deleted",
    "service.event.order.approved",
    "service.event.order.denied",
    "service.event.order.payment.confirmed",
)
# ``service.event.order.changed.*``: one type per kind of change (positions, fees, ...).
ORDER_CHANGED_PREFIX = "service.event.order.changed."
REFUND_ACTIONS = (
    "service.event.order.refund.created",
    "service.event.order.refund.created.externally",
    "service.event.order.refund.requested",
    "service.event.order.refund.done",
    "service.event.order.refund.canceled",
    "service.event.order.refund.failed",
)
WAITINGLIST_ACTIONS = (
    "service.event.orders.waitinglist.added",
    "service.event.orders.waitinglist.changed",
    "service.event.orders.waitinglist.deleted",
    "service.event.orders.waitinglist.voucher_assigned",
)
CHECKIN_ACTIONS = ("service.event.checkin", "service.event.checkin.reverted")
EVENT_ACTIONS = (
    "service.event.added",
    "service.event.changed",
    "service.event.deleted",
    "service.event.live.activated",
    "service.event.live.deactivated",
    "service.event.testmode.activated",
    "service.event.testmode.deactivated",
)
# ``service.event.item.*``: items (added, changed, deleted, ...).
ITEM_PREFIX = "service.event.item."
GIFTCARD_ACTIONS = ("service.giftcards.created", "service.giftcards.modified")
# ``service.giftcards.transaction.*``: one type per kind of transaction.
GIFTCARD_TRANSACTION_PREFIX = "service.giftcards.transaction."
VOUCHER_ACTIONS = ("service.voucher.added", "service.voucher.changed", "service.voucher.deleted")
SUBEVENT_ACTIONS = (
    "service.subevent.added",
    "service.subevent.changed",
    "service.subevent.deleted",
)
CUSTOMER_ACTIONS = (
    "service.customer.created",
    "service.customer.changed",
    "service.customer.anonymized",
)

# Every exact type, and the families a trailing ``.*`` names.
ACTION_TYPES: tuple[str, ...] = (
    *ORDER_ACTIONS,
    *REFUND_ACTIONS,
    *WAITINGLIST_ACTIONS,
    *CHECKIN_ACTIONS,
    *EVENT_ACTIONS,
    *GIFTCARD_ACTIONS,
    *VOUCHER_ACTIONS,
    *SUBEVENT_ACTIONS,
    *CUSTOMER_ACTIONS,
)
PREFIXES: tuple[str, ...] = (ORDER_CHANGED_PREFIX, ITEM_PREFIX, GIFTCARD_TRANSACTION_PREFIX)


def canonical(action: str) -> str:
    """``pretix.…`` is accepted as an alias of ``service.…``."""
    return "service." + action.removeprefix("pretix.") if action.startswith("pretix.") else action


def is_known(action: str) -> bool:
    """An exact core type, or a member of one of the ``.*`` families."""
    return action in ACTION_TYPES or any(
        action.startswith(p) and len(action) > len(p) for p in PREFIXES
    )
